// TypeORM: `new DataSource({...})` is the pool (`dataSource.manager` too),
// `dataSource.query(text, values)` sends SQL, `dataSource.transaction(fn)`
// runs fn in a transaction, and `createQueryRunner()` checks out a connection
// whose transactions are methods: startTransaction(), commitTransaction(),
// rollbackTransaction(). `queryRunner.release()` hands the connection back to
// the driver's pool as it is: it rolls nothing back. Its query builder and
// its manager's writes are read as the SQL they send: typeorm-builder.ts.
import { chainOf, type BuilderHost, type ChainLink, type RootOf } from '../builder-sql.ts';
import type { Value } from '../flow/types.ts';
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { pathTo, unwrap, type Node } from '../syntax.ts';
import type { DriverModel } from './model.ts';
import { heldChain, typeormChain } from './typeorm-builder.ts';

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
  // A repository's API is TypeORM's only in a file that imports it (MikroORM's `em.getRepository()` reads alike).
  if (!host.imports?.drivers.includes('typeorm')) return undefined;
  if (n?.type === 'MemberExpression' && links.length > 0) return memberRepository(n, links, host);
  if (links.length === 0) return undefined;
  const inner = heldChain(n, host);
  const on = inner && host.value(inner.root);
  return on && typeormDb(on) ? { on, links: [...inner.links, ...links] } : undefined;
}

/** The class around `node` in the file's program. */
function classAround(program: Node | undefined, node: Node): TSESTree.ClassBody | undefined {
  if (!program) return undefined;
  const path = pathTo(program, node);
  for (let i = path.length - 1; i >= 0; i--) if (path[i].type === 'ClassBody') return path[i] as TSESTree.ClassBody;
  return undefined;
}

/**
 * A repository a class holds in a member, read where the class gets it: a
 * constructor parameter `@InjectRepository(Job) private repo: Repository<Job>`
 * (NestJS), or the one assignment `this.repo = dataSource.getRepository(Job)`
 * in the constructor. Either is made when the class is constructed, before
 * any job: the data source's pool, each call in autocommit.
 */
function memberRepository(member: TSESTree.MemberExpression, links: readonly ChainLink[], host: BuilderHost): RootOf | undefined {
  if (unwrap(member.object)?.type !== 'ThisExpression' || member.computed || member.property.type !== 'Identifier') return undefined;
  const name = member.property.name;
  const body = classAround(host.program, member);
  const ctor = body?.body.find((m): m is TSESTree.MethodDefinition => m.type === 'MethodDefinition' && m.kind === 'constructor');
  if (!ctor) return undefined;
  const pool: Value = { kind: 'pool', driver: 'typeorm' };
  for (const param of ctor.value.params) {
    if (param.type !== 'TSParameterProperty' || param.parameter.type !== 'Identifier' || param.parameter.name !== name) continue;
    for (const d of param.decorators ?? []) {
      const call = unwrap(d.expression as Node);
      const callee = call?.type === 'CallExpression' ? unwrap(call.callee) : undefined;
      if (call?.type === 'CallExpression' && callee?.type === 'Identifier' && callee.name === 'InjectRepository' && call.arguments[0]) {
        return { on: pool, links: [{ name: 'getRepository', call, args: [call.arguments[0] as Node] }, ...links] };
      }
    }
  }
  const assigned: TSESTree.CallExpression[] = [];
  for (const statement of ctor.value.body?.body ?? []) {
    const e = statement.type === 'ExpressionStatement' ? unwrap(statement.expression as Node) : undefined;
    if (e?.type !== 'AssignmentExpression' || e.left.type !== 'MemberExpression' || e.left.object.type !== 'ThisExpression') continue;
    if (e.left.property.type !== 'Identifier' || e.left.property.name !== name) continue;
    const right = unwrap(e.right as Node);
    if (right?.type === 'CallExpression') assigned.push(right);
  }
  if (assigned.length !== 1) return undefined;
  const inner = chainOf(assigned[0]);
  if (!inner || inner.links.length !== 1 || inner.links[0].name !== 'getRepository') return undefined;
  return { on: pool, links: [...inner.links, ...links] };
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
  method(on, method, _call, ctx) {
    // dataSource.createQueryRunner() checks a connection out.
    if (on.kind === 'pool' && method === 'createQueryRunner') return ctx.checkout('typeorm', 'pooled-client', 'runner', on.configId);
    // m.getRepository(Job) runs where m runs: its find/save/update are the database's, not the job's work.
    if (method === 'getRepository' || method === 'getTreeRepository') return on;
    return undefined;
  },
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
