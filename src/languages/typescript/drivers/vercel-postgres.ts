// @vercel/postgres: `sql` and `db` are pools made from the environment,
// `createPool()`/`createClient()` make others; node-postgres' API (pg.ts),
// and sql`...` (also `client.sql`...`` and `pool.sql`...``) sends a query.
import type { DriverModel } from './model.ts';
import { pgApi } from './pg.ts';

export const vercelPostgres: DriverModel = {
  driver: 'vercel-postgres',
  modules: { names: ['@vercel/postgres'] },
  // `sql` and `db` are pools made from the environment.
  exports: {
    sql: { kind: 'pool', driver: 'vercel-postgres' },
    db: { kind: 'pool', driver: 'vercel-postgres' },
    createPool: { kind: 'maker', driver: 'vercel-postgres', makes: 'pool' },
    VercelPool: { kind: 'maker', driver: 'vercel-postgres', makes: 'pool' },
    createClient: { kind: 'maker', driver: 'vercel-postgres', makes: 'client' },
    VercelClient: { kind: 'maker', driver: 'vercel-postgres', makes: 'client' },
  },
  types: { VercelPool: 'pool', VercelPoolClient: 'checked-out', VercelClient: 'client' },
  // client.sql`...` and pool.sql`...` run on that client or pool.
  member: (object, name) => ((object.kind === 'conn' || object.kind === 'pool') && name === 'sql' ? object : undefined),
  ...pgApi,
  tagRunsQuery: true,
};
