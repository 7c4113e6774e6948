// Proof for no-local-setting-outside-transaction on TS (DESIGN.md F3): the bad
// fixture's set_config(..., true) / SET LOCAL run in autocommit (node-postgres
// and postgres.js), so the job's count right after sees 0 rows; the good
// fixture's BEGIN..COMMIT and sql.begin see the tenant's rows. The setting sent
// on the handle that opened the transaction (inside its callback), or beside
// the query in Promise.all, runs on a connection of its own: the job's count
// sees no tenant either. The same holds where a helper sets the tenant on the
// connection it is handed and its caller hands it one just checked out
// (bad-parameter-client.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
let badBeside: Record<string, any>;
let goodBeside: Record<string, any>;
let handed: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-local-setting-outside-transaction/bad.ts', db.workerUrl);
  good = await importFixture('no-local-setting-outside-transaction/good.ts', db.workerUrl);
  badBeside = await importFixture('no-local-setting-outside-transaction/bad-handle-beside-transaction.ts', db.workerUrl);
  goodBeside = await importFixture('no-local-setting-outside-transaction/good-handle-beside-transaction.ts', db.workerUrl);
  handed = await importFixture('no-local-setting-outside-transaction/bad-parameter-client.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good, badBeside, goodBeside, handed].filter(Boolean));
  await db?.stop();
});

test('bad fixture: node-postgres, the local setting ends with its own statement: 0 rows', async () => {
  assert.equal(await bad.countInvoices(1), 0);
});

test('bad fixture: postgres.js, SET LOCAL outside sql.begin: 0 rows', async () => {
  assert.equal(await bad.countWithPostgresJs(1), 0);
});

test('bad-parameter-client fixture: a helper sets the tenant on the client it is handed outside any transaction: 0 rows', async () => {
  assert.equal(await handed.countInvoices(1), 0);
  assert.equal(await handed.sumInvoices(1), null);
  assert.deepEqual(await handed.listInvoices(2), []);
  assert.equal(await handed.countWithReserved(3), 0);
});

test('good fixture: inside BEGIN..COMMIT and sql.begin the job sees its tenant', async () => {
  assert.equal(await good.countInvoices(1), 20000);
  assert.equal(await good.countWithPostgresJs(2), 10000);
  // …and nothing is left on the connection afterwards.
  const client = await good.pool.connect();
  assert.equal((await client.query('select count(*)::int as n from invoices')).rows[0].n, 0);
  client.release();
});

test('bad fixture: the setting on the pool inside the callback of the transaction it opened: 0 rows', async () => {
  assert.equal(await badBeside.countInOpenerCallback(1), 0);
});

test('bad fixture: the setting beside the query in Promise.all, each on a pool connection: 0 rows', async () => {
  assert.equal(await badBeside.countBesideSetting(1), 0);
});

test('good fixture: the setting and the query on the connection of the transaction see the tenant', async () => {
  assert.equal(await goodBeside.countInOpenerCallback(1), 20000);
  assert.equal(await goodBeside.countBesideSetting(2), 10000);
});
