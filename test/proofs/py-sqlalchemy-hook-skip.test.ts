// SQLAlchemy 1.4 + psycopg2 on PostgreSQL 17.10, run on the fixtures of
// no-session-tenant-setting: a Session's after_begin listener writes app.tenant
// at session level before every transaction, but returns first when no tenant
// is in context. On a pool of one connection, tenant 1's job commits, then a job
// with no tenant counts tenant 1's 20,000 invoices under the RLS policy. The good
// fixture's listener resets the setting on that path: the job counts 0.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

let db: TestDatabase;
let out: ProofOutput<{ bad: number[]; good: number[] }>;

before(async () => {
  db = await startTestDatabase();
  out = await runProof('hook-skip', db.workerUrl, 'sqlalchemy');
});
after(async () => {
  await db?.stop();
});

test("a hook that skips its session write hands the job with no tenant the previous tenant's rows", { timeout: 180_000 }, () => {
  assert.match(String(out.sqlalchemy), /^1\.4\./);
  assert.deepEqual(out.result.bad, [20000, 20000], 'bad-hook-skips-write.py: the job without a tenant counts tenant 1');
});

test('a hook that clears the setting where it has no tenant leaves that job none', { timeout: 180_000 }, () => {
  assert.deepEqual(out.result.good, [20000, 0], 'good-hook-writes-every-path.py');
});
