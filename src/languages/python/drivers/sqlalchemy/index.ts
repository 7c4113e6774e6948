// SQLAlchemy (and SQLModel on top of it): engines and what their
// constructors say about the connections they hand out. A Connection or
// Session begins a transaction at its first statement (autobegin) unless
// isolation_level="AUTOCOMMIT"; a connection returned to the pool is rolled
// back (reset on return), so an uncommitted session setting is undone and a
// committed one survives to the next checkout. NullPool closes every
// connection at checkin: nothing is reused. Measured on PostgreSQL 17.10
// with SQLAlchemy 1.4.46 + psycopg2 2.9.5.
import { newConfigEntry, keywordMap, readDict } from '../../flow/config.ts';
import type { ConfigEntry, Maker, ReadContext } from '../../flow/types.ts';
import { callParts, keyword, positional, unwrap, type Node } from '../../syntax.ts';
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

const RESET_REASON = "SQLAlchemy's pool rolls back every connection returned to it (reset on return): committed session settings survive it";

/** Methods of a Connection or Session that send SQL given as their first argument. */
const METHODS = new Set(['execute', 'exec_driver_sql', 'scalars', 'scalar', 'stream', 'stream_scalars']);

const SESSION = { origin: 'sa.session', exitEnds: 'rollback' } as const;

export const sqlalchemy: PythonDriver = {
  name: 'sqlalchemy',
  // A file that imports SQLAlchemy talks to it (psycopg2 or asyncpg are then its DBAPI, or imported for their errors).
  modules: ['sqlalchemy', 'sqlmodel'],
  handedIn: SESSION,
  sessions: SESSION,
  makers: ENGINE_MAKERS.map((path) => ({ path, kind: 'pool' as const, name: path.slice(path.lastIndexOf('.') + 1) })),
  readConfig,
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
    if (method !== 'execution_options') return undefined;
    const level = keyword(call.args, 'isolation_level');
    return { ...pool, autocommit: level ? isolationIsAutocommit(level, walk.file.readContext) : pool.autocommit };
  },
  factoryMethod(walk, factory, method) {
    // SessionLocal.begin(): a new Session inside a transaction (the `with` opens it); scoped.connection() is the scoped Session's.
    if (method === 'begin') return { kind: 'conn', conn: walk.sessionOf({ ...factory, scoped: false }) };
    if (factory.scoped && method === 'connection') return { kind: 'conn', conn: walk.sessionOf(factory) };
    return undefined;
  },
  connectionMethod(walk, conn, method, call) {
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
  },
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
  forFile: (file) => ({ prepare: () => readListeners(file) }),
};

function sessionIsolation(call: { args: Parameters<typeof keyword>[0] }, ctx: ReadContext): Node | undefined {
  const options = keyword(call.args, 'execution_options');
  const map = options ? readDict(options, ctx) : undefined;
  return map && map !== 'unknown' ? map.get('isolation_level') : undefined;
}

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  const splat = args.some((a) => a.star === '**');
  const options = keywordMap(args);
  const executionOptions = options.get('execution_options');
  const executionMap = executionOptions ? readDict(executionOptions, ctx) : new Map<string, Node>();
  const isolation = options.get('isolation_level') ?? (executionMap !== 'unknown' ? executionMap.get('isolation_level') : undefined);
  if (isolation) config.autocommit = isolationIsAutocommit(isolation, ctx);
  else config.autocommit = splat || executionMap === 'unknown' ? 'unknown' : false;
  const poolclass = options.get('poolclass');
  const poolName = poolclass ? ctx.qualify(unwrap(poolclass)!) ?? ctx.text.slice(poolclass.from, poolclass.to) : undefined;
  if (poolName && /(^|\.)(NullPool|AsyncAdaptedNullPool)$/.test(poolName)) config.reuse = 'no-reuse';
  const resetOnReturn = options.get('pool_reset_on_return');
  const noReset = resetOnReturn && /^(None|False)$/.test(ctx.text.slice(resetOnReturn.from, resetOnReturn.to));
  if (!noReset && config.reuse !== 'no-reuse') config.driverReset = { statements: ['ROLLBACK'], reason: RESET_REASON };
  const url = positional(args, 0) ?? keyword(args, 'url');
  const dialect = url ? dialectOf(url, ctx) : undefined;
  if (dialect && dialect !== 'pg8000') entry.dbapi = dialect;
  if (dialect === 'asyncpg') {
    config.preparedStatements = 'yes';
    config.preparedReason = "SQLAlchemy's asyncpg dialect caches prepared statements per connection (prepared_statement_cache_size defaults to 100)";
  } else if (dialect === 'psycopg') {
    config.preparedStatements = 'yes';
    config.preparedReason = 'psycopg prepares a query on its 6th execution, prepare_threshold defaults to 5';
  } else if (dialect === 'psycopg2' || dialect === 'pg8000') {
    config.preparedStatements = 'no';
    config.preparedReason = `${dialect} does not prepare statements`;
  }
  return entry;
}

/** The DBAPI of a SQLAlchemy URL literal: postgresql:// is psycopg2. */
function dialectOf(node: Node, ctx: ReadContext): 'psycopg2' | 'psycopg' | 'asyncpg' | 'pg8000' | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName') expr = unwrap(ctx.valueOf(expr));
  if (!expr || (expr.name !== 'String' && expr.name !== 'FormatString')) return undefined;
  const match = /^[rRfFuU]*['"](postgres(?:ql)?)(?:\+(\w+))?:\/\//.exec(ctx.text.slice(expr.from, expr.to));
  if (!match) return undefined;
  const dbapi = match[2] ?? 'psycopg2';
  return dbapi === 'psycopg2' || dbapi === 'psycopg' || dbapi === 'asyncpg' || dbapi === 'pg8000' ? dbapi : undefined;
}
