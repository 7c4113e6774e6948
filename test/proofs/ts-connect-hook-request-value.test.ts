// Proof for no-session-tenant-setting on TS, pg 8 on PostgreSQL 17.10: a pool's
// connect hook writes the tenant of the request that opened the connection
// (its AsyncLocalStorage store) at session level. On a pool of one connection,
// tenant 1's job opens it; the jobs of tenants 2 and 3 reuse it, the hook does
// not run again, and they count tenant 1's 20,000 invoices. The good fixture's
// jobs set their tenant with set_config(..., true) in their own transaction:
// 20,000, 10,000, 6,666.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-session-tenant-setting/bad-connect-hook-request-value.ts', db.workerUrl);
  good = await importFixture('no-session-tenant-setting/good-connect-hook-request-value.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good].filter(Boolean));
  await db?.stop();
});

test("bad fixture: the connect hook's request tenant is every later job's on that connection", async () => {
  const seen: number[] = [];
  for (const tenantId of ['1', '2', '3']) seen.push(await bad.countFor(tenantId));
  assert.deepEqual(seen, [20000, 20000, 20000]);
});

test('good fixture: each job sets its tenant for its own transaction and reads its own rows', async () => {
  const seen: number[] = [];
  for (const tenantId of ['1', '2', '3']) seen.push(await good.countFor(tenantId));
  assert.deepEqual(seen, [20000, 10000, 6666]);
});
