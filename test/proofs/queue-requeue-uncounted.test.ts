// Proof: sweeps that put crashed jobs back in the queue without counting, on
// PostgreSQL 17.10, with the fixtures' own statements. A worker "crashes" by
// claiming a job and never finishing or failing it; the time its lease (or its
// heartbeat window) takes to run out is skipped by moving the time stamp back
// (the statements compare it with now(), so this is the same as waiting).
// - A fail path that counts failures and a sweep that re-queues without
//   counting: every crash comes back with attempts 0 (bad-sweep-uncounted.sql);
//   the sweep that counts retires the job after max_attempts (3) crashes.
// - Recovery through the workers' heartbeat: the jobs of a worker whose
//   last_seen is stale come back uncounted (bad-worker-heartbeat.sql); with the
//   claim counting and the sweep retiring at the limit, the job is dead after 3.
// - A rescue that reads the limit in a CASE (`case when attempts >=
//   max_attempts then 'dead' else 'queued' end`): with a claim that does not
//   count, the limit is never reached (bad-rescue-limit-uncounted-claim.sql);
//   where the CASE gives exhausted jobs 'running', they stay running and are
//   never claimed again (require-dead-sweep/bad-exhausted-left-running.sql).
// - A stalled-job sweep in one statement (a SKIP LOCKED CTE by a timeout per
//   kind, one CTE re-queueing under the requeue limit, one marking the rest
//   given up): without its requeue count the limit is never reached
//   (bad-requeue-stalled-uncounted.sql); with it, and nothing marking the
//   jobs at the limit, they are found again on every run and never end
//   (require-dead-sweep/bad-requeue-stalled-never-buried.sql).
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

const SWEEP_BAD = 'queue/require-claim-attempt-limit/bad-sweep-uncounted.sql';
const SWEEP_GOOD_CLAIM = 'projects/sweep-counts-good/queries/claim.sql';
const SWEEP_GOOD = 'projects/sweep-counts-good/queries/maintenance.sql';
const BEAT_BAD = 'queue/require-claim-attempt-limit/bad-worker-heartbeat.sql';
const BEAT_GOOD = 'queue/require-claim-attempt-limit/good-worker-heartbeat.sql';
const RESCUE_UNCOUNTED = 'queue/require-claim-attempt-limit/bad-rescue-limit-uncounted-claim.sql';
const RESCUE_COUNTED = 'queue/require-claim-attempt-limit/good-rescue-limit-counted-claim.sql';
const RESCUE_LEFT_RUNNING = 'queue/require-dead-sweep/bad-exhausted-left-running.sql';
const RESCUE_RETIRED = 'queue/require-dead-sweep/good-exhausted-retired.sql';
const STALLED_UNCOUNTED = 'queue/require-claim-attempt-limit/bad-requeue-stalled-uncounted.sql';
const STALLED_COUNTED = 'queue/require-claim-attempt-limit/good-requeue-stalled-counted.sql';
const STALLED_NEVER_BURIED = 'queue/require-dead-sweep/bad-requeue-stalled-never-buried.sql';
const STALLED_BURIED = 'queue/require-dead-sweep/good-requeue-stalled-buried.sql';

let db: TestDatabase;
let client: pg.Client;
let jobId: number;
before(async () => {
  db = await startTestDatabase();
  client = new pg.Client(db.ownerUrl);
  await client.connect();
  await client.query('alter table jobs add column worker_id text, add column started_at timestamptz, add column requeues int not null default 0, add column given_up_at timestamptz');
  await client.query("create table kinds (name text primary key, timeout_secs int not null); insert into kinds values ('crasher', 60)");
  await client.query('create table workers (id text primary key, last_seen timestamptz not null)');
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('truncate jobs, workers restart identity cascade');
  jobId = Number((await client.query("insert into jobs (kind) values ('crasher') returning id")).rows[0].id);
});

const job = async () => (await client.query('select status, attempts from jobs where id = $1', [jobId])).rows[0];

/** Claims with `claim`, lets the lease run out, runs `sweep`; four times. The attempts after each sweep. */
async function leaseCrashes(claim: string, sweep: string): Promise<{ claimed: boolean; attempts: number; status: string }[]> {
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const claimed = (await client.query(claim, [`worker-${i}`])).rowCount === 1;
    await client.query("update jobs set locked_until = now() - interval '1 second' where status = 'running'");
    await client.query(sweep);
    seen.push({ claimed, ...(await job()) });
  }
  return seen;
}

test('the fail path counts, the sweep does not: every crash comes back with attempts 0', { timeout: 30_000 }, async () => {
  const seen = await leaseCrashes(namedStatement(SWEEP_BAD, 'claim_job'), namedStatement(SWEEP_BAD, 'requeue_expired'));
  assert.deepEqual(seen, Array(4).fill({ claimed: true, attempts: 0, status: 'queued' }));
});

test('the sweep counts the crash: the job is dead after 3, and not claimed again', { timeout: 30_000 }, async () => {
  const seen = await leaseCrashes(namedStatement(SWEEP_GOOD_CLAIM, 'claim_job'), readFixture(SWEEP_GOOD));
  assert.deepEqual(seen, [
    { claimed: true, attempts: 1, status: 'queued' },
    { claimed: true, attempts: 2, status: 'queued' },
    { claimed: true, attempts: 3, status: 'dead' },
    { claimed: false, attempts: 3, status: 'dead' },
  ]);
});

