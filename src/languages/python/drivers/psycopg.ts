// psycopg 3 and psycopg_pool. Not autocommit by default: a statement opens
// an implicit transaction that lasts until commit()/rollback() or the end of
// `with conn:` / `with pool.connection()` (commit on success, rollback on
// error); `with conn.transaction():` is its own transaction (a savepoint
// inside an open one). ConnectionPool(kwargs=, reset=, configure=, check=,
// connection_class=); connect(autocommit=, prepare_threshold=). psycopg
// prepares a query on its 6th execution (prepare_threshold=5); from 3.3.5 it
// clears its cache when it sees DISCARD ALL go through (psycopg#1307).
import { compareVersions, psycopgPin } from '../versions.ts';
import { booleanOf, keywordMap, newConfigEntry, readDict } from '../flow/config.ts';
import type { ConfigEntry, Conn, Maker, ReadContext, Threshold } from '../flow/types.ts';
import { callParts, keyword, unwrap, type Node } from '../syntax.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

const POOLS = /^psycopg_pool\.(?:\w+\.)*(ConnectionPool|AsyncConnectionPool|NullConnectionPool|AsyncNullConnectionPool)$/;

export const psycopg: PythonDriver = {
  name: 'psycopg',
  modules: ['psycopg', 'psycopg_pool'],
  unlessAlso: ['psycopg2'],
  handedIn: { origin: 'parameter' },
  makers: [
    { path: POOLS, kind: 'pool' },
    { path: 'psycopg.connect', kind: 'connect', name: 'connect' },
    ...['', 'connection.', 'connection_async.'].flatMap((module) =>
      ['Connection', 'AsyncConnection'].map((cls) => ({ path: `psycopg.${module}${cls}.connect`, kind: 'connect' as const, name: `${cls}.connect` })),
    ),
  ],
  readConfig,
  finishConfig: (entry, file) => finishConfig(entry, file),
  checkouts: [
    { method: 'connection', origin: 'pool.connection' },
    { method: 'getconn', origin: 'getconn' },
  ],
  transactionBlocks: [{ method: 'transaction', form: '`with conn.transaction()`' }],
  controlMethods: ['set_autocommit'],
  autocommitSetters: [{ method: 'set_autocommit' }],
  connectionAttributes: {
    // `conn.prepare_threshold = None`: nothing is prepared on that connection any more.
    prepare_threshold: (walk, conn, value) => {
      const threshold = thresholdOf(value, walk.file.readContext);
      if (threshold.kind !== 'value' || threshold.value !== null) return;
      if (conn.origin === 'callback') walk.preparedOff = 'prepare_threshold = None';
      else if (conn.entry) conn.entry.thresholdOff = 'prepare_threshold = None on the connection';
    },
  },
  postgresOnly: true,
  sqlText: {
    composed: ['psycopg.sql.SQL'],
    identifiers: ['psycopg.sql.Identifier'],
    literals: ['psycopg.sql.Literal'],
    placeholders: ['psycopg.sql.Placeholder'],
  },
  notWork: ['psycopg.sql'],
  implicitForm: (conn) => dbapiImplicitForm('psycopg', conn),
  forFile(file) {
    if (!file.imports.modules.has('psycopg_pool')) return undefined;
    return {
      // `with pool.connection() as conn` on a pool this file cannot see: psycopg_pool's idiom.
      unseenReceiverMethod: (walk, method, entering) =>
        method === 'connection' && entering ? { kind: 'conn', conn: walk.newConn('psycopg', { kind: 'pooled-client' }, 'pool.connection', undefined, 'unknown') } : undefined,
    };
  },
};

