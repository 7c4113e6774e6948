// databases (encode): `Database(url, **options)` is a pool of a backend the
// URL's scheme picks. Read from its source (0.7.0, Debian's
// python3-databases, and 0.9.0): `postgresql://` and `postgres://` (and any
// other `postgresql+driver` but aiopg) go to asyncpg (`asyncpg.create_pool`
// with the options and the URL's min_size/max_size), `postgresql+aiopg://`
// to aiopg (`aiopg.create_pool`). Each `database.execute/execute_many/
// fetch_all/fetch_one/fetch_val/iterate(query, values)` runs in the task's
// connection: outside a transaction or a `database.connection()` block it
// acquires a pool connection for that one statement and releases it, in
// autocommit. `async with database.transaction():` (or `@database.
// transaction()` on an async def) acquires one connection for the task and
// runs BEGIN ... COMMIT (ROLLBACK on error); the database's own calls inside
// it run on that connection. A nested transaction is a savepoint. `async
// with database.connection() as conn:` holds one connection, with
// `conn.transaction()`. A str query is SQLAlchemy's text(): `:name`
// placeholders bound by `values={...}`.
//
// What a release does is its backend's: asyncpg's Pool.release() runs its
// reset (RESET ALL, ...: asyncpg.ts), aiopg's none, so a session setting
// leaks to the next acquire with aiopg only. A URL the file does not spell
// out is assumed to be the default, asyncpg.
import { keywordMap, newConfigEntry, numberOf } from '../flow/config.ts';
import { boundValues } from '../flow/params.ts';
import { enterTransaction } from '../flow/scopes.ts';
import type { ConfigEntry, Conn, Maker, PoolBinding, ReadContext, WalkApi } from '../flow/types.ts';
import { callParts, decoratorParts, keyword, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';
import { asyncpg } from './asyncpg.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

/** The Database's methods that run a query (the first argument or `query=`) in the task's connection. */
const QUERY_METHODS = new Set(['execute', 'execute_many', 'fetch_all', 'fetch_one', 'fetch_val', 'iterate']);

export const databases: PythonDriver = {
  name: 'databases',
  // A databases file imports SQLAlchemy for its tables and query builders: its connections are the Database's.
  modules: ['databases'],
  handedIn: { origin: 'parameter' },
  makers: [
    { path: 'databases.Database', kind: 'pool', name: 'Database' },
    { path: 'databases.core.Database', kind: 'pool', name: 'Database' },
  ],
  readConfig,
  annotations: {
    'databases.Database': 'pool',
    'databases.core.Database': 'pool',
    'databases.core.Connection': 'conn',
  },
  poolMethod(walk, pool, method) {
    // `async with database.connection() as conn`, `async with database.transaction()`: the task's connection.
    if (method !== 'connection' && method !== 'transaction') return undefined;
    const held = heldConnection(walk, pool);
    if (held) return { kind: 'conn', conn: held };
    const conn = walk.newConn('databases', { kind: 'pooled-client', configId: pool.entry?.config.id }, 'databases.connection', pool.entry, true, 'rollback');
    return { kind: 'conn', conn };
  },
  connectionMethod: (_walk, conn, method) => (method === 'transaction' ? { kind: 'conn', conn } : undefined),
  transactionBlocks: [{ method: 'transaction', onlyInItsFiles: true, onNewConnection: true }],
  poolCall,
  sqlMethods: { connection: QUERY_METHODS, cursor: QUERY_METHODS, pool: QUERY_METHODS, poolAutocommit: true },
  placeholderStyle: () => 'colon',
  boundValues(args, method, text, valueOf) {
    if (method === 'execute_many') return undefined;
    const given = keyword(args, 'values') ?? positional(args, 1);
    return given ? boundValues(given, text, valueOf) : undefined;
  },
  implicitForm: () => 'autocommit (each databases call outside a transaction acquires a connection for one statement)',
};

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  config.autocommit = true;
  const scheme = schemeOf(positional(args, 0) ?? keyword(args, 'url'), ctx);
  const options = keywordMap(args);
  const splat = args.some((a) => a.star === '**');
  if (scheme === 'postgresql+aiopg') {
    config.preparedStatements = 'no';
    config.preparedReason = "databases' aiopg backend runs psycopg2, which does not prepare statements";
    return entry;
  }
  if (scheme !== undefined && !/^postgres(ql)?(\+\w+)?$/.test(scheme)) {
    // sqlite, mysql: not PostgreSQL, and not this project's concern; nothing is assumed.
    config.preparedReason = `the ${scheme} backend`;
    return entry;
  }
  const assumed = scheme === undefined ? ' (the URL is computed: assumed a PostgreSQL URL without +aiopg, the asyncpg backend)' : '';
  const cache = options.get('statement_cache_size');
  const size = cache ? numberOf(cache, ctx) : splat ? undefined : 100;
  config.preparedStatements = size === 0 ? 'no' : size === undefined ? 'unknown' : 'yes';
  config.preparedReason = `databases' asyncpg backend: ${size === 0 ? 'statement_cache_size=0' : 'asyncpg prepares and caches its queries'}${assumed}`;
  // Options go to asyncpg.create_pool: a reset= of their own (asyncpg 0.30+) replaces asyncpg's.
  if (!options.has('reset') && !options.has('connection_class') && !splat) {
    const reset = asyncpg.assumedPool!(callNode).driverReset!;
    config.driverReset = { statements: reset.statements, reason: `databases' asyncpg backend${assumed}: ${reset.reason.replace(/ \(the pool is made elsewhere.*\)$/, '')}` };
  }
  return entry;
}

