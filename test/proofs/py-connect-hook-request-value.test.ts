// SQLAlchemy 1.4 + psycopg2 on PostgreSQL 17.10, run on the fixtures of
// no-session-tenant-setting: an engine's "connect" listener writes the tenant
// of the job that opened the connection (a ContextVar) at session level. On a
// pool of one connection, tenant 1's job opens it; the jobs of tenants 2 and 3
// reuse it, the listener does not run again, and they count tenant 1's 20,000
// invoices under the RLS policy. The good fixture sets each job's tenant with
// set_config(..., true) in its own transaction: 20,000, 10,000, 6,666, and the
// connection holds no tenant afterwards.
// psycopg_pool's configure= is not such a hook: the pool runs it in its own
// worker thread, where the job's thread-local holds nothing (psycopg 3.1.7,
// psycopg_pool 3.1.5): each job counts 0 and the connection holds ''.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

let db: TestDatabase;
let out: ProofOutput<{ bad: number[]; badLeft: string | null; good: number[]; goodLeft: string | null }>;
let psycopg: ProofOutput<Record<'worker' | 'good', { counts: number[]; left: string | null }>>;

before(async () => {
  db = await startTestDatabase();
  out = await runProof('connect-hook', db.workerUrl, 'sqlalchemy');
  psycopg = await runProof('configure-hook', db.workerUrl, 'psycopg');
});
after(async () => {
  await db?.stop();
});

test("a connect hook's request value is every later job's tenant on that connection", { timeout: 180_000 }, () => {
  assert.match(String(out.sqlalchemy), /^1\.4\./);
  assert.deepEqual(out.result.bad, [20000, 20000, 20000], 'bad-connect-hook-request-value.py: tenants 2 and 3 count tenant 1');
  assert.equal(out.result.badLeft, '1', 'the connection still holds tenant 1');
});

test('each job setting its tenant for its own transaction reads its own rows', { timeout: 180_000 }, () => {
  assert.deepEqual(out.result.good, [20000, 10000, 6666], 'good-connect-hook-request-value.py');
  assert.equal(out.result.goodLeft, '', 'nothing left on the connection');
});

test("psycopg_pool's configure= runs in the pool's worker: no job's tenant reaches the connection", { timeout: 180_000 }, () => {
  assert.deepEqual(psycopg.result.worker, { counts: [0, 0, 0], left: '' }, 'good-configure-hook-pool-worker.py');
  assert.deepEqual(psycopg.result.good, { counts: [20000, 10000, 6666], left: '' }, 'good-configure-hook-fixed-value.py');
});
