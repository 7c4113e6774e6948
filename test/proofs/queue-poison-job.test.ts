// Proof: a poison job (the oldest, failing every time) under the two queue
// designs, with the fixtures' own statements on PostgreSQL 17.10.
// One-transaction dequeue: the attempt counted at the start rolls back with
// the failure, so 10 dequeues hand out the poison job 10 times, attempts stay
// 0 and the job behind it never runs. Lease design: the claim commits the
// attempt, the fail marks the job dead at max_attempts (3), the queue moves on.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const ONE = 'queue/designs/one-transaction.sql';
const LEASE = 'queue/good/lease-design.sql';

let db: TestDatabase;
let client: pg.Client;
let poison: number;
let next: number;
before(async () => {
  db = await startTestDatabase();
  client = new pg.Client(db.workerUrl);
  await client.connect();
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('delete from job_runs');
  await client.query('delete from jobs');
  const { rows } = await client.query<{ id: number }>(
    "insert into jobs (tenant_id, kind, run_at) values (1, 'poison', now() - interval '1 minute'), (2, 'report', now()) returning id",
  );
  [poison, next] = rows.map((r) => Number(r.id));
});

/** The work: a poison job throws. */
function work(job: { kind: string }): void {
  if (job.kind === 'poison') throw new Error('poison payload');
}

test('one-transaction dequeue: 10 dequeues, 10 times the poison job, attempts 0, the job behind it never runs', { timeout: 30_000 }, async () => {
  const dequeue = namedStatement(ONE, 'dequeue');
  const countAttempt = namedStatement(ONE, 'count_attempt');
  const finish = namedStatement(ONE, 'finish');
  const handedOut: number[] = [];
  for (let i = 0; i < 10; i++) {
    await client.query('begin');
    try {
      const { rows } = await client.query(dequeue);
      const job = rows[0];
      handedOut.push(Number(job.id));
      await client.query(countAttempt, [job.id]);
      await client.query('insert into job_runs (job_id, attempt) values ($1, $2)', [job.id, job.attempts + 1]);
      work(job);
      await client.query(finish, [job.id]);
      await client.query('commit');
    } catch {
      await client.query('rollback');
    }
  }
  assert.deepEqual(handedOut, Array(10).fill(poison));
  const { rows } = await client.query('select id, status, attempts from jobs order by id');
  assert.deepEqual(rows.map((r) => [Number(r.id), r.status, r.attempts]), [[poison, 'queued', 0], [next, 'queued', 0]]);
  assert.equal((await client.query('select count(*)::int as n from job_runs')).rows[0].n, 0, 'even the record of the runs rolled back');
});

test('lease design: the poison job is dead after 3 attempts and the job behind it runs', { timeout: 30_000 }, async () => {
  const claim = namedStatement(LEASE, 'claim_job');
  const finish = namedStatement(LEASE, 'finish_job');
  const fail = namedStatement(LEASE, 'fail_job');
  const handedOut: number[] = [];
  for (let i = 0; i < 10; i++) {
    const { rows } = await client.query(claim, ['worker-1']);
    if (rows.length === 0) break;
    const job = rows[0];
    handedOut.push(Number(job.id));
    await client.query('insert into job_runs (job_id, attempt) values ($1, $2)', [job.id, job.attempts]);
    try {
      work(job);
      assert.equal((await client.query(finish, [job.id, job.attempts, 'ok'])).rowCount, 1);
    } catch (error) {
      assert.equal((await client.query(fail, [job.id, job.attempts, (error as Error).message])).rowCount, 1);
    }
  }
  assert.deepEqual(handedOut, [poison, poison, poison, next]);
  const { rows } = await client.query('select id, status, attempts from jobs order by id');
  assert.deepEqual(rows.map((r) => [Number(r.id), r.status, r.attempts]), [[poison, 'dead', 3], [next, 'done', 1]]);
  assert.equal((await client.query('select count(*)::int as n from job_runs')).rows[0].n, 4);
});
