// Proof for no-attempts-in-rollback-scope on TS: ten runs of the bad
// fixture's one-transaction workOnce against a poison job (the oldest) and a
// good job behind it: the poison job is picked 10 times out of 10, its
// attempts are still 0, the good job never runs. The good fixture's lease
// claim gives the poison job max_attempts (3) runs, then runs the good job.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { defineGlobal, endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let owner: pg.Client;
let bad: Record<string, any>;
let badPostgres: Record<string, any>;
let good: Record<string, any>;
let goodCounted: Record<string, any>;
const picked: string[] = [];

before(async () => {
  db = await startTestDatabase();
  owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  const run = async (kind: string) => {
    picked.push(kind);
    if (kind === 'poison') throw new Error('poison job');
  };
  defineGlobal('handlers', { poison: () => run('poison'), noop: () => run('noop') });
  defineGlobal('perform', (kind: string) => run(kind));
  bad = await importFixture('no-attempts-in-rollback-scope/bad.ts', db.workerUrl);
  badPostgres = await importFixture('no-attempts-in-rollback-scope/bad-postgres.ts', db.workerUrl);
  good = await importFixture('no-attempts-in-rollback-scope/good.ts', db.workerUrl);
  goodCounted = await importFixture('no-attempts-in-rollback-scope/good-counted.ts', db.workerUrl);
});
beforeEach(async () => {
  picked.length = 0;
  await owner.query('truncate jobs restart identity cascade');
  await owner.query("insert into jobs (kind, tenant_id) values ('poison', 1), ('noop', 2)");
});
after(async () => {
  await endPools(...[bad, badPostgres, good, goodCounted].filter(Boolean));
  await owner?.end();
  await db?.stop();
});

async function runTimes(workOnce: () => Promise<unknown>, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await workOnce().catch(() => undefined);
}

async function jobs(): Promise<{ kind: string; status: string; attempts: number }[]> {
  return (await owner.query('select kind, status, attempts from jobs order by id')).rows;
}

test('bad fixture (pg): the poison job is picked 10 times out of 10 with attempts 0; the job behind it never runs', async () => {
  await runTimes(bad.workOnce, 10);
  assert.deepEqual(picked, Array(10).fill('poison'));
  assert.deepEqual(await jobs(), [
    { kind: 'poison', status: 'queued', attempts: 0 },
    { kind: 'noop', status: 'queued', attempts: 0 },
  ]);
});

test('bad fixture (postgres.js, claim by DELETE): the poison job comes back 10 times out of 10', async () => {
  await runTimes(badPostgres.workOnce, 10);
  assert.deepEqual(picked, Array(10).fill('poison'));
  assert.deepEqual((await jobs()).map((j) => j.kind), ['poison', 'noop']);
});

test('good fixture (lease claim): the poison job runs max_attempts times, then the job behind it runs', async () => {
  await runTimes(good.workOnce, 5);
  assert.deepEqual(picked, ['poison', 'poison', 'poison', 'noop']);
  assert.deepEqual(await jobs(), [
    { kind: 'poison', status: 'queued', attempts: 3 },
    { kind: 'noop', status: 'done', attempts: 1 },
  ]);
});

test('good fixture (failure counted after ROLLBACK): the poison job stops at max_attempts', async () => {
  await runTimes(goodCounted.workOnce, 5);
  assert.deepEqual(picked, ['poison', 'poison', 'poison', 'noop']);
  assert.deepEqual((await jobs())[0], { kind: 'poison', status: 'queued', attempts: 3 });
});
