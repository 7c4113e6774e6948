// Proof for no-discard-all-with-prepared-statements on TS (DESIGN.md F5, F8):
// - node-postgres: the bad fixture's DISCARD ALL drops its named query, and
//   the next job on the connection fails with prepared statement
//   "count-invoices" does not exist — every job after it too.
// - postgres.js (prepare on): after DISCARD ALL a query outside a transaction
//   recovers (postgres.js retries once), but inside sql.begin the first failure
//   has aborted the transaction, so the retry fails and so does the job.
// - the good fixture's RESET keeps named queries; prepare: false caches nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let badPostgres: Record<string, any>;
let good: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-discard-all-with-prepared-statements/bad.ts', db.workerUrl);
  badPostgres = await importFixture('no-discard-all-with-prepared-statements/bad-postgres.ts', db.workerUrl);
  good = await importFixture('no-discard-all-with-prepared-statements/good.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, badPostgres, good].filter(Boolean));
  await db?.stop();
});

test('bad fixture (pg): the job after DISCARD ALL fails, and keeps failing', async () => {
  assert.equal(await bad.runJob(1), 20000);
  await assert.rejects(bad.runJob(2), /prepared statement "count-invoices" does not exist/);
  await assert.rejects(bad.runJob(3), /prepared statement "count-invoices" does not exist/);
});

test('bad fixture (postgres.js): the retry cannot happen inside sql.begin — the next job fails', async () => {
  assert.equal(await badPostgres.runJob(1), 20000);
  await assert.rejects(badPostgres.runJob(2), (error: { code?: string; message: string }) => {
    assert.equal(error.code, '26000');
    assert.match(error.message, /prepared statement ".+" does not exist/);
    return true;
  });
});

test('postgres.js outside a transaction: DISCARD ALL, then the same prepared query succeeds (the retry)', async () => {
  assert.equal(await good.report(), 0);
  assert.equal(await good.report(), 0);
  assert.equal(await good.report(), 0);
});

test('good fixture: RESET keeps the named query; prepare: false survives DISCARD ALL inside and after sql.begin', async () => {
  assert.equal(await good.runJob(1), 20000);
  assert.equal(await good.runJob(2), 10000);
  await good.cleanUp();
  await good.cleanUp();
});
