// TypeORM: `new DataSource({...})` is the pool (`dataSource.manager` too),
// `dataSource.query(text, values)` sends SQL, `dataSource.transaction(fn)`
// runs fn in a transaction, and `createQueryRunner()` checks out a connection
// whose transactions are methods: startTransaction(), commitTransaction(),
// rollbackTransaction(). `queryRunner.release()` hands the connection back to
// the driver's pool as it is: it rolls nothing back. Its query builder and
// its manager's writes are read as the SQL they send: typeorm-builder.ts.
import { chainOf, type BuilderHost, type ChainLink, type RootOf } from '../builder-sql.ts';
import type { Value } from '../flow/types.ts';
import { unwrap, type Node } from '../syntax.ts';
import type { DriverModel } from './model.ts';
import { typeormChain } from './typeorm-builder.ts';

function typeormDb(v: Value | undefined): boolean {
  return (v?.kind === 'pool' || v?.kind === 'tx' || v?.kind === 'opaque') && v.driver === 'typeorm' ? true : v?.kind === 'conn' && v.conn.driver === 'typeorm';
}

/**
 * A chain continued on a query builder or a repository held in a const
 * (`const qb = manager.createQueryBuilder(Job, 'job')`, then
 * `qb.where(...).setLock(...).getMany()`): one query, the const's chain first.
 */
function heldBuilder(root: Node, links: readonly ChainLink[], host: BuilderHost): RootOf | undefined {
  const n = unwrap(root);
  if (n?.type !== 'Identifier' || links.length === 0) return undefined;
  const init = unwrap(host.constantOf?.(n));
  if (init?.type !== 'CallExpression') return undefined;
  const inner = chainOf(init);
  if (!inner || inner.links.length === 0) return undefined;
  const last = inner.links[inner.links.length - 1].name;
  if (last !== 'createQueryBuilder' && last !== 'getRepository') return undefined;
  const on = host.value(inner.root);
  return on && typeormDb(on) ? { on, links: [...inner.links, ...links] } : undefined;
}

export const typeorm: DriverModel = {
  driver: 'typeorm',
  modules: { names: ['typeorm'] },
  // import { DataSource } from 'typeorm': new DataSource({...}) makes a pool.
  exports: { DataSource: { kind: 'maker', driver: 'typeorm', makes: 'pool' }, Connection: { kind: 'maker', driver: 'typeorm', makes: 'pool' } },
  // A parameter typed QueryRunner is a connection in a state its caller chose.
  // An EntityManager is the data source's (`dataSource.manager`) or a transaction's: a parameter so typed may be handed either.
  types: { DataSource: 'pool', QueryRunner: 'checked-out', EntityManager: 'pool' },
  txSatisfies: ['EntityManager'],
  // dataSource.manager runs on the same pool; queryRunner.manager on the runner's connection.
  member: (object, name) => ((object.kind === 'pool' || (object.kind === 'conn' && object.conn.origin === 'runner')) && name === 'manager' ? object : undefined),
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
  builder: typeormChain,
  builderRoot: heldBuilder,
};
