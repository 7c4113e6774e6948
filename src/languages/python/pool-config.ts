// Connection configuration from the calls that make pools and connections:
// psycopg_pool's ConnectionPool / AsyncConnectionPool / NullConnectionPool
// (kwargs=, reset=, configure=, check=, connection_class=), psycopg.connect()
// and Connection.connect() (autocommit=, prepare_threshold=), psycopg2's
// pools and connect(); SQLAlchemy engines and asyncpg pools in drivers.ts.
import type { ConnectionConfig, Driver, ResetCallback } from '../../model/index.ts';
import { compareVersions, type VersionPin } from './versions.ts';
import { callParts, children, keyword, span, unwrap, type Arg, type Node } from './syntax.ts';
import { otherMakerOf, readOtherConfig } from './drivers.ts';

const PSYCOPG_POOLS = ['ConnectionPool', 'AsyncConnectionPool', 'NullConnectionPool', 'AsyncNullConnectionPool'];
const PSYCOPG2_POOLS = ['SimpleConnectionPool', 'ThreadedConnectionPool', 'PersistentConnectionPool', 'AbstractConnectionPool'];

export type Maker =
  | { kind: 'pool'; driver: 'psycopg' | 'psycopg2' | 'asyncpg' | 'sqlalchemy'; name: string }
  | { kind: 'connect'; driver: 'psycopg' | 'psycopg2' | 'asyncpg'; name: string };

/** What a qualified callee makes, if it is one of the drivers' pool classes or connect functions. */
export function makerOf(qualified: string | undefined): Maker | undefined {
  if (!qualified) return undefined;
  const other = otherMakerOf(qualified);
  if (other) return other;
  const parts = qualified.split('.');
  const last = parts[parts.length - 1];
  if (parts[0] === 'psycopg_pool' && PSYCOPG_POOLS.includes(last)) return { kind: 'pool', driver: 'psycopg', name: last };
  if (parts[0] === 'psycopg2' && parts.includes('pool') && PSYCOPG2_POOLS.includes(last)) return { kind: 'pool', driver: 'psycopg2', name: last };
  if (qualified === 'psycopg.connect' || /^psycopg(\.connection(_async)?)?\.(Async)?Connection\.connect$/.test(qualified)) {
    return { kind: 'connect', driver: 'psycopg', name: qualified.replace(/^psycopg\.(connection(_async)?\.)?/, '') };
  }
  if (qualified === 'psycopg2.connect') return { kind: 'connect', driver: 'psycopg2', name: 'connect' };
  return undefined;
}

/** The config of the pool or connection `callNode` makes, before its options are read. */
export function newConfigEntry(callNode: Node, maker: Maker): ConfigEntry {
  const config: ConnectionConfig = {
    id: `${maker.kind}@${callNode.from}`,
    driver: maker.driver,
    kind: maker.kind === 'pool' ? 'pool' : 'client',
    span: span(callNode),
    preparedStatements: 'unknown',
    autocommit: 'unknown',
    callbacks: [],
  };
  return { config, maker, threshold: { kind: 'default' }, callbackArgs: [] };
}

/** prepare_threshold as the code sets it: a number, None (off), psycopg's default, or something we cannot read. */
export type Threshold = { kind: 'default' } | { kind: 'value'; value: number | null; where: string } | { kind: 'unknown'; why: string };

export interface ConfigEntry {
  config: ConnectionConfig;
  maker: Maker;
  threshold: Threshold;
  /** Where the code turns prepared statements off after connecting (`conn.prepare_threshold = None` in configure=). */
  thresholdOff?: string;
  /** Callback arguments (reset=, configure=, check=) to follow to their definitions. */
  callbackArgs: CallbackArg[];
  /** SQLAlchemy: the DBAPI its URL names (what its event listeners' connections are). */
  dbapi?: 'psycopg2' | 'psycopg' | 'asyncpg';
}

