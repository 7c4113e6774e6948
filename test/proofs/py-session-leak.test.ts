// F2 on psycopg 3 + psycopg_pool defaults: a session-level tenant setting
// survives a successful job (the pool's `with conn:` commits it) and not a
// failed one (rolled back with the job), so the next job runs as the last
// tenant whose job succeeded. Rule: no-session-tenant-setting. Runs the
// run_job of fixtures/python/no-session-tenant-setting/bad.py and good.py.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './python/run-python.ts';

interface Job {
  tenant: number;
  failed: boolean;
  next: { setting: string | null; rows: number };
}

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

test('psycopg pool: a session set_config leaks after a successful job, not after a failed one; a local one never', async () => {
  const out = await runProof<{ session: Job[]; local: Job[] }>('session-leak', db.workerUrl);
  const [job1, job2, job3] = out.result.session;
  assert.deepEqual(job1, { tenant: 1, failed: false, next: { setting: '1', rows: 20000 } }, 'job 1 committed tenant 1 on the connection');
  assert.deepEqual(job2, { tenant: 2, failed: true, next: { setting: '1', rows: 20000 } }, "job 2's setting rolled back with it: tenant 1 is still set");
  assert.deepEqual(job3, { tenant: 3, failed: false, next: { setting: '3', rows: 6666 } });
  for (const job of out.result.local) {
    assert.deepEqual(job.next, { setting: '', rows: 0 }, `tenant ${job.tenant}: the local setting ended with the job's transaction`);
  }
});
