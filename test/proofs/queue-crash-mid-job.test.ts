// Proof: a worker process killed in the middle of a job (a child process that
// calls process.exit(1) during the work), with the fixtures' own statements on
// PostgreSQL 17.10. One-transaction dequeue: the counted attempt dies with the
// connection, so the job comes back with attempts 0 every time, for ever.
// Lease design (2 s lease): the claim committed the attempt, so after 3
// crashes the job is no longer eligible and the dead sweep retires it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const ONE = 'queue/designs/one-transaction.sql';
const LEASE = 'queue/good/lease-design.sql';
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
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, claimed: JSON.parse(out.trim() || 'null') }));
  });
}

/** Waits (on rows, not on a clock) until `sql` returns true. */
async function until(sql: string, params: unknown[] = []): Promise<void> {
  for (;;) {
    if ((await client.query(sql, params)).rows[0]?.ok === true) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
// The server has ended the dead worker's session (and with it its transaction and row locks).
const sessionGone = () => until("select count(*) = 0 as ok from pg_stat_activity where application_name = 'pgq-crash-worker'");

test('one-transaction dequeue: 5 crashes, the same job each time, back with attempts 0 every time', async () => {
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

test('lease design: attempts 1, 2, 3 survive the crashes; then the job is ineligible and the sweep marks it dead', async () => {
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
