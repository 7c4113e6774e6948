// node-postgres (`pg`, `pg-pool`): `new Pool()` and `new Client()`, a client
// checked out with `pool.connect()` until `client.release()` (which neither
// resets nor rolls back: F1, F4), `x.query(text, values)` and its query config
// `{ name, text, values }` — a named query is prepared once per connection and
// never re-prepared, so `DISCARD ALL` breaks it for good (F5). pg-pool runs
// `onConnect` and `pool.on('connect')` on each new client, `'acquire'` on each
// checkout. Neon's and @vercel/postgres's pools share this API (neon.ts,
// vercel-postgres.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Span } from '../../../model/index.ts';
import type { ConfigEntry, Conn, PoolHook, Value } from '../flow/types.ts';
import { objectProperty, unwrap, isFunction, type Call, type Node } from '../syntax.ts';
import type { DriverContext, DriverModel, FileFacts } from './model.ts';

/** A hook given as an option, when it is a function or names one. */
export function optionHook(object: TSESTree.ObjectExpression, key: string, role: PoolHook['role'], name = key): PoolHook | undefined {
  const property = objectProperty(object, key);
  const value = property ? unwrap(property.value as Node) : undefined;
  return value && (isFunction(value) || value.type === 'Identifier' || value.type === 'MemberExpression') ? { fn: value, role, name } : undefined;
}

/** What node-postgres' API means, for the drivers that share it. */
export const pgApi = {
  method(on, method, call, ctx) {
    if (on.kind === 'pool' && method === 'connect' && call.arguments.length === 0) return ctx.checkout(on.driver, 'pooled-client', 'checkout', on.configId);
    return undefined;
  },
  optionHooks(options) {
    const hook = optionHook(options, 'onConnect', 'configure');
    return hook ? [hook] : [];
  },
  connectionMethod(conn, method, call, ctx) {
    releaseOnCheckout(conn, method, call, ctx);
  },
} satisfies Partial<DriverModel>;

/**
 * `client.release()` of a checked-out connection: back to the pool as it is;
 * `release(err)` destroys it instead, when `err` is truthy. A variable that
 * only an event handler sets (`client.on('error', (e) => { failed = e })`,
 * then `release(failed)`) is still empty when the job itself fails: the
 * connection goes back.
 */
export function releaseOnCheckout(conn: Conn, method: string, call: Call, ctx: DriverContext): void {
  if (method !== 'release' || conn.origin !== 'checkout') return;
  const destroys = call.arguments.some((a) => {
    const v = unwrap(a);
    return !(v?.type === 'Literal' && (v.value === false || v.value === null)) && !(v?.type === 'Identifier' && v.name === 'undefined') && !(v && ctx.unsetHere(v));
  });
  if (!destroys) ctx.release(conn, call);
  ctx.end(conn);
}

/** Named queries: prepared once per connection and never re-prepared (node-postgres, pg-promise). */
export function namedQueriesPrepare(entry: ConfigEntry, line: (s: Span) => number): void {
  const { config, namedQueries } = entry;
  if (namedQueries.length > 0) {
    const first = namedQueries[0];
    config.preparedStatements = 'yes';
    config.preparedReason = `named query '${first.name}' at line ${line(first.span)} is prepared once per connection and never re-prepared`;
  } else {
    config.preparedStatements = 'no';
  }
}

/** Named node-postgres queries anywhere in the file run on its pools: without a pool made here, one stands for them. */
function placeNamedQueries({ file, sites, configs, configById }: FileFacts): void {
  const pgSites = sites.filter((s) => s.driver === 'pg');
  const unplaced = pgSites.filter((s) => s.preparedName && !s.connection.configId);
  if (unplaced.length > 0) {
    let pgConfigs = configs.filter((c) => c.config.driver === 'pg');
    if (pgConfigs.length === 0) {
      const first = unplaced[0];
      const entry: ConfigEntry = {
        config: { id: `${file}#pg`, driver: 'pg', kind: 'pool', span: first.span, preparedStatements: 'unknown', autocommit: true, callbacks: [] },
        namedQueries: [],
        transactions: [],
      };
      configs.push(entry);
      pgConfigs = [entry];
    }
    for (const s of unplaced) for (const c of pgConfigs) c.namedQueries.push({ name: s.preparedName!, span: s.span });
    if (pgConfigs.length === 1) {
      for (const s of pgSites) if (!s.connection.configId) s.connection.configId = pgConfigs[0].config.id;
    }
  }
  for (const s of pgSites) {
    const entry = configById(s.connection.configId);
    if (s.preparedName && entry && !entry.namedQueries.some((q) => q.span.start === s.span.start)) entry.namedQueries.push({ name: s.preparedName, span: s.span });
  }
}

const pgPool: Value = { kind: 'maker', driver: 'pg', makes: 'pool' };

export const pg: DriverModel = {
  driver: 'pg',
  modules: { names: ['pg', 'pg-pool', 'pg/lib/client', 'pg-native'] },
  exports: { default: { kind: 'module', driver: 'pg' }, '*': { kind: 'module', driver: 'pg' }, Pool: pgPool, Client: { kind: 'maker', driver: 'pg', makes: 'client' } },
  // pg-pool's default export is the Pool class itself.
  exportOf: (imported, specifier) => (specifier === 'pg-pool' && (imported === 'default' || imported === '*') ? pgPool : undefined),
  types: { PoolClient: 'checked-out', Pool: 'pool', Client: 'client' },
  checkoutMethods: ['connect'],
  member(object, name) {
    if (object.kind === 'module') {
      if (name === 'Pool') return { kind: 'maker', driver: 'pg', makes: 'pool' };
      if (name === 'Client') return { kind: 'maker', driver: 'pg', makes: 'client' };
    }
    return undefined;
  },
  ...pgApi,
  events: [
    { methods: ['on', 'once', 'addListener'], event: 'connect', role: 'configure' },
    { methods: ['on', 'once', 'addListener'], event: 'acquire', role: 'checkout' },
  ],
  prepared: namedQueriesPrepare,
  queryConfig: { text: 'text', values: 'values', name: 'name' },
  finish: placeNamedQueries,
};