/** The URL's scheme (`postgresql+aiopg`), when the file spells it: a string, an f-string's head, a constant. */
function schemeOf(node: Node | undefined, ctx: ReadContext, depth = 0): string | undefined {
  const expr = unwrap(node);
  if (!expr || depth > 3) return undefined;
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? schemeOf(value, ctx, depth + 1) : undefined;
  }
  if (expr.name !== 'String' && expr.name !== 'FormatString') return undefined;
  return /^[rRuUfF]{0,2}(['"]{1,3})([A-Za-z][\w+.-]*):\/\//.exec(ctx.text.slice(expr.from, expr.to))?.[2]?.toLowerCase();
}

/** The connection this task holds from the same Database: an open `database.transaction()`/`connection()` block, or a decorator's. */
function heldConnection(walk: WalkApi, pool: PoolBinding): Conn | undefined {
  const open = [...walk.contexts].reverse().find((c) => c.driver === 'databases' && c.origin === 'databases.connection' && c.entry === pool.entry);
  return open ?? decoratorTransaction(walk, pool);
}

const decorated = new WeakMap<WalkApi, Conn | null>();

/** `@database.transaction()` on the walked def: the whole body runs in one transaction of the task's connection. */
function decoratorTransaction(walk: WalkApi, pool: PoolBinding): Conn | undefined {
  const known = decorated.get(walk);
  if (known !== undefined) return known && known.entry === pool.entry ? known : undefined;
  const def = walk.info.def;
  const statement = def?.parent?.name === 'DecoratedStatement' ? def.parent : undefined;
  let conn: Conn | null = null;
  for (const decorator of statement?.getChildren('Decorator') ?? []) {
    const parts = decoratorParts(decorator, walk.text);
    const name = parts?.args && parts.name.endsWith('.transaction') ? parts.name.slice(0, -'.transaction'.length) : undefined;
    const binding = name ? walk.lookup(name) : undefined;
    if (binding?.kind !== 'pool' || binding.driver !== 'databases') continue;
    conn = walk.newConn('databases', { kind: 'pooled-client', configId: binding.entry?.config.id }, 'databases.connection', binding.entry, true, 'rollback');
    enterTransaction(conn, walk.file.model.file, `\`@${parts!.name}()\``);
    break;
  }
  decorated.set(walk, conn);
  return conn && conn.entry === pool.entry ? conn : undefined;
}

/** A query of the Database itself: on the task's connection when it holds one, else on a connection of the pool for itself. */
function poolCall(walk: WalkApi, node: Node, pool: PoolBinding, method: string, args: Arg[]): boolean {
  if (!QUERY_METHODS.has(method)) return false;
  const held = heldConnection(walk, pool);
  if (!held) return false;
  const statements = walk.sqlSite(positional(args, 0) ?? keyword(args, 'query'), held, args, method);
  walk.afterStatements(held, statements, span(node));
  return true;
}
