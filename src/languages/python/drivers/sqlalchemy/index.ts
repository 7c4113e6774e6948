// SQLAlchemy (and SQLModel on top of it): engines and what their
// constructors say about the connections they hand out. A Connection or
// Session begins a transaction at its first statement (autobegin) unless
// isolation_level="AUTOCOMMIT"; a connection returned to the pool is rolled
// back (reset on return), so an uncommitted session setting is undone and a
// committed one survives to the next checkout. NullPool closes every
// connection at checkin: nothing is reused. Measured on PostgreSQL 17.10
// with SQLAlchemy 1.4.46 + psycopg2 2.9.5.
import { readDict } from '../../flow/config.ts';
import type { Binding, Conn, ReadContext, WalkApi } from '../../flow/types.ts';
import { keyword, type CallParts, type Node } from '../../syntax.ts';
import { readConfig } from './engines.ts';
import { aliasExtensions, extensionAttribute, extensionMethod, FLASK_EXTENSION, FLASK_MAKERS, readExtensionConfig } from './flask-sqlalchemy.ts';
import type { PythonDriver } from '../../flow/driver-api.ts';
import { readListeners } from './events.ts';
import { sqlalchemyOrm } from './orm.ts';
import { connectionCall } from './calls.ts';
import { callBinding, importedBinding, isolationIsAutocommit, staticBinding } from './sessions.ts';

const ENGINE_MAKERS = [
  'sqlalchemy.create_engine',
  'sqlalchemy.engine.create_engine',
  'sqlalchemy.ext.asyncio.create_async_engine',
  'sqlalchemy.ext.asyncio.engine.create_async_engine',
  'sqlmodel.create_engine',
];

/** Methods of a Connection or Session that send SQL given as their first argument. */
const METHODS = new Set(['execute', 'exec_driver_sql', 'scalars', 'scalar', 'stream', 'stream_scalars']);

const SESSION = { origin: 'sa.session', exitEnds: 'rollback' } as const;

