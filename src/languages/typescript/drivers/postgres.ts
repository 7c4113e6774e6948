// postgres.js (`postgres`) and Bun's SQL (`bun`), which copies its API: the
// pool is itself the query tag (sql`...`), `sql.unsafe(text, args)`,
// `sql.begin(fn)` runs fn in a transaction, `sql.savepoint(fn)` inside one,
// and `sql.reserve()` checks a connection out until `release()` (which leaves
// a transaction open as it is). postgres.js prepares every query unless
// `prepare: false`, and retries once after "prepared statement ... does not
// exist": that recovers outside a transaction, never inside sql.begin (F8).
import type { Driver } from '../../../model/index.ts';
import { driverOfValue, type Value } from '../flow/types.ts';
import { objectProperty, unwrap, type Node } from '../syntax.ts';
import type { DriverModel } from './model.ts';
import { releaseOnCheckout } from './pg.ts';

const postgresApi = (driver: Driver | undefined) => driver === 'postgres.js' || driver === 'bun';

/** What postgres.js' API means, for Bun's SQL too. */
const shared = {
  method(on, method, _call, ctx) {
    if (on.kind === 'pool' && method === 'reserve') return ctx.checkout(on.driver, 'pooled-client', 'checkout', on.configId);
    return undefined;
  },
  connectionMethod: releaseOnCheckout,
  checkoutMethods: ['reserve'],
  tagRunsQuery: true,
} satisfies Partial<DriverModel>;

export const postgresJs: DriverModel = {
  driver: 'postgres.js',
  modules: { names: ['postgres'] },
  exports: { default: { kind: 'maker', driver: 'postgres.js', makes: 'pool' }, '*': { kind: 'maker', driver: 'postgres.js', makes: 'pool' } },
  types: { Sql: 'pool', TransactionSql: 'tx', ReservedSql: 'checked-out' },
  // `TransactionSql` extends `Sql`: a parameter typed `Sql` may be handed the transaction of `sql.begin`.
  txSatisfies: ['Sql'],
  ...shared,
  readOptions(options, entry) {
    const prepare = objectProperty(options, 'prepare');
    const value = prepare ? unwrap(prepare.value as Node) : undefined;
    if (value?.type === 'Literal' && value.value === false) entry.prepareOff = true;
  },
  prepared(entry, line) {
    const { config, prepareOff, transactions } = entry;
    if (prepareOff) {
      config.preparedStatements = 'no';
      return;
    }
    config.preparedStatements = 'yes';
    if (transactions.length === 0) {
      // postgres.js retries once after "prepared statement ... does not exist": outside a transaction that recovers (F8).
      config.driverClearsCache = ['DISCARD ALL', 'DEALLOCATE ALL'];
      config.preparedReason = 'postgres.js prepares every query (prepare: true by default); outside a transaction it retries once and recovers';
    } else {
      config.preparedReason = `postgres.js prepares every query (prepare: true by default), and its one retry cannot succeed inside sql.begin (line ${line(transactions[0])}): the failed statement has already aborted the transaction`;
    }
  },
  tracksCallbackTransactions: true,
  callback({ method, on }) {
    if (method === 'begin' && (!on || postgresApi(driverOfValue(on)))) return { kind: 'tx', driver: driverOfValue(on) ?? 'postgres.js', form: 'sql.begin' };
    // A savepoint callback runs in the transaction it is called on.
    if (method === 'savepoint' && on?.kind === 'tx') return { kind: 'same-tx', driver: 'unknown' };
    return undefined;
  },
  queries: [
    {
      methods: new Set(['unsafe']),
      read: ({ arg0, on, onDriver, call, ctx }) =>
        arg0 && (postgresApi(onDriver) || (!on && ctx.imports.drivers.includes('postgres.js'))) ? ctx.textArg(arg0, on, onDriver ?? 'postgres.js', 'dollar', call) : undefined,
    },
  ],
  bareTagsRunQueries: true,
};

const bunModule: Value = { kind: 'module', driver: 'bun' };

export const bunSql: DriverModel = {
  driver: 'bun',
  modules: { names: ['bun'] },
  // `sql` is Bun's default instance (from the environment); `new SQL(url)` makes another.
  exports: { SQL: { kind: 'maker', driver: 'bun', makes: 'pool' }, sql: { kind: 'pool', driver: 'bun' }, default: bunModule, '*': bunModule },
  types: { SQL: 'pool', TransactionSQL: 'tx', ReservedSQL: 'checked-out' },
  // Bun's global: Bun.sql, new Bun.SQL(url).
  globals: new Map([['Bun', bunModule]]),
  member(object, name) {
    if (object.kind !== 'module') return undefined;
    if (name === 'SQL') return { kind: 'maker', driver: 'bun', makes: 'pool' };
    if (name === 'sql') return { kind: 'pool', driver: 'bun' };
    return undefined;
  },
  ...shared,
};
