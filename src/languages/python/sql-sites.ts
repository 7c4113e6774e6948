// One SQL site from one Python expression: the text through strings.ts, the
// statement facts from src/sql with psycopg's placeholders, every span mapped
// back to the host file.
import type { SqlAnalysis } from '../../sql/index.ts';
import { analyzeHostText as analyzeSharedHostText } from '../host-text.ts';
import type { Driver } from '../../model/index.ts';
import type { PlaceholderStyle } from './params.ts';
import type { HostText } from './strings.ts';

/** Methods that send SQL given as their first argument (or `query=`). */
export const EXECUTE_METHODS = new Set(['execute', 'executemany', 'copy', 'stream', 'copy_expert']);
/** Methods that run a statement we cannot read (no SQL argument). */
export const OPAQUE_METHODS = new Set(['copy_from', 'copy_to', 'callproc']);
/** psycopg2.extras helpers: (cursor, sql, ...). */
export const EXTRAS_FUNCTIONS = new Set(['psycopg2.extras.execute_values', 'psycopg2.extras.execute_batch']);

/** Methods of each driver that send SQL given as their first argument. */
const SQLALCHEMY_METHODS = new Set(['execute', 'exec_driver_sql', 'scalars', 'scalar', 'stream', 'stream_scalars']);
const ASYNCPG_METHODS = new Set(['execute', 'executemany', 'fetch', 'fetchrow', 'fetchval', 'prepare', 'cursor']);
const ASYNCPG_POOL_METHODS = new Set(['execute', 'executemany', 'fetch', 'fetchrow', 'fetchval']);
const DJANGO_CURSOR_METHODS = new Set(['execute', 'executemany']);

/** Every method name that may send SQL, for receivers of unknown origin. */
export const SQL_METHOD_NAMES = new Set([...EXECUTE_METHODS, ...SQLALCHEMY_METHODS, ...ASYNCPG_METHODS]);
/** Methods that end or switch a transaction. */
export const CONTROL_METHODS = new Set(['commit', 'rollback', 'cursor', 'set_autocommit', 'set_session', 'close', 'delete', 'query']);

export function sqlMethodOf(driver: Driver, via: 'conn' | 'cursor'): Set<string> {
  if (driver === 'asyncpg') return ASYNCPG_METHODS;
  if (driver === 'django') return DJANGO_CURSOR_METHODS;
  if (driver === 'sqlalchemy' && via === 'conn') return SQLALCHEMY_METHODS;
  return EXECUTE_METHODS;
}

/** Methods of a pool object that run SQL on any of its connections. */
export function poolSqlMethod(driver: Driver, method: string): boolean {
  if (driver === 'asyncpg') return ASYNCPG_POOL_METHODS.has(method);
  if (driver === 'sqlalchemy') return method === 'execute';
  return false;
}

/**
 * The host placeholders of SQL sent this way: asyncpg's native $N,
 * SQLAlchemy text()'s :name, psycopg's (and psycopg2's, Django's, and
 * exec_driver_sql's on those DBAPIs) %s and %(name)s.
 */
export function placeholderStyle(driver: Driver, method: string, host: HostText): PlaceholderStyle {
  if (host.colonParams) return 'colon';
  if (driver === 'asyncpg') return 'dollar';
  // A plain string to a Session or Connection: SQLAlchemy 1.4 coerces it to text() (:name), a legacy
  // Connection passes it to the DBAPI (%s) — and a psycopg connection we took for a Session is %s too.
  if (driver === 'sqlalchemy' && method === 'sqlalchemy' && !/%(\(\w+\))?s/.test(host.text) && /(^|[^:\w]):[A-Za-z_]/.test(host.text)) return 'colon';
  return 'psycopg';
}

export function analyzeHostText(host: HostText, placeholders: 'dollar' | 'psycopg' = 'psycopg'): SqlAnalysis {
  return analyzeSharedHostText(host, { placeholders });
}
