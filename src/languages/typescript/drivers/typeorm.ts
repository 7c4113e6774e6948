// TypeORM: `new DataSource({...})` is the pool (`dataSource.manager` too),
// `dataSource.query(text, values)` sends SQL, `dataSource.transaction(fn)`
// runs fn in a transaction, and `createQueryRunner()` checks out a connection
// whose transactions are methods: startTransaction(), commitTransaction(),
// rollbackTransaction().
import type { DriverModel } from './model.ts';

export const typeorm: DriverModel = {
  driver: 'typeorm',
  modules: { names: ['typeorm'] },
  exportOf: (imported) => (imported === 'DataSource' || imported === 'Connection' ? { kind: 'maker', driver: 'typeorm', makes: 'pool' } : undefined),
  typeOf: (exported) => (exported === 'DataSource' ? 'pool' : exported === 'QueryRunner' ? 'checked-out' : undefined),
  member: (object, name) => (object.kind === 'pool' && name === 'manager' ? object : undefined),
  method: (on, method, _call, ctx) => (on.kind === 'pool' && method === 'createQueryRunner' ? ctx.checkout('typeorm', 'pooled-client', 'runner', on.configId) : undefined),
  connectionMethod(conn, method, call, ctx) {
    if (conn.origin !== 'runner') return;
    if (method === 'startTransaction') ctx.begin(conn, call, 'queryRunner.startTransaction()');
    if (method === 'commitTransaction' || method === 'rollbackTransaction') ctx.end(conn);
  },
};
