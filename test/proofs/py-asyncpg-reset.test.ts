// asyncpg 0.27.0 on PostgreSQL 17.10, run on the fixtures: Pool.release()
// runs Connection.reset() — ROLLBACK if a transaction is open, then
// pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN *, RESET ALL (read from
// asyncpg/connection.py, _get_reset_query). RESET ALL resets custom
// settings and search_path, not the role: a job's SET ROLE (or
// set_config('role', ...)) reaches the next job on the connection, its
// set_config('app.tenant', ..., false) does not. And asyncpg's statement
// cache does not survive DISCARD ALL. Rules: no-session-tenant-setting
// (driverReset on the pool's config), no-discard-all-with-prepared-statements.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { setting: string | null; user: string; session_user?: string; search_path: string };
type Jobs = { job: number; error: string | null }[];
let db: TestDatabase;
let reset: ProofOutput<{ bad: Record<string, Seen>; good: Record<string, Seen> }>;
let discard: ProofOutput<{ bad: Jobs; good: Jobs }>;

before(async () => {
  db = await startTestDatabase();
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  try {
    // The tenant's role the fixtures switch to; two test files may create it at once.
    await owner.query(`do $$ begin create role pgq_tenant_role; exception when duplicate_object then null; end $$`).catch((error) => {
      if (!/already exists|duplicate key/.test(String(error))) throw error;
    });
    await owner.query(`grant pgq_tenant_role to ${WORKER_ROLE}; grant select on jobs to pgq_tenant_role`);
  } finally {
    await owner.end();
  }
  reset = await runProof('reset', db.workerUrl, 'asyncpg', db.ownerUrl);
  discard = await runProof('discard', db.workerUrl, 'asyncpg');
});
after(async () => {
  await db?.stop();
});

test('the role a job switches to survives asyncpg\'s reset: the next job runs as the tenant\'s role', { timeout: 180_000 }, () => {
  assert.equal(reset.asyncpg, '0.27.0');
  for (const job of ['run_job_as_role', 'run_job_set_config_role']) {
    assert.equal(reset.result.bad[job].user, 'pgq_tenant_role', job);
  }
});

test("SET SESSION AUTHORIZATION survives it too: the owner's pool hands the next job a session of the tenant's user", { timeout: 180_000 }, () => {
  assert.equal(reset.result.bad.run_job_as_user.user, WORKER_ROLE);
  assert.equal(reset.result.bad.run_job_as_user.session_user, WORKER_ROLE);
});

test('custom settings and search_path are reset on release, and SET LOCAL ROLE ends with its transaction', { timeout: 180_000 }, () => {
  assert.deepEqual(reset.result.good.run_job, { setting: '', user: WORKER_ROLE, search_path: '"$user", public', session_user: WORKER_ROLE });
  assert.deepEqual(reset.result.good.run_job_search_path, { setting: null, user: WORKER_ROLE, search_path: '"$user", public', session_user: WORKER_ROLE });
  assert.equal(reset.result.good.run_job_as_role.user, WORKER_ROLE);
});

test('DISCARD ALL breaks asyncpg\'s cached statements for every later job; statement_cache_size=0 does not', { timeout: 180_000 }, () => {
  assert.deepEqual(discard.result.bad.slice(0, 2).map((j) => j.error), [null, null]);
  for (const job of discard.result.bad.slice(2)) assert.match(String(job.error), /InvalidSQLStatementNameError: prepared statement "__asyncpg_stmt_\d+__" does not exist/);
  assert.deepEqual(discard.result.good.map((j) => j.error), [null, null, null, null]);
});
