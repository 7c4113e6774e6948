// asyncpg: autocommit outside conn.transaction(); Pool.release() runs
// Connection.reset(): ROLLBACK when a transaction is open, then
// pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN *, RESET ALL — so custom
// settings and search_path are reset, role and session_authorization are
// not. Statements are prepared and cached (statement_cache_size=100).
// Measured with asyncpg 0.27.0 on PostgreSQL 17.10.
import type { ConnectionConfig } from '../../../model/index.ts';
import { keywordMap, newConfigEntry, numberOf } from '../flow/config.ts';
import type { ConfigEntry, Maker, ReadContext } from '../flow/types.ts';
import { callParts, span, unwrap, type Node } from '../syntax.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

/** The asyncpg reset query on PostgreSQL (asyncpg 0.27 Connection._get_reset_query). */
const RESET = ['SELECT pg_advisory_unlock_all()', 'CLOSE ALL', 'UNLISTEN *', 'RESET ALL'];
const RESET_REASON =
  "asyncpg's Pool.release() runs Connection.reset(): ROLLBACK if a transaction is open, then pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN * and RESET ALL";

const METHODS = new Set(['execute', 'executemany', 'fetch', 'fetchrow', 'fetchval', 'prepare', 'cursor']);

export const asyncpg: PythonDriver = {
  name: 'asyncpg',
  modules: ['asyncpg'],
  unlessAlso: ['psycopg', 'psycopg2'],
  handedIn: { origin: 'parameter' },
  makers: [
    { path: 'asyncpg.create_pool', kind: 'pool', name: 'create_pool' },
    { path: 'asyncpg.pool.create_pool', kind: 'pool', name: 'create_pool' },
    { path: 'asyncpg.connect', kind: 'connect', name: 'connect' },
    { path: 'asyncpg.connection.connect', kind: 'connect', name: 'connect' },
  ],
  readConfig,
  annotations: {
    'asyncpg.Pool': 'pool',
    'asyncpg.pool.Pool': 'pool',
    'asyncpg.Connection': 'conn',
    'asyncpg.connection.Connection': 'conn',
    'asyncpg.pool.PoolConnectionProxy': 'conn',
  },
  /**
   * A pool this file only sees as a parameter (`pool: asyncpg.Pool`): its
   * release runs asyncpg's own reset unless its maker passed reset= (0.30+);
   * its statement cache size is not known.
   */
  assumedPool: (at): ConnectionConfig => ({
    id: `asyncpg-parameter@${at.from}`,
    driver: 'asyncpg',
    kind: 'pool',
    span: span(at),
    preparedStatements: 'unknown',
    preparedReason: 'the pool is made elsewhere: its statement_cache_size is not known',
    autocommit: true,
    callbacks: [],
    driverReset: { statements: [...RESET], reason: `${RESET_REASON} (the pool is made elsewhere: assumed without a reset= of its own)` },
  }),
  checkouts: [{ method: 'acquire', origin: 'acquire', autocommit: true, exitEnds: 'rollback' }],
  transactionBlocks: [{ method: 'transaction', form: '`with conn.transaction()`' }],
  sqlMethods: { connection: METHODS, cursor: METHODS, pool: new Set(['execute', 'executemany', 'fetch', 'fetchrow', 'fetchval']), poolAutocommit: true },
  // Native $N placeholders; values follow the SQL as positional arguments.
  placeholderStyle: () => 'dollar',
  boundValues(args, method) {
    if (method === 'executemany') return undefined;
    if (args.some((a) => a.star)) return { opaque: true };
    return { sequence: args.filter((a) => !a.name && !a.star).slice(1).map((a) => a.value) };
  },
  postgresOnly: true,
  forFile(file) {
    if (file.driverOfFile !== 'unknown' || !ASYNCPG_CALLS.test(file.text)) return undefined;
    return {
      // `async with pool.acquire() as conn` on a pool a project function returns, in a file that
      // imports no driver and reads rows with fetch/fetchrow/fetchval: asyncpg's idiom, no other
      // driver has those methods. Its pool is one made elsewhere (assumedPool).
      unseenReceiverMethod: (walk, method, entering) => {
        if (method !== 'acquire' || !entering) return undefined;
        const config = asyncpg.assumedPool!(file.tree.topNode);
        const assumed = file.driverState('asyncpg', () => {
          file.model.connections.push(config);
          return config;
        });
        return { kind: 'conn', conn: walk.newConn('asyncpg', { kind: 'pooled-client', configId: assumed.id }, 'acquire', undefined, true, 'rollback') };
      },
    };
  },
};

/** A call of asyncpg's row readers, which no other driver has. */
const ASYNCPG_CALLS = /\.(?:fetch|fetchrow|fetchval)\(/;

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  const splat = args.some((a) => a.star === '**');
  const options = keywordMap(args);
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
    if (!options.has('reset') && !options.has('connection_class') && !splat) config.driverReset = { statements: [...RESET], reason: RESET_REASON };
  }
  return entry;
}
