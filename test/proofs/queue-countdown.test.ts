// Proof: a counter that counts down (`tries_left = tries_left - 1` at the
// claim), with the fixtures' own statements on PostgreSQL 17.10. A worker
// "crashes" by claiming a job and never finishing it; its lease running out is
// the time stamp moved back (the statements compare it with now()). Workers
// poll far more often than a sweep runs, so the crash loop claims again as
// soon as the lease has expired, and the sweep runs once at the end.
// - require-claim-attempt-limit/bad-countdown.sql stops at
//   `tries_left < max_attempts`, the test of a counter that counts up. For a
//   count down it is no limit: it stays true as the count goes below zero, so
//   a job that crashes its worker is claimed after every crash, whatever is
//   left of its budget (and it is false for a whole budget: a fresh job with
//   tries_left = max_attempts is never taken at all).
// - good-countdown.sql stops at `tries_left > 0`: the job runs as many times as
//   its budget, then no claim takes it and the sweep (`tries_left <= 0`)
//   retires it.
// - require-dead-sweep/bad-countdown.sql stops the claim at the budget but
//   nothing retires the job: it stays 'active' with an expired lease forever;
//   good-countdown.sql's sweep (`tries_left = 0`) marks it dead.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const LIMIT_BAD = 'queue/require-claim-attempt-limit/bad-countdown.sql';
const LIMIT_GOOD = 'queue/require-claim-attempt-limit/good-countdown.sql';
const SWEEP_BAD = 'queue/require-dead-sweep/bad-countdown.sql';
const SWEEP_GOOD = 'queue/require-dead-sweep/good-countdown.sql';

let db: TestDatabase;
let client: pg.Client;
before(async () => {
  db = await startTestDatabase({ seed: false });
  client = new pg.Client(db.ownerUrl);
  await client.connect();
  await client.query(`create table export_runs (
    id bigserial primary key,
    status text not null default 'waiting',
    tries_left int not null default 3,
    max_attempts int not null default 3,
    lease_expires_at timestamptz,
    worker_id text,
    created_at timestamptz not null default clock_timestamp())`);
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('truncate export_runs restart identity');
});

const enqueue = async (triesLeft: number) => Number((await client.query('insert into export_runs (tries_left) values ($1) returning id', [triesLeft])).rows[0].id);
const job = async (id: number) => (await client.query('select status, tries_left from export_runs where id = $1', [id])).rows[0];

/** `crashes` times: a worker claims (if the claim takes anything) and dies; the lease runs out. The counts the claims returned. */
async function crashLoop(claim: string, crashes: number): Promise<number[]> {
  const claimed: number[] = [];
  for (let i = 0; i < crashes; i++) {
    const { rows } = await client.query(claim, [`worker-${i}`]);
    if (rows[0]) claimed.push(rows[0].tries_left);
    await client.query("update export_runs set lease_expires_at = now() - interval '1 second' where status = 'active'");
  }
  return claimed;
}

test('counting down, limit `tries_left < max_attempts`: a job with 2 tries left is claimed after each of 6 crashes, its count going to -4', { timeout: 30_000 }, async () => {
  const id = await enqueue(2);
  assert.deepEqual(await crashLoop(namedStatement(LIMIT_BAD, 'take_export'), 6), [1, 0, -1, -2, -3, -4]);
  // The sweep retires it only when it runs between a crash and the next poll: here, after 6 runs on a budget of 2.
  await client.query(namedStatement(LIMIT_BAD, 'retire_exports'));
  assert.deepEqual(await job(id), { status: 'dead', tries_left: -4 });
});

test('counting down, limit `tries_left < max_attempts`: a fresh job (tries_left = max_attempts) is never claimed', { timeout: 30_000 }, async () => {
  const id = await enqueue(3);
  assert.deepEqual(await crashLoop(namedStatement(LIMIT_BAD, 'take_export'), 3), []);
  assert.deepEqual(await job(id), { status: 'waiting', tries_left: 3 });
});

test('counting down, limit `tries_left > 0`: claimed as many times as its budget, then the sweep retires it', { timeout: 30_000 }, async () => {
  const two = await enqueue(2);
  assert.deepEqual(await crashLoop(namedStatement(LIMIT_GOOD, 'take_export'), 6), [1, 0]);
  await client.query(namedStatement(LIMIT_GOOD, 'retire_exports'));
  assert.deepEqual(await job(two), { status: 'dead', tries_left: 0 });
  const fresh = await enqueue(3);
  assert.deepEqual(await crashLoop(namedStatement(LIMIT_GOOD, 'take_export'), 6), [2, 1, 0]);
  await client.query(namedStatement(LIMIT_GOOD, 'retire_exports'));
  assert.deepEqual(await job(fresh), { status: 'dead', tries_left: 0 });
});

test('counting down, no sweep: the job that crashed on its last try stays active with an expired lease', { timeout: 30_000 }, async () => {
  const id = await enqueue(3);
  assert.deepEqual(await crashLoop(namedStatement(SWEEP_BAD, 'take_export'), 6), [2, 1, 0]);
  const { rows } = await client.query('select status, tries_left, lease_expires_at < now() as expired from export_runs where id = $1', [id]);
  assert.deepEqual(rows[0], { status: 'active', tries_left: 0, expired: true });
});

test('counting down, sweep at `tries_left = 0`: the job is dead after its last try', { timeout: 30_000 }, async () => {
  const id = await enqueue(3);
  assert.deepEqual(await crashLoop(namedStatement(SWEEP_GOOD, 'take_export'), 6), [2, 1, 0]);
  assert.equal((await client.query(namedStatement(SWEEP_GOOD, 'retire_exports'))).rowCount, 1);
  assert.deepEqual(await job(id), { status: 'dead', tries_left: 0 });
});