test('a rescue with the limit in its CASE and a claim that does not count: every crash comes back with attempts 0', { timeout: 30_000 }, async () => {
  const seen = await leaseCrashes(namedStatement(RESCUE_UNCOUNTED, 'claim_job'), namedStatement(RESCUE_UNCOUNTED, 'rescue_expired'));
  assert.deepEqual(seen, Array(4).fill({ claimed: true, attempts: 0, status: 'queued' }));
});

test('the same rescue with a claim that counts, or with the CASE written from the other side: dead after 3', { timeout: 30_000 }, async () => {
  for (const fixture of [RESCUE_COUNTED, RESCUE_RETIRED]) {
    const seen = await leaseCrashes(namedStatement(fixture, 'claim_job'), namedStatement(fixture, 'rescue_expired'));
    assert.deepEqual(seen, [
      { claimed: true, attempts: 1, status: 'queued' },
      { claimed: true, attempts: 2, status: 'queued' },
      { claimed: true, attempts: 3, status: 'dead' },
      { claimed: false, attempts: 3, status: 'dead' },
    ], fixture);
    await client.query("update jobs set status = 'queued', attempts = 0, locked_by = null, locked_until = null");
  }
});

test("a rescue whose CASE gives exhausted jobs 'running': the job stays running, never claimed again and never ended", { timeout: 30_000 }, async () => {
  const seen = await leaseCrashes(namedStatement(RESCUE_LEFT_RUNNING, 'claim_job'), namedStatement(RESCUE_LEFT_RUNNING, 'rescue_expired'));
  assert.deepEqual(seen, [
    { claimed: true, attempts: 1, status: 'queued' },
    { claimed: true, attempts: 2, status: 'queued' },
    { claimed: true, attempts: 3, status: 'running' },
    { claimed: false, attempts: 3, status: 'running' },
  ]);
});

/** Claims with the fixture's claim, lets the job outlive its kind's timeout, runs its stalled sweep; five times. */
async function stalls(fixture: string): Promise<{ claimed: boolean; requeues: number; status: string; givenUp: boolean }[]> {
  const seen = [];
  for (let i = 0; i < 5; i++) {
    const claimed = (await client.query(namedStatement(fixture, 'claim_job'), [`worker-${i}`])).rowCount === 1;
    await client.query("update jobs set started_at = now() - interval '1 hour' where status = 'running'");
    await client.query(namedStatement(fixture, 'requeue_stalled'));
    const row = (await client.query('select requeues, status, given_up_at is not null as "givenUp" from jobs where id = $1', [jobId])).rows[0];
    seen.push({ claimed, ...row });
  }
  return seen;
}

test('a stalled-job sweep that does not count its requeues: the limit is never reached, the job comes back every time', { timeout: 30_000 }, async () => {
  assert.deepEqual(await stalls(STALLED_UNCOUNTED), Array(5).fill({ claimed: true, requeues: 0, status: 'queued', givenUp: false }));
});

test('the sweep counts and marks the jobs at the limit given up: after 3 requeues the job is left alone', { timeout: 30_000 }, async () => {
  for (const fixture of [STALLED_COUNTED, STALLED_BURIED]) {
    assert.deepEqual(await stalls(fixture), [
      { claimed: true, requeues: 1, status: 'queued', givenUp: false },
      { claimed: true, requeues: 2, status: 'queued', givenUp: false },
      { claimed: true, requeues: 3, status: 'queued', givenUp: false },
      { claimed: true, requeues: 3, status: 'running', givenUp: true },
      { claimed: false, requeues: 3, status: 'running', givenUp: true },
    ], fixture);
    await client.query("update jobs set status = 'queued', attempts = 0, requeues = 0, given_up_at = null, started_at = null, locked_by = null");
  }
});

test('the sweep counts but marks nothing at the limit: the job stays running, unmarked, and never ends', { timeout: 30_000 }, async () => {
  assert.deepEqual(await stalls(STALLED_NEVER_BURIED), [
    { claimed: true, requeues: 1, status: 'queued', givenUp: false },
    { claimed: true, requeues: 2, status: 'queued', givenUp: false },
    { claimed: true, requeues: 3, status: 'queued', givenUp: false },
    { claimed: true, requeues: 3, status: 'running', givenUp: false },
    { claimed: false, requeues: 3, status: 'running', givenUp: false },
  ]);
});

/** Worker i beats, claims, and dies (its last_seen goes stale); the orphan sweep runs; four times. */
async function workerCrashes(fixture: string): Promise<{ claimed: boolean; attempts: number; status: string }[]> {
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const worker = `worker-${i}`;
    await client.query('insert into workers (id, last_seen) values ($1, now())', [worker]);
    await client.query(namedStatement(fixture, 'beat'), [worker]);
    const claimed = (await client.query(namedStatement(fixture, 'claim_job'), [worker])).rowCount === 1;
    await client.query("update workers set last_seen = now() - interval '1 minute' where id = $1", [worker]);
    await client.query(namedStatement(fixture, 'requeue_orphans'));
    seen.push({ claimed, ...(await job()) });
  }
  return seen;
}

test("workers' heartbeat, the claim does not count: the job that kills its worker goes to the next one with attempts 0", { timeout: 30_000 }, async () => {
  assert.deepEqual(await workerCrashes(BEAT_BAD), Array(4).fill({ claimed: true, attempts: 0, status: 'queued' }));
});

test("workers' heartbeat, the claim counts and the sweep retires at the limit: dead after 3", { timeout: 30_000 }, async () => {
  assert.deepEqual(await workerCrashes(BEAT_GOOD), [
    { claimed: true, attempts: 1, status: 'queued' },
    { claimed: true, attempts: 2, status: 'queued' },
    { claimed: true, attempts: 3, status: 'dead' },
    { claimed: false, attempts: 3, status: 'dead' },
  ]);
});
