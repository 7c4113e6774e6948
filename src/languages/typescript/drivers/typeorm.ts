// TypeORM: `new DataSource({...})` is the pool (`dataSource.manager` too),
// `dataSource.query(text, values)` sends SQL, `dataSource.transaction(fn)`
// runs fn in a transaction, and `createQueryRunner()` checks out a connection
// whose transactions are methods: startTransaction(), commitTransaction(),
// rollbackTransaction(). `queryRunner.release()` hands the connection back to
// the driver's pool as it is: it rolls nothing back.
import type { DriverModel } from './model.ts';

export const typeorm: DriverModel = {
  driver: 'typeorm',
  modules: { names: ['typeorm'] },
  // import { DataSource } from 'typeorm': new DataSource({...}) makes a pool.
  exports: { DataSource: { kind: 'maker', driver: 'typeorm', makes: 'pool' }, Connection: { kind: 'maker', driver: 'typeorm', makes: 'pool' } },
  // A parameter typed QueryRunner is a connection in a state its caller chose.
  types: { DataSource: 'pool', QueryRunner: 'checked-out' },
  // dataSource.manager runs on the same pool.
  member: (object, name) => (object.kind === 'pool' && name === 'manager' ? object : undefined),
  // dataSource.createQueryRunner() checks a connection out.
  method: (on, method, _call, ctx) => (on.kind === 'pool' && method === 'createQueryRunner' ? ctx.checkout('typeorm', 'pooled-client', 'runner', on.configId) : undefined),
  // Its transactions are methods of the runner.
  connectionMethod(conn, method, call, ctx) {
    if (conn.origin !== 'runner') return;
    if (method === 'startTransaction') ctx.begin(conn, call, 'queryRunner.startTransaction()');
    if (method === 'commitTransaction' || method === 'rollbackTransaction') ctx.end(conn);
    // release() gives the client back to the pool as it is (it takes no error that would destroy it):
    // a transaction still open goes with it to the next checkout.
    if (method === 'release') {
      ctx.release(conn, call);
      ctx.end(conn);
    }
  },
};
