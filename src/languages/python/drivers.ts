// SQLAlchemy engines and asyncpg pools: what their constructors say about
// the connections they hand out (measured on PostgreSQL 17.10 with
// SQLAlchemy 1.4.46 + psycopg2 2.9.5 and asyncpg 0.27.0).
//
// SQLAlchemy: a Connection or Session begins a transaction at its first
// statement (autobegin) unless isolation_level="AUTOCOMMIT"; a connection
// returned to the pool is rolled back (reset on return), so an uncommitted
// session setting is undone and a committed one survives to the next
// checkout. NullPool closes every connection at checkin: nothing is reused.
//
// asyncpg: autocommit outside conn.transaction(); Pool.release() runs
// Connection.reset(): ROLLBACK when a transaction is open, then
// pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN *, RESET ALL — so custom
// settings and search_path are reset, role and session_authorization are
// not. Statements are prepared and cached (statement_cache_size=100).
import type { ConfigEntry, Maker, ReadContext } from './pool-config.ts';
import { booleanOf, keywordMap, newConfigEntry, readDict } from './pool-config.ts';
import { callParts, keyword, positional, unwrap, type Node } from './syntax.ts';

const ENGINE_MAKERS = new Set([
  'sqlalchemy.create_engine',
  'sqlalchemy.engine.create_engine',
  'sqlalchemy.ext.asyncio.create_async_engine',
  'sqlalchemy.ext.asyncio.engine.create_async_engine',
  'sqlmodel.create_engine',
]);

/** SQLAlchemy sessionmaker / async_sessionmaker / scoped_session: calling one gives a Session. */
export const SESSION_FACTORIES = new Set([
  'sqlalchemy.orm.sessionmaker',
  'sqlalchemy.orm.session.sessionmaker',
  'sqlalchemy.ext.asyncio.async_sessionmaker',
  'sqlalchemy.orm.scoped_session',
  'sqlalchemy.ext.asyncio.async_scoped_session',
]);

/** Session classes: `Session(engine)`, `AsyncSession(engine)`. */
export const SESSION_CLASSES = new Set([
  'sqlalchemy.orm.Session',
  'sqlalchemy.orm.session.Session',
  'sqlalchemy.ext.asyncio.AsyncSession',
  'sqlmodel.Session',
  'sqlmodel.ext.asyncio.session.AsyncSession',
]);

/** The asyncpg reset query on PostgreSQL (asyncpg 0.27 Connection._get_reset_query). */
export const ASYNCPG_RESET = ['SELECT pg_advisory_unlock_all()', 'CLOSE ALL', 'UNLISTEN *', 'RESET ALL'];
export const ASYNCPG_RESET_REASON =
  "asyncpg's Pool.release() runs Connection.reset(): ROLLBACK if a transaction is open, then pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN * and RESET ALL";
export const SQLALCHEMY_RESET_REASON = "SQLAlchemy's pool rolls back every connection returned to it (reset on return): committed session settings survive it";

export function otherMakerOf(qualified: string): Maker | undefined {
  if (ENGINE_MAKERS.has(qualified)) return { kind: 'pool', driver: 'sqlalchemy', name: qualified.slice(qualified.lastIndexOf('.') + 1) };
  if (qualified === 'asyncpg.create_pool' || qualified === 'asyncpg.pool.create_pool') return { kind: 'pool', driver: 'asyncpg', name: 'create_pool' };
  if (qualified === 'asyncpg.connect' || qualified === 'asyncpg.connection.connect') return { kind: 'connect', driver: 'asyncpg', name: 'connect' };
  return undefined;
}

export function readOtherConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const call = callParts(callNode, ctx.text)!;
  const args = call.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  const splat = args.some((a) => a.star === '**');
  const options = keywordMap(args);
  if (maker.driver === 'asyncpg') {
    config.autocommit = true;
    const cache = options.get('statement_cache_size');
    const size = cache ? numberOf(cache, ctx) : splat ? undefined : 100;
    if (size === 0) {
      config.preparedStatements = 'no';
      config.preparedReason = 'statement_cache_size=0';
    } else if (size !== undefined) {
      config.preparedStatements = 'yes';
      config.preparedReason = cache ? `asyncpg caches up to ${size} prepared statements per connection` : 'asyncpg prepares and caches every query (statement_cache_size defaults to 100)';
    } else {
      config.preparedReason = 'statement_cache_size is computed';
    }
    if (maker.kind === 'pool') {
      for (const [role, name] of [['configure', 'init'], ['checkout', 'setup'], ['reset', 'reset']] as const) {
        const node = options.get(name);
        if (node && unwrap(node)?.name !== 'None') entry.callbackArgs.push({ role, node });
      }
      // A reset= coroutine (asyncpg 0.30+) replaces Connection.reset(); asyncpg 0.27 has none.
      if (!options.has('reset') && !options.has('connection_class') && !splat) config.driverReset = { statements: [...ASYNCPG_RESET], reason: ASYNCPG_RESET_REASON };
    }
    return entry;
  }
  // SQLAlchemy
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
  if (!noReset && config.reuse !== 'no-reuse') config.driverReset = { statements: ['ROLLBACK'], reason: SQLALCHEMY_RESET_REASON };
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

function numberOf(node: Node, ctx: ReadContext): number | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  if (expr.name === 'Number' && /^\d+$/.test(ctx.text.slice(expr.from, expr.to))) return Number(ctx.text.slice(expr.from, expr.to));
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? numberOf(value, ctx) : undefined;
  }
  return undefined;
}

export function isolationIsAutocommit(node: Node, ctx: ReadContext): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? isolationIsAutocommit(value, ctx) : 'unknown';
  }
  const match = /^['"]([\w ]+)['"]$/.exec(ctx.text.slice(expr.from, expr.to));
  if (!match) return 'unknown';
  return match[1].toUpperCase() === 'AUTOCOMMIT';
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

/** SQLAlchemy events and the callback role they give (pool and connection events, session after_begin). */
export const SQLALCHEMY_EVENTS: Record<string, { role: 'configure' | 'checkout' | 'reset'; connParam: number; dbapi: boolean; inTransaction?: boolean }> = {
  connect: { role: 'configure', connParam: 0, dbapi: true },
  first_connect: { role: 'configure', connParam: 0, dbapi: true },
  checkout: { role: 'checkout', connParam: 0, dbapi: true },
  checkin: { role: 'reset', connParam: 0, dbapi: true },
  reset: { role: 'reset', connParam: 0, dbapi: true },
  engine_connect: { role: 'checkout', connParam: 0, dbapi: false },
  begin: { role: 'checkout', connParam: 0, dbapi: false, inTransaction: true },
  after_begin: { role: 'checkout', connParam: 2, dbapi: false, inTransaction: true },
};

export { booleanOf };
