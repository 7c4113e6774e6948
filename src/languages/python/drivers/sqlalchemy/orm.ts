// SQLAlchemy's ORM in the walk: session.query(Job)...with_for_update()
// chains and select()/update()/delete()/insert() builders are SQL at the
// chain's last call; an instance read with one is written back by the
// Session (attribute writes pending until its next flush).
import { executed } from '../../flow/scopes.ts';
import type { Conn, WalkApi } from '../../flow/types.ts';
import { isModelQuery, sqlalchemyInstanceRead, sqlalchemyStatement, writeSubquery } from './orm-sql.ts';
import { modelQuerySession } from './flask-sqlalchemy.ts';
import { heldCoreTable } from './held-tables.ts';
import { methodCall, span, unwrap, type Node } from '../../syntax.ts';
import type { DriverOrm } from '../../flow/driver-api.ts';

const BUILDER = /^sqlalchemy(\.sql|\.sql\.expression|\.future|\.dialects\.postgresql)?\.(select|update|delete|insert)$/;

export const sqlalchemyOrm: DriverOrm = {
  byDefault: true,
  readInstance(walk, expr) {
    const built = sqlalchemyInstanceRead(expr, walk.ormContext());
    return built?.returnsInstance ? { built, conn: instanceConn(walk, expr) } : undefined;
  },
  chain(walk, node, root, first, outer) {
    if (isModelQuery(root, walk.ormContext())) return outer ? 'query' : 'step';
    if (first === 'query' && root.name !== 'CallExpression') {
      const binding = walk.receiver(root, false);
      const isSession = binding?.kind === 'conn' ? binding.conn.driver === 'sqlalchemy' : binding?.kind === 'factory' && binding.scoped;
      if (!isSession) return 'none';
      if (outer) return 'query';
      return walk.text.slice(node.from, node.to).includes('.query(') && methodCall(node, walk.text)?.method !== 'query' ? 'step' : 'none';
    }
    if (root.name === 'CallExpression' && BUILDER.test(walk.file.qualify(root.firstChild!) ?? '')) return 'step';
    return undefined;
  },
  subquery: writeSubquery,
  heldModel: heldCoreTable,
  query(walk, node) {
    const built = sqlalchemyStatement(node, walk.ormContext());
    const conn = instanceConn(walk, node);
    if (built && built.host.text) walk.builtSite(built, conn);
    else if (conn) executed(conn, span(node));
  },
};

/** The Session a read ran on: the receiver at the root of its chain (through a Result kept in a name, `result.scalar_one()`). */
function instanceConn(walk: WalkApi, expr: Node): Conn | undefined {
  let current: Node | undefined = expr;
  let followed = false;
  for (let k = 0; current && k < 12; k++) {
    const method = methodCall(current, walk.text);
    if (!method) return undefined;
    const object = unwrap(method.object);
    if (object && isModelQuery(object, walk.ormContext())) return modelQuerySession(walk);
    if (object && object.name !== 'CallExpression') {
      const binding = walk.receiver(object, false);
      if (binding?.kind === 'factory' && binding.scoped) return walk.sessionOf(binding);
      if (binding?.kind === 'conn') return binding.conn;
      const made = !followed && object.name === 'VariableName' ? unwrap(walk.ormContext().valueOf(object)) : undefined;
      if (made?.name !== 'CallExpression') return undefined;
      followed = true;
      current = made;
      continue;
    }
    current = object;
  }
  return undefined;
}
