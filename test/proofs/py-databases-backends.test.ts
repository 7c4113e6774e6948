// databases (encode) 0.7.0 on PostgreSQL 17.10, run on the fixtures with
// one pool connection: outside a transaction each database call acquires a
// connection for itself, in autocommit, and what its release resets is the
// backend's. With aiopg (`postgresql+aiopg://`) nothing: a job's
// session-level set_config('app.tenant', ..., false) is still set for the
// next call, which reads tenant 1's invoices. With the default asyncpg
// backend, asyncpg's RESET ALL ends it. A transaction-local setting outside
// `database.transaction()` ends with its own call: the count after it sees no
// tenant. Rules: no-session-tenant-setting and
// no-local-setting-outside-transaction (src/languages/python/drivers/databases.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { setting: string | null; user: string; invoices: number };
type Run = { job: number; next: Seen };
let db: TestDatabase;
let session: ProofOutput<{ bad: Run; good: Run; default_backend: Run }>;
let local: ProofOutput<{ bad: Run; good: Run }>;

const TENANT_1_INVOICES = 20_000;
const NOBODY = { setting: '', user: WORKER_ROLE, invoices: 0 };

before(async () => {
  db = await startTestDatabase();
  session = await runProof('session', db.workerUrl, 'databases');
  local = await runProof('local', db.workerUrl, 'databases');
});
after(async () => {
  await db?.stop();
});

test("bad-databases (no-session-tenant-setting, aiopg backend): the next call on the pool reads tenant 1's invoices", { timeout: 180_000 }, () => {
  assert.equal(session.databases, '0.7.0');
  assert.equal(session.result.bad.job, TENANT_1_INVOICES);
  assert.deepEqual(session.result.bad.next, { setting: '1', user: WORKER_ROLE, invoices: TENANT_1_INVOICES });
});

test('good-databases (no-session-tenant-setting): inside database.transaction() the setting ends with the commit', { timeout: 180_000 }, () => {
  assert.equal(session.result.good.job, TENANT_1_INVOICES);
  assert.deepEqual(session.result.good.next, NOBODY);
});

test("good-databases (no-session-tenant-setting): the default asyncpg backend's release resets even a session setting", { timeout: 180_000 }, () => {
  assert.equal(session.result.default_backend.job, TENANT_1_INVOICES * 100);
  assert.deepEqual(session.result.default_backend.next, NOBODY);
});

test('bad-databases (no-local-setting-outside-transaction): the local setting ends with its own call; the count sees 0 invoices', { timeout: 180_000 }, () => {
  assert.equal(local.result.bad.job, 0);
});

test("good-databases (no-local-setting-outside-transaction): inside database.transaction() the count reads tenant 1's invoices", { timeout: 180_000 }, () => {
  assert.equal(local.result.good.job, TENANT_1_INVOICES);
  assert.deepEqual(local.result.good.next, NOBODY);
});
