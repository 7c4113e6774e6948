// SQLAlchemy engines: what create_engine()'s options say about the
// connections the pool hands out (autocommit, NullPool, reset on return, the
// DBAPI of the URL and whether it prepares statements). Flask-SQLAlchemy
// passes its engine_options to create_engine and reads them here too.
import { newConfigEntry, keywordMap, readDict } from '../../flow/config.ts';
import type { ConfigEntry, Maker, ReadContext } from '../../flow/types.ts';
import { callParts, keyword, positional, unwrap, type Node } from '../../syntax.ts';
import type { ConnectionConfig } from '../../../../model/index.ts';
import { isolationIsAutocommit } from './sessions.ts';

const RESET_REASON = "SQLAlchemy's pool rolls back every connection returned to it (reset on return): committed session settings survive it";

export function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const url = positional(args, 0) ?? keyword(args, 'url');
  readEngineOptions(entry, keywordMap(args), args.some((a) => a.star === '**'), ctx);
  const dialect = url ? dialectOf(url, ctx) : undefined;
  if (dialect) dbapiOf(entry, dialect);
  return entry;
}

/** create_engine's keyword options (`more`: some are not visible, a `**` splat). */
export function readEngineOptions(entry: ConfigEntry, options: Map<string, Node>, more: boolean, ctx: ReadContext): void {
  const { config } = entry;
  const executionOptions = options.get('execution_options');
  const executionMap = executionOptions ? readDict(executionOptions, ctx) : new Map<string, Node>();
  const isolation = options.get('isolation_level') ?? (executionMap !== 'unknown' ? executionMap.get('isolation_level') : undefined);
  if (isolation) config.autocommit = isolationIsAutocommit(isolation, ctx);
  else config.autocommit = more || executionMap === 'unknown' ? 'unknown' : false;
  const poolclass = options.get('poolclass');
  const poolName = poolclass ? ctx.qualify(unwrap(poolclass)!) ?? ctx.text.slice(poolclass.from, poolclass.to) : undefined;
  if (poolName && /(^|\.)(NullPool|AsyncAdaptedNullPool)$/.test(poolName)) config.reuse = 'no-reuse';
  const resetOnReturn = options.get('pool_reset_on_return');
  const noReset = resetOnReturn && /^(None|False)$/.test(ctx.text.slice(resetOnReturn.from, resetOnReturn.to));
  if (!noReset && config.reuse !== 'no-reuse') config.driverReset = { statements: ['ROLLBACK'], reason: RESET_REASON };
}

type Dialect = 'psycopg2' | 'psycopg' | 'asyncpg' | 'pg8000';

/** What the DBAPI of the engine's URL prepares. */
export function dbapiOf(entry: ConfigEntry, dialect: Dialect): void {
  const config: ConnectionConfig = entry.config;
  if (dialect !== 'pg8000') entry.dbapi = dialect;
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
}

/** The DBAPI of a SQLAlchemy URL literal: postgresql:// is psycopg2. */
export function dialectOf(node: Node, ctx: ReadContext): Dialect | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName') expr = unwrap(ctx.valueOf(expr));
  if (!expr || (expr.name !== 'String' && expr.name !== 'FormatString')) return undefined;
  const match = /^[rRfFuU]*['"](postgres(?:ql)?)(?:\+(\w+))?:\/\//.exec(ctx.text.slice(expr.from, expr.to));
  if (!match) return undefined;
  const dbapi = match[2] ?? 'psycopg2';
  return dbapi === 'psycopg2' || dbapi === 'psycopg' || dbapi === 'asyncpg' || dbapi === 'pg8000' ? dbapi : undefined;
}
