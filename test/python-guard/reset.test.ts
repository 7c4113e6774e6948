// F7 under the guard: a psycopg_pool reset= callback that runs SQL without
// autocommit leaves each returned connection INTRANS, and the pool discards it,
// so 300 jobs open 301 connections. The guard wraps the callback and reports
// each of them (on_report, or the pgq_audit.guard logger); a reset in
// autocommit keeps one connection and reports nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './support.ts';

interface ResetRun {
  jobs: number;
  connections: number;
  guard: { violations: number; reset_violations: number };
  guard_log: string[];
  pool_log: string[];
  reports: Array<{ transaction_status: string; reset_function: string; message: string }>;
}

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

// About 2 minutes on a loaded 2-CPU VM: psycopg_pool opens one connection per job, in its worker threads.
test('a reset callback without autocommit: 301 connections for 300 jobs, and each discarded connection is reported', { timeout: 480_000 }, async () => {
  const out = await runProof<{ reported: ResetRun; logged: ResetRun; autocommit: ResetRun }>('psycopg_pool_proofs.py', 'reset', [db.workerUrl], {
    timeoutMs: 420_000,
  });
  const { reported, logged, autocommit } = out.result;
  assert.equal(reported.connections, 301, 'psycopg_pool opened a connection per job, plus the first');
  assert.equal(reported.guard.reset_violations, 300);
  assert.equal(reported.reports.length, 300);
  for (const report of reported.reports) {
    assert.equal(report.transaction_status, 'T');
    assert.match(report.reset_function, /^reset_tenant \(.*psycopg_pool_proofs\.py:\d+\)$/);
    assert.match(report.message, /reset function reset_tenant .* left the connection \(backend pid \d+\) in status INTRANS; psycopg_pool discards/);
  }
  assert.equal(reported.pool_log.filter((m) => /left in status INTRANS by reset function <function reset_tenant/.test(m)).length, 300, "the pool's own warning still names the user's function");
  // Without on_report the guard logs the same on the pgq_audit.guard logger.
  assert.equal(logged.guard_log.filter((m) => /reset function reset_tenant .* in status INTRANS/.test(m)).length, logged.jobs);
  assert.equal(logged.connections, logged.jobs + 1);
  // The reset in autocommit keeps one connection and reports nothing.
  assert.equal(autocommit.connections, 1);
  assert.equal(autocommit.guard.reset_violations, 0);
  assert.equal(autocommit.guard.violations, 0, 'the reset cleared the tenant before the next checkout');
});
