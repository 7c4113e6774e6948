// Neon's serverless driver (`@neondatabase/serverless`): `Pool` and `Client`
// with node-postgres' API (pg.ts), and `neon(url)`, an HTTP query function
// whose every call is a connection and a transaction of its own: sql`...`
// sends a query, `sql.transaction([sql`...`, ...])` runs the array in one
// transaction.
import { driverOfValue } from '../flow/types.ts';
import type { DriverModel } from './model.ts';
import { pgApi } from './pg.ts';

export const neon: DriverModel = {
  driver: 'neon',
  modules: { names: ['@neondatabase/serverless'] },
  exportOf(imported) {
    if (imported === 'neon' || imported === 'Pool') return { kind: 'maker', driver: 'neon', makes: 'pool' };
    if (imported === 'Client') return { kind: 'maker', driver: 'neon', makes: 'client' };
    return undefined;
  },
  typeOf: (exported) => (exported === 'Pool' || exported === 'NeonQueryFunction' ? 'pool' : exported === 'PoolClient' ? 'checked-out' : exported === 'Client' ? 'client' : undefined),
  ...pgApi,
  tagRunsQuery: true,
  arrayTransaction: (method, on) => method === 'transaction' && driverOfValue(on) === 'neon',
};
