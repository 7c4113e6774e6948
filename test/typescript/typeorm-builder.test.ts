// TypeORM's query builder and its manager's writes are read as the SQL they
// send: a select with setLock('pessimistic_write') + setOnLocked('skip_locked')
// is a locking read, `.update(E).set({...}).where(...)`, `m.update(E, criteria,
// partial)` and `m.increment(E, criteria, 'col', n)` are UPDATEs. The table and
// columns come from the entity's decorators when the scan holds the class, else
// from TypeORM's default naming (table: the class name in snake_case; column:
// the property name). Where the entity is unknown (a parameter, a lowercase
// value) the call is no query the scan reads.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const statementsOf = (text: string) =>
  typescriptFrontEnd
    .parse(text, '/virtual/worker.ts', {})
    .sites.flatMap((s) => s.analysis.statements.map((st) => ({ fn: s.functionName, scope: s.scope.kind, locks: st.lockingReads, writes: st.rowWrites })));

const ENTITY = `
import { Column, DataSource, Entity, EntityManager, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { InjectRepository } from '@nestjs/typeorm';
@Entity('jobs', { schema: 'queue' })
export class Job {
  @PrimaryGeneratedColumn() id!: number;
  @Column() status!: string;
  @Column({ name: 'attempt_count' }) attempts!: number;
  @Column({ name: 'run_at' }) runAt!: Date;
}
export const dataSource = new DataSource({ type: 'postgres' });
`;

test('a query builder select with pessimistic_write + skip_locked is a locking read of the entity table, columns by their decorators', () => {
  const [claim] = statementsOf(`${ENTITY}
export async function claim() {
  return dataSource.transaction(async (manager) => {
    return manager.createQueryBuilder(Job, 'job')
      .where('job.status = :status', { status: 'queued' })
      .andWhere('job.attempts < :max', { max: 5 })
      .orderBy('job.runAt', 'ASC')
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
  });
}`);
  assert.equal(claim.scope, 'transaction');
  assert.equal(claim.locks.length, 1);
  const read = claim.locks[0];
  assert.deepEqual([read.tables, read.schemas, read.strength, read.skipLocked], [['jobs'], ['queue'], 'update', true]);
  assert.deepEqual(
    read.where.map((c) => [c.column, c.op, c.value.kind]),
    [
      ['status', '=', 'literal'],
      ['attempt_count', '<', 'literal'],
    ],
  );
});

test('a select that locks nothing is not read; a builder held in a const and run later is one query', () => {
  const statements = statementsOf(`${ENTITY}
export async function list(manager: EntityManager) {
  return manager.createQueryBuilder(Job, 'job').where('job.status = :s', { s: 'queued' }).getMany();
}
export async function held(manager: EntityManager) {
  const qb = manager.getRepository(Job).createQueryBuilder('job').where('job.status = :s', { s: 'queued' }).setLock('pessimistic_write').setOnLocked('skip_locked');
  return qb.getMany();
}`);
  assert.deepEqual(
    statements.map((s) => [s.fn, s.locks.length]),
    [['held', 1]],
  );
});

test('update().set().where(), manager.update and increment are UPDATEs; () => "sql" is SQL, not a string', () => {
  const writes = statementsOf(`${ENTITY}
export async function finish(id: number) {
  await dataSource.manager.update(Job, { id, status: 'running' }, { status: 'done' });
}
export async function count(id: number) {
  await dataSource.manager.increment(Job, { id }, 'attempts', 1);
}
export async function retry(id: number) {
  await dataSource.createQueryBuilder().update(Job).set({ status: 'queued', attempts: () => 'attempt_count + 1' }).where('id = :id', { id }).execute();
}`).flatMap((s) => s.writes.map((w) => ({ fn: s.fn, table: w.table, set: w.assignments.map((a) => [a.column, a.value.kind]), where: w.where.map((c) => c.column) })));
  assert.deepEqual(writes, [
    { fn: 'finish', table: 'jobs', set: [['status', 'literal']], where: ['id', 'status'] },
    { fn: 'count', table: 'jobs', set: [['attempt_count', 'increment']], where: ['id'] },
    { fn: 'retry', table: 'jobs', set: [['status', 'literal'], ['attempt_count', 'increment']], where: ['id'] },
  ]);
});