/** The implicit transaction of a DB-API connection with autocommit off, as a finding names it. */
export function dbapiImplicitForm(driver: string, conn: Pick<Conn, 'origin' | 'callback'>): string {
  switch (conn.origin) {
    case 'pool.connection':
      return `${driver}'s implicit transaction, committed when \`with pool.connection()\` ends`;
    case 'callback':
      return `${driver}'s implicit transaction in the pool's ${conn.callback?.role} callback`;
    default:
      return `${driver}'s implicit transaction (autocommit off)`;
  }
}

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const hasSplat = args.some((a) => a.star === '**');
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  // Where the connection options are: kwargs={...} for pools, the call itself for connect().
  let options: Map<string, Node> | 'unknown';
  if (maker.kind === 'pool') {
    const kwargs = keyword(args, 'kwargs');
    options = kwargs ? readDict(kwargs, ctx) : hasSplat ? 'unknown' : new Map();
    // psycopg_pool opens and readies every connection in its own worker threads (asyncio tasks for the async pool,
    // started at open()): configure= never sees the context of the job that asked for a connection.
    for (const role of ['reset', 'configure', 'check'] as const) {
      const node = keyword(args, role);
      if (node && unwrap(node)?.name !== 'None') entry.callbackArgs.push({ role, node, ...(role === 'configure' ? { inPoolWorker: true } : {}) });
    }
    const connectionClass = keyword(args, 'connection_class');
    if (connectionClass && ctx.classSetsThreshold(connectionClass)) entry.threshold = { kind: 'unknown', why: 'connection_class sets it' };
  } else {
    options = hasSplat ? 'unknown' : keywordMap(args);
  }
  if (options === 'unknown') {
    config.autocommit = 'unknown';
    if (entry.threshold.kind === 'default') entry.threshold = { kind: 'unknown', why: 'its options are computed' };
  } else {
    const autocommit = options.get('autocommit');
    config.autocommit = autocommit ? booleanOf(autocommit, ctx) : false;
    const threshold = options.get('prepare_threshold');
    if (threshold && entry.threshold.kind === 'default') entry.threshold = thresholdOf(threshold, ctx);
  }
  return entry;
}

export function thresholdOf(node: Node, ctx: ReadContext): Threshold {
  const expr = unwrap(node);
  if (!expr) return { kind: 'unknown', why: 'computed' };
  const text = ctx.text.slice(expr.from, expr.to);
  if (expr.name === 'None') return { kind: 'value', value: null, where: 'prepare_threshold=None' };
  if (expr.name === 'Number' && /^\d+$/.test(text)) return { kind: 'value', value: Number(text), where: `prepare_threshold=${text}` };
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    if (value) return thresholdOf(value, ctx);
  }
  return { kind: 'unknown', why: 'prepare_threshold is computed' };
}

/** The psycopg release that clears its cache when it sees DISCARD's command status (psycopg#1307). */
export const CLEARS_ON_DISCARD = '3.3.5';

/**
 * Fills preparedStatements, preparedReason and driverClearsCache once the
 * callbacks were read. psycopg 3 prepares a query on its 6th execution by
 * default. From 3.3.5 it clears its own cache after DISCARD ALL, but only when
 * that statement is new to its cache and something is prepared already: a
 * DISCARD ALL run on every return is recognised on its first run at most,
 * when nothing is prepared yet unless prepare_threshold is 0.
 */
function finishConfig(entry: ConfigEntry, file: string): void {
  const { config } = entry;
  const pin = psycopgPin(file);
  const versionText = pin ? `psycopg ${pin.exact ? '' : '>= '}${pin.version} in ${pin.source}` : undefined;
  if (entry.thresholdOff) {
    config.preparedStatements = 'no';
    config.preparedReason = entry.thresholdOff;
    return;
  }
  const threshold = entry.threshold;
  if (threshold.kind === 'unknown') {
    config.preparedStatements = 'unknown';
    config.preparedReason = threshold.why;
    return;
  }
  if (threshold.kind === 'value' && threshold.value === null) {
    config.preparedStatements = 'no';
    config.preparedReason = threshold.where;
    return;
  }
  config.preparedStatements = 'yes';
  const recognises = pin !== undefined && compareVersions(pin.version, CLEARS_ON_DISCARD) >= 0;
  if (threshold.kind === 'value' && threshold.value === 0) {
    config.preparedReason = `${threshold.where}: psycopg prepares every query on its first execution`;
    // Something is always prepared before the first DISCARD ALL, so 3.3.5+ sees it and clears its cache.
    if (recognises) {
      config.driverClearsCache = ['DISCARD ALL'];
      config.preparedReason += `; ${versionText} clears its cache after DISCARD ALL`;
    }
    return;
  }
  const count = threshold.kind === 'value' ? threshold.value! + 1 : 6;
  config.preparedReason =
    threshold.kind === 'value'
      ? `${threshold.where}: psycopg prepares a query on its execution number ${count}`
      : 'psycopg prepares a query on its 6th execution, prepare_threshold defaults to 5';
  if (recognises) {
    config.preparedReason += `; ${versionText} notices DISCARD ALL only the first time it runs on a connection, before anything is prepared`;
  } else if (versionText && pin?.exact) {
    config.preparedReason += `; ${versionText} does not notice DISCARD ALL`;
  }
}
