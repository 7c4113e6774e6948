// @vercel/postgres: `sql` and `db` are pools made from the environment,
// `createPool()`/`createClient()` make others; node-postgres' API (pg.ts),
// and sql`...` (also `client.sql`...`` and `pool.sql`...``) sends a query.
import type { DriverModel } from './model.ts';
import { pgApi } from './pg.ts';

export const vercelPostgres: DriverModel = {
  driver: 'vercel-postgres',
  modules: { names: ['@vercel/postgres'] },
  exportOf(imported) {
    if (imported === 'sql' || imported === 'db') return { kind: 'pool', driver: 'vercel-postgres' };
    if (imported === 'createPool' || imported === 'VercelPool') return { kind: 'maker', driver: 'vercel-postgres', makes: 'pool' };
    if (imported === 'createClient' || imported === 'VercelClient') return { kind: 'maker', driver: 'vercel-postgres', makes: 'client' };
    return undefined;
  },
  typeOf: (exported) => (exported === 'VercelPool' ? 'pool' : exported === 'VercelPoolClient' ? 'checked-out' : exported === 'VercelClient' ? 'client' : undefined),
  // client.sql`...` and pool.sql`...` run on that client or pool.
  member: (object, name) => ((object.kind === 'conn' || object.kind === 'pool') && name === 'sql' ? object : undefined),
  ...pgApi,
  tagRunsQuery: true,
};