export const sqlalchemy: PythonDriver = {
  name: 'sqlalchemy',
  // A file that imports SQLAlchemy talks to it (psycopg2 or asyncpg are then its DBAPI, or imported for their errors).
  modules: ['sqlalchemy', 'sqlmodel'],
  handedIn: SESSION,
  sessions: SESSION,
  makers: [
    ...ENGINE_MAKERS.map((path) => ({ path, kind: 'pool' as const, name: path.slice(path.lastIndexOf('.') + 1) })),
    ...FLASK_MAKERS.map((path) => ({ path, kind: 'pool' as const, name: FLASK_EXTENSION })),
  ],
  readConfig: (call, maker, ctx) => (maker.name === FLASK_EXTENSION ? readExtensionConfig(call, maker, ctx) : readConfig(call, maker, ctx)),
  attribute: (walk, binding, attribute) => (binding.kind === 'pool' ? extensionAttribute(binding, attribute) : undefined),
  annotations: {
    'sqlalchemy.engine.Engine': 'pool',
    'sqlalchemy.Engine': 'pool',
    'sqlalchemy.ext.asyncio.AsyncEngine': 'pool',
    'sqlalchemy.orm.Session': 'conn',
    'sqlalchemy.orm.session.Session': 'conn',
    'sqlalchemy.ext.asyncio.AsyncSession': 'conn',
    'sqlalchemy.engine.Connection': 'conn',
    'sqlalchemy.Connection': 'conn',
    'sqlalchemy.ext.asyncio.AsyncConnection': 'conn',
    'sqlmodel.Session': 'conn',
    'sqlmodel.ext.asyncio.session.AsyncSession': 'conn',
  },
  // Engines across the project, for Sessions handed in as parameters. Flask-SQLAlchemy's SQLAlchemy(app) and
  // engine_from_config() make engines from options the reader does not see: a project that uses them is not all read.
  projectPools: { mentions: /\bcreate(_async)?_engine\b/, elsewhere: /\b(SQLAlchemy\s*\(|(async_)?engine_from_config\b|create_mock_engine\b)/ },
  staticBinding,
  importedBinding,
  callBinding,
  checkouts: [
    { method: 'connect', origin: 'sa.connect', exitEnds: 'rollback' },
    { method: 'begin', origin: 'sa.connect', exitEnds: 'rollback' },
    // The DBAPI connection under the pool: its own implicit transaction, nothing rolls it back.
    { method: 'raw_connection', origin: 'sa.raw', autocommit: false },
  ],
  poolMethod(walk, pool, method, call) {
    if (method !== 'execution_options') return extensionMethod(walk, pool, method);
    const level = keyword(call.args, 'isolation_level');
    return { ...pool, autocommit: level ? isolationIsAutocommit(level, walk.file.readContext) : pool.autocommit };
  },
  factoryMethod(walk, factory, method, call) {
    // SessionLocal.begin(): a new Session inside a transaction (the `with` opens it); scoped.connection() is the scoped Session's.
    if (method === 'begin') return { kind: 'conn', conn: walk.sessionOf({ ...factory, scoped: false }) };
    if (factory.scoped && method === 'connection') return sessionMethod(walk, walk.sessionOf(factory), method, call);
    return undefined;
  },
  connectionMethod: sessionMethod,
  transactionBlocks: [
    { method: 'begin', onlyInItsFiles: true, onNewConnection: true },
    { method: 'begin_nested', onlyInItsFiles: true },
  ],
  sqlMethods: { connection: METHODS, pool: new Set(['execute']) },
  runsSqlOnConnection: (conn) => conn.origin !== 'sa.raw',
  connectionCall,
  controlMethods: ['delete', 'query'],
  unitOfWork: true,
  // A plain string to a Session or Connection: SQLAlchemy 1.4 coerces it to text() (:name), a legacy
  // Connection passes it to the DBAPI (%s) — and a psycopg connection we took for a Session is %s too.
  placeholderStyle: (method, host) => (method === 'sqlalchemy' && !/%(\(\w+\))?s/.test(host.text) && /(^|[^:\w]):[A-Za-z_]/.test(host.text) ? 'colon' : undefined),
  sqlText: { boundText: ['sqlalchemy.text', 'sqlalchemy.sql.text', 'sqlalchemy.sql.expression.text', 'sqlalchemy.sql.elements.text', 'sqlmodel.text', 'sqlmodel.sql.expression.text'] },
  notWork: ['sqlalchemy', 'sqlmodel'],
  implicitForm(conn) {
    if (conn.origin === 'sa.connect') return "SQLAlchemy's transaction, begun at the connection's first statement";
    if (conn.origin === 'sa.session') return "the SQLAlchemy Session's transaction, begun at its first statement";
    if (conn.origin === 'sa.raw') return "the DBAPI connection's implicit transaction (autocommit off)";
    return undefined;
  },
  orm: sqlalchemyOrm,
  forFile: (file) => ({
    prepare: () => {
      aliasExtensions(file);
      readListeners(file);
    },
  }),
};

/** A method of a Session or Connection that gives it back (with options): execution_options(), connection(), begin(). */
function sessionMethod(walk: WalkApi, conn: Conn, method: string, call: CallParts): Binding | undefined {
  if (method === 'execution_options') {
    const level = keyword(call.args, 'isolation_level');
    if (level) conn.flow.autocommit = isolationIsAutocommit(level, walk.file.readContext);
    return { kind: 'conn', conn };
  }
  // Session.connection(execution_options={...}): the options apply when the Session procures its connection, at
  // its first statement; once a statement ran they are ignored (SQLAlchemy warns).
  if (method === 'connection' && conn.flow.dirty === false) {
    const level = sessionIsolation(call, walk.file.readContext);
    if (level) conn.flow.autocommit = isolationIsAutocommit(level, walk.file.readContext);
  }
  if (method === 'connection' || method === 'begin' || method === 'begin_nested') return { kind: 'conn', conn };
  return undefined;
}

function sessionIsolation(call: { args: Parameters<typeof keyword>[0] }, ctx: ReadContext): Node | undefined {
  const options = keyword(call.args, 'execution_options');
  const map = options ? readDict(options, ctx) : undefined;
  return map && map !== 'unknown' ? map.get('isolation_level') : undefined;
}