export interface CallbackArg {
  role: ResetCallback['role'];
  /** The callback expression, or the decorated def of a SQLAlchemy listener. */
  node: Node;
  /** Which positional parameter receives the connection (0 unless said: after_begin's is 2). */
  connParam?: number;
  /** The connection it receives, when not the pool's own (SQLAlchemy: the DBAPI connection). */
  connDriver?: Driver;
  /** Its autocommit state when the callback starts, when not the pool's. */
  autocommit?: boolean | 'unknown';
  /** It runs inside a transaction that is already open (SQLAlchemy after_begin). */
  inTransaction?: string;
  /** What the callback is, for the model's name: the SQLAlchemy event. */
  event?: string;
}

export interface ReadContext {
  text: string;
  /** An expression a name stands for (module constant or single local assignment). */
  valueOf(node: Node): Node | undefined;
  qualify(node: Node): string | undefined;
  /** A class of this file that mentions prepare_threshold (a connection_class we cannot vouch for). */
  classSetsThreshold(node: Node): boolean;
}

export function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  if (maker.driver === 'sqlalchemy' || maker.driver === 'asyncpg') return readOtherConfig(callNode, maker, ctx);
  const call = callParts(callNode, ctx.text)!;
  const args = call.args;
  const hasSplat = args.some((a) => a.star === '**');
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;

  // Where the connection options are: kwargs={...} for pools, the call itself for connect().
  let options: Map<string, Node> | 'unknown';
  if (maker.kind === 'pool' && maker.driver === 'psycopg') {
    const kwargs = keyword(args, 'kwargs');
    options = kwargs ? readDict(kwargs, ctx) : hasSplat ? 'unknown' : new Map();
    for (const role of ['reset', 'configure', 'check'] as const) {
      const node = keyword(args, role);
      if (node && unwrap(node)?.name !== 'None') entry.callbackArgs.push({ role, node });
    }
    const connectionClass = keyword(args, 'connection_class');
    if (connectionClass && ctx.classSetsThreshold(connectionClass)) entry.threshold = { kind: 'unknown', why: 'connection_class sets it' };
  } else if (maker.kind === 'pool') {
    // psycopg2 pools pass their keyword arguments on to psycopg2.connect().
    options = hasSplat ? 'unknown' : keywordMap(args);
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
  if (maker.driver === 'psycopg2') {
    config.preparedStatements = 'no';
    config.preparedReason = 'psycopg2 does not prepare statements';
  }
  return entry;
}

export function keywordMap(args: Arg[]): Map<string, Node> {
  const map = new Map<string, Node>();
  for (const a of args) if (a.name) map.set(a.name, a.value);
  return map;
}

/** `{"k": v, ...}` or `dict(k=v)`, through a name; 'unknown' when it has `**` parts or is computed. */
export function readDict(node: Node, ctx: ReadContext, depth = 0): Map<string, Node> | 'unknown' {
  const expr = unwrap(node);
  if (!expr || depth > 4) return 'unknown';
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? readDict(value, ctx, depth + 1) : 'unknown';
  }
  if (expr.name === 'CallExpression') {
    const call = callParts(expr, ctx.text);
    if (!call || ctx.text.slice(call.callee.from, call.callee.to) !== 'dict' || call.args.some((a) => !a.name)) return 'unknown';
    return keywordMap(call.args);
  }
  if (expr.name !== 'DictionaryExpression') return 'unknown';
  const map = new Map<string, Node>();
  const parts = children(expr).filter((c) => c.name !== '{' && c.name !== '}');
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].name === '**') return 'unknown';
    if (parts[i].name === ',') continue;
    const key = parts[i];
    if (parts[i + 1]?.name !== ':' || !parts[i + 2]) return 'unknown';
    const name = /^['"](\w+)['"]$/.exec(ctx.text.slice(key.from, key.to));
    if (!name) return 'unknown';
    map.set(name[1], parts[i + 2]);
    i += 2;
  }
  return map;
}

export function booleanOf(node: Node, ctx: ReadContext): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  const text = ctx.text.slice(expr.from, expr.to);
  if (text === 'True') return true;
  if (text === 'False') return false;
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? booleanOf(value, ctx) : 'unknown';
  }
  return 'unknown';
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
export function finishConfig(entry: ConfigEntry, pin: VersionPin | undefined): void {
  const { config } = entry;
  if (config.driver !== 'psycopg') return;
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

export type { Driver };
