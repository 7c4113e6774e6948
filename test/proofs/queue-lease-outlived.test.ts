// Proof: a job that runs longer than its lease (2 s), with the fixtures' own
// statements on PostgreSQL 17.10. Without a heartbeat a second worker claims
// it while the first still runs: it runs twice, and the first run's late
// finish overwrites the second run's result when the finish matches by id
// only (require-fenced-finish/bad.sql), while the fenced finish of the lease
// design matches no row. With the fenced heartbeat it runs once. Every wait
// is bounded: a bug fails in seconds.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const LEASE = 'queue/good/lease-design.sql';
const claim = namedStatement(LEASE, 'claim_job');
const heartbeat = namedStatement(LEASE, 'heartbeat');
const fencedFinish = namedStatement(LEASE, 'finish_job');
const unfencedFinish = namedStatement('queue/require-fenced-finish/bad.sql', 'finish_job_unfenced');

let db: TestDatabase;
let a: pg.Client;
let b: pg.Client;
let jobId: number;
before(async () => {
  db = await startTestDatabase();
  a = new pg.Client(db.workerUrl);
  b = new pg.Client(db.workerUrl);
  await Promise.all([a.connect(), b.connect()]);
});
after(async () => {
  await Promise.all([a?.end(), b?.end()]);
  await db?.stop();
});
beforeEach(async () => {
  await a.query('delete from job_runs');
  await a.query('delete from jobs');
  jobId = Number((await a.query("insert into jobs (tenant_id, kind) values (1, 'long report') returning id")).rows[0].id);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(client: pg.Client, worker: string): Promise<{ id: number; attempts: number } | undefined> {
  const job = (await client.query(claim, [worker])).rows[0];
  if (!job) return undefined;
  await client.query('insert into job_runs (job_id, attempt, worker) values ($1, $2, $3)', [job.id, job.attempts, worker]);
  return { id: Number(job.id), attempts: job.attempts };
}

/** A runs past its lease without a heartbeat; B polls the queue until it gets the job, runs it and finishes it (fenced). */
async function outliveTheLease(): Promise<{ first: { id: number; attempts: number }; second: { id: number; attempts: number } }> {
  const first = (await start(a, 'A'))!;
  let second: { id: number; attempts: number } | undefined;
  // The lease is 2 s: B gets the job within a few polls; 100 polls (10 s) without it is a bug.
  for (let poll = 0; !second && poll < 100; poll++) {
    await sleep(100);
    second = await start(b, 'B');
  }
  assert.ok(second, 'B never got the job after its lease expired');
  assert.equal((await b.query(fencedFinish, [second.id, second.attempts, 'result of B'])).rowCount, 1);
  return { first, second };
}

const runs = async () => (await a.query('select worker, attempt from job_runs where job_id = $1 order by id', [jobId])).rows.map((r) => [r.worker, r.attempt]);
const result = async () => (await a.query('select status, payload->>$2 as result from jobs where id = $1', [jobId, 'result'])).rows[0];

test('no heartbeat: the job runs twice, and the late unfenced finish overwrites the second run\'s result', { timeout: 30_000 }, async () => {
  const { first } = await outliveTheLease();
  assert.deepEqual(await runs(), [['A', 1], ['B', 2]]);
  // A's work ends now, after B's: its finish matches the job by id only.
  assert.equal((await a.query(unfencedFinish, [first.id, 'result of A'])).rowCount, 1);
  assert.deepEqual(await result(), { status: 'done', result: 'result of A' });
});

test('no heartbeat, fenced finish: the job still runs twice, but the late finish matches no row', { timeout: 30_000 }, async () => {
  const { first } = await outliveTheLease();
  assert.deepEqual(await runs(), [['A', 1], ['B', 2]]);
  assert.equal((await a.query(fencedFinish, [first.id, first.attempts, 'result of A'])).rowCount, 0);
  assert.deepEqual(await result(), { status: 'done', result: 'result of B' });
});

test('fenced heartbeat: the job runs once', { timeout: 30_000 }, async () => {
  const first = (await start(a, 'A'))!;
  const takenByB: number[] = [];
  // A works for 10 × 300 ms (past its 2 s lease), extending the lease each time; B keeps polling.
  for (let i = 0; i < 10; i++) {
    await sleep(300);
    assert.equal((await a.query(heartbeat, [first.id, first.attempts])).rowCount, 1);
    const job = await start(b, 'B');
    if (job) takenByB.push(job.id);
  }
  assert.deepEqual(takenByB, []);
  assert.equal((await a.query(fencedFinish, [first.id, first.attempts, 'result of A'])).rowCount, 1);
  assert.deepEqual(await runs(), [['A', 1]]);
  assert.deepEqual(await result(), { status: 'done', result: 'result of A' });
});
