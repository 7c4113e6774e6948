// A helper of the file handed a followed connection is walked at its call for
// what it does there. That walk must not take the helper's own queries away
// from the helper's own walk (a builder call it read is its walk's alone), and
// what the helper claims, counts and finishes joins the caller's transaction's
// one-transaction job. A name destructured from a driver value is the member
// its driver says (`const { manager } = runner` is `runner.manager`).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const parse = (text: string) => typescriptFrontEnd.parse(text, '/virtual/queue.ts', {});

const ENTITY = `
import { Column, DataSource, Entity, EntityManager, PrimaryGeneratedColumn } from 'typeorm';
@Entity('parcel')
export class Parcel {
  @PrimaryGeneratedColumn() id!: number;
  @Column() state!: string;
  @Column() tries!: number;
}
declare function ship(p: Parcel): Promise<void>;
`;

const service = (runnerLine: string, catchBody: string) => `${ENTITY}
export class Shipper {
  constructor(private readonly ds: DataSource) {}
  async once(): Promise<void> {
    const runner = this.ds.createQueryRunner();
    ${runnerLine}
    await runner.startTransaction();
    try {
      const parcel = await this.pick(manager);
      await ship(parcel);
      await this.mark(parcel, manager);
      await runner.commitTransaction();
    } catch (error) {
      ${catchBody}
    } finally {
      await runner.release();
    }
  }
  private async pick(em: EntityManager): Promise<Parcel> {
    return em.createQueryBuilder(Parcel, 'p').where("p.state = 'new'").setLock('pessimistic_write').setOnLocked('skip_locked').getOne();
  }
  private async mark(p: Parcel, em: EntityManager): Promise<void> {
    await em.update(Parcel, { id: p.id }, { state: 'shipped' });
  }
  private async bump(p: Parcel, em: EntityManager): Promise<void> {
    await em.increment(Parcel, { id: p.id }, 'tries', 1);
  }
}`;

test("a helper walked at its caller's call first still records its own query in its own walk", () => {
  for (const runnerLine of ['const manager = runner.manager;', 'const { manager } = runner;']) {
    const model = parse(service(runnerLine, 'await runner.rollbackTransaction(); throw error;'));
    const byFunction = new Map(model.sites.map((s) => [s.functionName, s]));
    assert.ok(byFunction.get('pick'), runnerLine);
    assert.ok(byFunction.get('mark'), runnerLine);
    assert.equal(byFunction.get('mark')?.analysis.statements[0].kind, 'UpdateStmt');
  }
});

test('the claim and the finish of helpers handed the runner make the caller a one-transaction job; destructured or not', () => {
  for (const runnerLine of ['const manager = runner.manager;', 'const { manager } = runner;']) {
    const model = parse(service(runnerLine, 'await runner.rollbackTransaction(); throw error;'));
    assert.equal(model.jobTransactions.length, 1, runnerLine);
    assert.equal(model.jobTransactions[0].failureCountedOutside, false);
  }
});

test('a count by a helper in the catch: inside before the rollback, outside after it', () => {
  const before = parse(service('const { manager } = runner;', 'await this.bump(parcel, manager); await runner.rollbackTransaction(); throw error;'));
  assert.ok(before.jobTransactions[0]?.failureCountedInside);
  assert.equal(before.jobTransactions[0]?.failureCountedGoesOn, undefined);
  const after = parse(service('const { manager } = runner;', 'await runner.rollbackTransaction(); await this.bump(parcel, manager); throw error;'));
  assert.equal(after.jobTransactions[0]?.failureCountedOutside, true);
});

test('a count in a catch that goes on with the transaction open commits with it: counted outside', () => {
  const source = (catchBody: string) => `${ENTITY}
export class Shipper {
  constructor(private readonly ds: DataSource) {}
  async batch(): Promise<void> {
    const runner = this.ds.createQueryRunner();
    const { manager } = runner;
    await runner.startTransaction();
    try {
      const parcels = await this.pickMany(manager);
      for (const parcel of parcels) {
        try {
          await ship(parcel);
          await this.mark(parcel, manager);
        } catch (error) {
          ${catchBody}
        }
      }
      await runner.commitTransaction();
    } catch (error) {
      await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
  }
  private async pickMany(em: EntityManager): Promise<Parcel[]> {
    return em.createQueryBuilder(Parcel, 'p').where("p.state = 'new'").setLock('pessimistic_write').setOnLocked('skip_locked').limit(10).getMany();
  }
  private async mark(p: Parcel, em: EntityManager): Promise<void> {
    await em.update(Parcel, { id: p.id }, { state: 'shipped' });
  }
  private async bump(p: Parcel, em: EntityManager): Promise<void> {
    await em.increment(Parcel, { id: p.id }, 'tries', 1);
  }
}`;
  assert.equal(parse(source('await this.bump(parcel, manager);')).jobTransactions[0]?.failureCountedOutside, true);
  // Work handed the transaction's own manager may fail on its SQL: the transaction is aborted, the count fails with it.
  const onConnection = parse(source('await this.bump(parcel, manager);').replace('await ship(parcel);', 'await shipWith(manager, parcel);').replace('declare function ship', 'declare function shipWith(m: EntityManager, p: Parcel): Promise<void>;\ndeclare function ship'));
  assert.equal(onConnection.jobTransactions[0]?.failureCountedOutside, false);
  assert.ok(onConnection.jobTransactions[0]?.failureCountedInside);
  // That catch goes on: no ROLLBACK takes the count back, the aborted transaction does (the message says which).
  assert.equal(onConnection.jobTransactions[0]?.failureCountedGoesOn, true);
  const rethrows = parse(source('await this.bump(parcel, manager); throw error;')).jobTransactions[0];
  assert.equal(rethrows?.failureCountedOutside, false);
  assert.ok(rethrows?.failureCountedInside);
  assert.equal(rethrows?.failureCountedGoesOn, undefined);
});
