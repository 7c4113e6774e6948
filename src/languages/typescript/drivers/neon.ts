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
  // neon(url): an HTTP query function, a pool whose every call is a connection of its own.
  exports: { neon: { kind: 'maker', driver: 'neon', makes: 'pool' }, Pool: { kind: 'maker', driver: 'neon', makes: 'pool' }, Client: { kind: 'maker', driver: 'neon', makes: 'client' } },
  types: { Pool: 'pool', NeonQueryFunction: 'pool', PoolClient: 'checked-out', Client: 'client' },
  ...pgApi,
  tagRunsQuery: true,
  arrayTransaction: (method, on) => method === 'transaction' && driverOfValue(on) === 'neon',
};
