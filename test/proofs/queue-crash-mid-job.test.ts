// Proof: a worker process killed in the middle of a job (a child process that
// calls process.exit(1) during the work), with the fixtures' own statements on
// PostgreSQL 17.10. One-transaction dequeue: the counted attempt dies with the
// connection, so the job comes back with attempts 0 every time, for ever.
// Lease design (2 s lease): the claim committed the attempt, so after 3
// crashes the job is no longer eligible and the dead sweep retires it.
// require-claim-attempt-limit's bad claims: the one that takes expired leases
// back without counting hands the same job to every worker with attempts 0;
// the one that counts but has no limit hands it out past max_attempts.
// Every wait is bounded: a bug fails in seconds, not at CI's limit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const ONE = 'queue/designs/one-transaction.sql';
const LEASE = 'queue/good/lease-design.sql';
const NO_LIMIT = 'queue/require-claim-attempt-limit/bad.sql';
/** How long any wait may take: the lease is 2 s, a worker starts in well under a second. */
const WAIT_MS = 15_000;
const worker = join(import.meta.dirname, '../queue/support/crash-worker.mjs');

let db: TestDatabase;
let client: pg.Client;
let jobId: number;
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
  jobId = Number((await client.query("insert into jobs (tenant_id, kind) values (1, 'crasher') returning id")).rows[0].id);
});

interface Run {
  code: number | null;
  claimed: { id: number; attempts: number } | null;
}

function runWorker(design: 'one-transaction' | 'lease', statements: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker], {
      env: { ...process.env, PGQ_URL: db.workerUrl, PGQ_DESIGN: design, PGQ_STATEMENTS: JSON.stringify(statements) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // A worker that neither crashes nor exits is a bug of the proof: kill it and fail.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the worker did not exit within ${WAIT_MS} ms`));
    }, WAIT_MS);
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, claimed: JSON.parse(out.trim() || 'null') });
    });
  });
}

/** Waits (on rows, not on a clock) until `sql` returns true; fails after WAIT_MS. */
async function until(sql: string, params: unknown[] = []): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if ((await client.query(sql, params)).rows[0]?.ok === true) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not true within ${WAIT_MS} ms: ${sql}`);
}
// The server has ended the dead worker's session (and with it its transaction and row locks).
const sessionGone = () => until("select count(*) = 0 as ok from pg_stat_activity where application_name = 'pgq-crash-worker'");

test('one-transaction dequeue: 5 crashes, the same job each time, back with attempts 0 every time', { timeout: 60_000 }, async () => {
  const statements = { dequeue: namedStatement(ONE, 'dequeue'), countAttempt: namedStatement(ONE, 'count_attempt') };
  const seen: [number | null, number | null, number][] = [];
  for (let i = 0; i < 5; i++) {
    const run = await runWorker('one-transaction', statements);
    await sessionGone();
    const row = (await client.query('select status, attempts from jobs where id = $1', [jobId])).rows[0];
    seen.push([run.code, run.claimed?.id ?? null, row.attempts]);
    assert.equal(row.status, 'queued');
  }
  // Each worker counted attempt 1 inside its transaction, died, and the count died with it.
  assert.deepEqual(seen, Array(5).fill([1, jobId, 0]));
});

test('lease design: attempts 1, 2, 3 survive the crashes; then the job is ineligible and the sweep marks it dead', { timeout: 60_000 }, async () => {
  const statements = { claim: namedStatement(LEASE, 'claim_job') };
  const claims: (number | null)[] = [];
  for (let i = 0; i < 4; i++) {
    const run = await runWorker('lease', statements);
    claims.push(run.claimed?.attempts ?? null);
    if (!run.claimed) break;
    assert.equal(run.code, 1);
    await sessionGone();
    // The next worker can take the job back once its lease has expired.
    await until('select locked_until < now() as ok from jobs where id = $1', [jobId]);
  }
  assert.deepEqual(claims, [1, 2, 3, null]);
  assert.deepEqual((await client.query('select status, attempts from jobs where id = $1', [jobId])).rows[0], { status: 'running', attempts: 3 });
  // Without the sweep it would stay 'running' for ever (require-dead-sweep).
  assert.equal((await client.query(namedStatement(LEASE, 'sweep_dead'))).rowCount, 1);
  assert.equal((await client.query('select status from jobs where id = $1', [jobId])).rows[0].status, 'dead');
});

/** Crashes `times` workers on the claim `statement`, each after the last one's lease has expired; the attempts each claimed. */
async function crashLoop(statement: string, times: number): Promise<(number | null)[]> {
  const claims: (number | null)[] = [];
  for (let i = 0; i < times; i++) {
    const run = await runWorker('lease', { claim: statement });
    claims.push(run.claimed?.attempts ?? null);
    if (!run.claimed) break;
    assert.equal(run.claimed.id, jobId, 'the same job, every time');
    assert.equal(run.code, 1);
    await sessionGone();
    if (i < times - 1) await until('select locked_until < now() as ok from jobs where id = $1', [jobId]);
  }
  return claims;
}

test('require-claim-attempt-limit bad claim (limit, no increment): the job that crashes is handed to every worker with attempts 0', { timeout: 60_000 }, async () => {
  // Three workers, each killed by the same job: the limit (attempts < max_attempts, 3) is never reached.
  assert.deepEqual(await crashLoop(namedStatement(NO_LIMIT, 'claim_job_uncounted'), 3), [0, 0, 0]);
  assert.deepEqual((await client.query('select status, attempts from jobs where id = $1', [jobId])).rows[0], { status: 'running', attempts: 0 });
});

test('require-claim-attempt-limit bad claim (increment, no limit): the job is handed out past max_attempts (3)', { timeout: 60_000 }, async () => {
  assert.deepEqual(await crashLoop(namedStatement(NO_LIMIT, 'claim_job'), 4), [1, 2, 3, 4]);
});
