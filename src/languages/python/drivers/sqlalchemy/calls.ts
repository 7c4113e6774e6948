// Calls on a SQLAlchemy Connection or Session: execute(text(...) |
// select/update/delete builders), exec_driver_sql(), scalars(),
// session.delete(obj) of an instance the code read. Its pending instance
// changes are written at commit(), flush() and its next query (autoflush).
import { ended, executed } from '../../flow/scopes.ts';
import type { Conn, WalkApi } from '../../flow/types.ts';
import { deleteInstance } from '../../orm/writer.ts';
import { sqlalchemyStatement } from './orm-sql.ts';
import { positional, span, type Arg, type Node } from '../../syntax.ts';
import { sqlArgument } from '../../flow/defs.ts';

// exec: SQLModel's Session.exec(select(...)).
const FLUSHES = new Set(['commit', 'flush', 'execute', 'exec', 'scalars', 'scalar', 'query']);
const RUNS = new Set(['execute', 'exec', 'scalars', 'scalar', 'stream', 'stream_scalars']);

/** True when the call was SQL or a session write; false when it is none of these; undefined for the DBAPI connection's calls. */
export function connectionCall(walk: WalkApi, node: Node, conn: Conn, name: string, args: Arg[], via: 'conn' | 'cursor'): boolean | undefined {
  if (via !== 'conn' || conn.origin === 'sa.raw') return undefined;
  // scoped_session.remove() (db.session.remove(), what Flask-SQLAlchemy runs at the app context's teardown): closes
  // the Session, which rolls back what it left open.
  if (name === 'remove' && conn.shared && conn.origin === 'sa.session' && args.length === 0) {
    ended(conn, 'rollback');
    return true;
  }
  if (FLUSHES.has(name)) walk.flushInstances(conn);
  if (name === 'exec_driver_sql' || (RUNS.has(name) && args.length > 0)) {
    const argument = sqlArgument(args);
    const built = argument ? sqlalchemyStatement(argument, walk.ormContext()) : undefined;
    const statements = built ? walk.builtSite(built, conn) : walk.sqlSite(argument, conn, args, name === 'exec_driver_sql' ? 'exec_driver_sql' : 'sqlalchemy');
    walk.afterStatements(conn, statements, span(node));
    return true;
  }
  if (name === 'delete' || name === 'merge' || name === 'add' || name === 'flush') {
    const target = positional(args, 0);
    const instance = name === 'delete' && target ? walk.instanceOf(target) : undefined;
    if (instance) walk.builtSite(deleteInstance(instance, target!), conn);
    else executed(conn, span(node));
    return true;
  }
  return false;
}
