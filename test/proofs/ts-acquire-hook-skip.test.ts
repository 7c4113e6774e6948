// Proof for no-session-tenant-setting's checkout hooks that skip their write
// (PostgreSQL 17.10, pg 8.23): node-postgres' `acquire` hook writes app.tenant
// at session level on every checkout, but returns first when no tenant is in
// scope. On a pool of one connection, tenant 1's job counts its 20,000 invoices,
// then a job with no tenant counts the same 20,000 under the RLS policy. The good
// fixture's hook resets the setting on that path: the job with no tenant counts 0.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-session-tenant-setting/bad-acquire-hook-skips.ts', db.workerUrl);
  good = await importFixture('no-session-tenant-setting/good-acquire-hook-clears.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good].filter(Boolean));
  await db?.stop();
});

test("bad fixture: the job with no tenant gets the previous job's tenant from the acquire hook's skipped write", async () => {
  assert.deepEqual([await bad.runJob('1'), await bad.runJob(undefined), await bad.runJob('2'), await bad.runJob(undefined)], [20000, 20000, 10000, 10000]);
});

test('good fixture: the hook resets the setting where there is no tenant: that job reads no rows', async () => {
  assert.deepEqual([await good.runJob('1'), await good.runJob(undefined), await good.runJob('2'), await good.runJob(undefined)], [20000, 0, 10000, 0]);
});
