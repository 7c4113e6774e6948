// aiopg 1.4.0 on PostgreSQL 17.10, run on the fixtures: aiopg runs psycopg2
// in asynchronous mode, so every connection is in autocommit, and
// Pool.release() resets nothing (read from aiopg/pool.py and
// aiopg/connection.py). A job's session-level set_config('app.tenant', ...,
// false) is committed at once and is still set for the next job that
// acquires the connection: it reads the other tenant's invoices. A
// transaction-local setting sent outside `async with cur.begin()` ends with
// its own statement: the job's query runs with no tenant and, under the
// nullif policy, sees nothing. Rules: no-session-tenant-setting and
// no-local-setting-outside-transaction (the aiopg driver module,
// src/languages/python/drivers/aiopg.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { setting: string | null; user: string; invoices: number };
type Run = { job: number | null; next: Seen };
let db: TestDatabase;
let session: ProofOutput<{ bad: Run; good: Run }>;
let local: ProofOutput<{ bad: Run; good: Run }>;

const TENANT_1_INVOICES = 20_000;

before(async () => {
  db = await startTestDatabase();
  session = await runProof('session', db.workerUrl, 'aiopg');
  local = await runProof('local', db.workerUrl, 'aiopg');
});
after(async () => {
  await db?.stop();
});

test("bad-aiopg (no-session-tenant-setting): the next job on the connection runs as tenant 1 and reads tenant 1's invoices", { timeout: 180_000 }, () => {
  assert.equal(session.aiopg, '1.4.0');
  assert.equal(session.result.bad.job, TENANT_1_INVOICES);
  assert.deepEqual(session.result.bad.next, { setting: '1', user: WORKER_ROLE, invoices: TENANT_1_INVOICES });
});

test('good-aiopg (no-session-tenant-setting): the setting ends with `cur.begin()`; the next job sees no tenant and no rows', { timeout: 180_000 }, () => {
  assert.equal(session.result.good.job, TENANT_1_INVOICES);
  assert.equal(session.result.good.next.invoices, 0);
  assert.ok(!session.result.good.next.setting, JSON.stringify(session.result.good.next));
});

test('bad-aiopg (no-local-setting-outside-transaction): in autocommit the local setting is gone before the query, which counts 0 invoices', { timeout: 180_000 }, () => {
  assert.equal(local.result.bad.job, 0);
  assert.equal(local.result.bad.next.invoices, 0);
});

test("good-aiopg (no-local-setting-outside-transaction): inside `cur.begin()` the query counts tenant 1's invoices, and nothing stays on the connection", { timeout: 180_000 }, () => {
  assert.equal(local.result.good.job, TENANT_1_INVOICES);
  assert.ok(!local.result.good.next.setting, JSON.stringify(local.result.good.next));
  assert.equal(local.result.good.next.invoices, 0);
});
