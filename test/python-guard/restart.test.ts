// A server restart mid-run under the Python guard: 8 threads run jobs (1 in
// 10 leaking) on a guarded psycopg_pool ConnectionPool of 4 through a TCP
// proxy. After 200 jobs every backend is terminated and the proxy refuses
// new connections for a while (a restart, as the clients see it); then the
// server is back. Failures while it is down are the driver's and the pool's
// own errors, never a TenantLeakError; no dirty connection is handed out; the
// run recovers and finishes 300 more jobs. The same shape as
// test/guard/faults.test.ts for node-postgres.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { PgProxy } from '../guard/support.ts';
import { runProof } from './support.ts';

interface Restart {
  done: { before: number; down: number; after: number };
  dirty_handouts: number;
  failures: Record<string, number>;
  leak_errors: string[];
  failed_before: string[];
  reports: number;
  guard: { violations: number; check_errors: number };
  pool_size: number;
  pool_available: number;
}

let db: TestDatabase;
let proxy: PgProxy;
before(async () => {
  db = await startTestDatabase();
  proxy = await PgProxy.start(db.workerUrl);
});
after(async () => {
  await proxy?.close();
  await db?.stop();
});

test('a server restart mid-run: failures are driver errors, no dirty handout, the run recovers', { timeout: 300_000 }, async () => {
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  let restarted = false;
  try {
    // The proxy frames server messages; libpq's SSLRequest answer is one byte, so no SSL through it.
    const url = `${proxy.url(db.workerUrl)}?sslmode=disable`;
    const out = await runProof<Restart>('psycopg_pool_proofs.py', 'restart', [url], {
      timeoutMs: 240_000,
      onLine: (line, answer) => {
        if (line !== '{"event": "restart"}') return;
        restarted = true;
        void (async () => {
          proxy.refuse = true;
          await owner.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and usename = $2', [
            db.database,
            WORKER_ROLE,
          ]);
          await sleep(3000); // down for 3 s: jobs fail with the pool's timeout (2 s)
          proxy.refuse = false;
          answer('up\n');
        })();
      },
    });
    const r = out.result;
    console.log(`restart: ${JSON.stringify({ done: r.done, failures: r.failures, violations: r.guard.violations, check_errors: r.guard.check_errors })}`);
    assert.ok(restarted);
    assert.deepEqual(r.failed_before, [], 'nothing failed before the restart');
    assert.ok(r.done.before >= 200);
    assert.ok(r.done.after >= 300, `the run recovered: ${r.done.after} jobs after the restart`);
    assert.deepEqual(r.leak_errors, [], 'a fault is never reported as a leak');
    assert.equal(r.failures.TenantLeakError, undefined);
    const kinds = Object.keys(r.failures);
    assert.ok(kinds.length > 0, 'the restart failed some jobs');
    for (const kind of kinds) assert.match(kind, /^(OperationalError|PoolTimeout|AdminShutdown)$/, `a driver or pool error: ${kind}`);
    assert.equal(r.dirty_handouts, 0);
    assert.ok(r.guard.violations > 0, 'leaks were still caught around the restart');
    assert.equal(r.pool_available, r.pool_size, 'every connection is back in the pool');
  } finally {
    await owner.end();
  }
});