test('an entity the scan does not hold takes TypeORM default naming; a repository a Nest class is injected with is read', () => {
  const writes = statementsOf(`
import { Repository } from 'typeorm';
import { InjectRepository } from '@nestjs/typeorm';
import { OutboxEvent } from './unscanned';
export class Relay {
  constructor(@InjectRepository(OutboxEvent) private readonly events: Repository<OutboxEvent>) {}
  async sent(id: string) {
    await this.events.update({ id }, { status: 'sent' });
  }
}`).flatMap((s) => s.writes.map((w) => [s.scope, w.table, w.assignments.map((a) => a.column)]));
  assert.deepEqual(writes, [['autocommit', 'outbox_event', ['status']]]);
});

test('stays quiet where the entity is not known: a parameter, or a criteria value without a known primary column', () => {
  const statements = statementsOf(`
import { EntityManager, EntityTarget } from 'typeorm';
export async function claim(manager: EntityManager, target: EntityTarget<unknown>) {
  return manager.createQueryBuilder(target, 'job').setLock('pessimistic_write').setOnLocked('skip_locked').getMany();
}
export async function finish(manager: EntityManager, id: number) {
  await manager.update(UnknownJob, id, { status: 'done' });
}
declare const UnknownJob: unknown;`);
  assert.deepEqual(statements, []);
});

test('save of an entity a query builder read loaded is an UPDATE of what changed since the load or the last save, by its primary column', () => {
  const writes = statementsOf(`${ENTITY}
declare function work(job: Job): Promise<void>;
export async function run() {
  await dataSource.transaction(async (manager) => {
    const job = await manager.createQueryBuilder(Job, 'job').where('job.status = :s', { s: 'queued' }).setLock('pessimistic_write').setOnLocked('skip_locked').getOne();
    if (!job) return;
    job.attempts += 1;
    job.status = 'running';
    await manager.save(job);
    await work(job);
    job.status = 'done';
    await manager.save(job);
  });
}
export async function fresh(manager: EntityManager, job: Job) {
  job.status = 'done';
  await manager.save(job);
}`).flatMap((s) => s.writes.map((w) => ({ fn: s.fn, table: w.table, set: w.assignments.map((a) => [a.column, a.value.kind]), where: w.where.map((c) => c.column) })));
  assert.deepEqual(writes, [
    { fn: 'run', table: 'jobs', set: [['attempt_count', 'increment'], ['status', 'literal']], where: ['id'] },
    { fn: 'run', table: 'jobs', set: [['status', 'literal']], where: ['id'] },
  ]);
});

test("find/findOne with a lock option are locking reads (where, order, take); without one, or with an optimistic lock, they are not read", () => {
  const statements = statementsOf(`${ENTITY}
export async function many(manager: EntityManager) {
  return manager.find(Job, { where: { status: 'queued' }, order: { runAt: 'ASC' }, take: 10, lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' } });
}
export async function one(manager: EntityManager) {
  return manager.getRepository(Job).findOne({ where: { status: 'queued' }, lock: { mode: 'pessimistic_write' } });
}
export async function plain(manager: EntityManager) {
  return manager.find(Job, { where: { status: 'queued' }, take: 10 });
}
export async function optimistic(manager: EntityManager) {
  return manager.findOne(Job, { where: { id: 1 }, lock: { mode: 'optimistic', version: 3 } });
}`);
  assert.deepEqual(
    statements.map((s) => [s.fn, s.locks.length]),
    [
      ['many', 1],
      ['one', 1],
    ],
  );
  const [many, one] = statements;
  assert.deepEqual([many.locks[0].tables, many.locks[0].skipLocked, many.locks[0].where.map((c) => c.column)], [['jobs'], true, ['status']]);
  assert.equal(one.locks[0].skipLocked, false);
});
