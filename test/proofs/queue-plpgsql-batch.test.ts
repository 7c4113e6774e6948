// Proof for no-attempts-in-rollback-scope on a PL/pgSQL dequeue function, on
// PostgreSQL 17.10, with the fixtures' own functions: a cron job's
// `for job in select ... for update skip locked loop ... delete ... end loop`
// with nothing that records a failure. Five calls with a poison job in the
// batch: each call fails on the poison job, each rolls back the whole batch,
// and after five calls every job is still queued with attempts 0. The good
// fixture's EXCEPTION block counts the failure: the batch is finished, the
// poison job is retired to 'dead' after max_attempts (3) calls.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
let client: pg.Client;
before(async () => {
  db = await startTestDatabase();
  client = new pg.Client(db.ownerUrl);
  await client.connect();
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('truncate jobs restart identity cascade');
  await client.query(`insert into jobs (kind, payload) values ('report', '{"n": 1}'), ('poison', '{"n": 2}'), ('report', '{"n": 3}')`);
});

/** Calls `select process_jobs()` five times (each call its own transaction, as pg_cron runs it); the outcome of each. */
async function fiveCalls(): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < 5; i++) {
    outcomes.push(await client.query('select process_jobs() as n').then((r) => `handled ${r.rows[0].n}`, (e: Error) => e.message));
  }
  return outcomes;
}
const jobs = async () => (await client.query('select kind, status, attempts from jobs order by id')).rows;

test('bad fixture: the poison job is taken by every call, and every call rolls back its whole batch', { timeout: 30_000 }, async () => {
  await client.query(readFixture('queue/no-attempts-in-rollback-scope/bad-plpgsql-batch.sql'));
  assert.deepEqual(await fiveCalls(), Array(5).fill('cannot handle job 2'));
  assert.deepEqual(await jobs(), [
    { kind: 'report', status: 'queued', attempts: 0 },
    { kind: 'poison', status: 'queued', attempts: 0 },
    { kind: 'report', status: 'queued', attempts: 0 },
  ]);
});

test('good fixture: the handler counts the failure, the batch is finished, the poison job is dead after 3 calls', { timeout: 30_000 }, async () => {
  await client.query(readFixture('queue/no-attempts-in-rollback-scope/good-plpgsql-batch.sql'));
  assert.deepEqual(await fiveCalls(), ['handled 2', 'handled 0', 'handled 0', 'handled 0', 'handled 0']);
  assert.deepEqual(await jobs(), [{ kind: 'poison', status: 'dead', attempts: 3 }]);
});
