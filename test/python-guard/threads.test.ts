// The guard under load: 20 threads x 5,000 checkouts on a guarded psycopg_pool
// ConnectionPool of 8 (on_violation="discard"), 1 job in 10 leaking its tenant
// for the session. Each job reads the tenant it was handed before setting its
// own: 0 dirty connections may be handed out, every leak is reported once,
// and at the end every connection is back in the pool and on the server
// (none leaked, none left open). About 3 minutes on a loaded 2-CPU VM: the
// ~10,000 reconnections (one per discarded connection) dominate.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './support.ts';

interface Threads {
  threads: number;
  checkouts_per_thread: number;
  seconds: number;
  jobs: number;
  leaking_jobs: number;
  dirty_handouts: number;
  errors: number;
  errors_seen: string[];
  reports: number;
  guard: { checkouts: number; checks: number; violations: number; check_errors: number };
  pool_size: number;
  pool_available: number;
  server_backends: number;
}

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

test('20 threads x 5,000 checkouts, 10 % leaking: 0 dirty handouts, every leak reported, 0 connections leaked', { timeout: 600_000 }, async () => {
  const { result: r } = await runProof<Threads>('psycopg_pool_proofs.py', 'threads', [db.workerUrl, db.ownerUrl], { timeoutMs: 600_000 });
  console.log(`threads: ${r.jobs} jobs (${r.leaking_jobs} leaking) in ${r.seconds} s, ${r.reports} reports, ${r.guard.checks} checks`);
  assert.equal(r.jobs, 20 * 5000);
  assert.deepEqual(r.errors_seen, []);
  assert.equal(r.errors, 0);
  assert.ok(r.leaking_jobs > 9000 && r.leaking_jobs < 11000, `about 10 % leaking: ${r.leaking_jobs}`);
  assert.equal(r.dirty_handouts, 0, 'no job was handed a connection with a tenant set');
  // The final sweep checks every connection once more, so each leak is found exactly once.
  assert.equal(r.guard.violations, r.leaking_jobs);
  assert.equal(r.reports, r.leaking_jobs);
  assert.equal(r.guard.check_errors, 0);
  assert.equal(r.pool_size, 8);
  assert.equal(r.pool_available, 8, 'every connection is back in the pool');
  assert.equal(r.server_backends, 8, 'the server holds exactly the pool\'s connections: every discarded one was closed');
});
