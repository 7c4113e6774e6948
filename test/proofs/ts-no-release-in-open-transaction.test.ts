// Proof for no-release-in-open-transaction on TS (DESIGN.md F4): the bad
// fixture's runJob fails between BEGIN and COMMIT and only releases: the next
// checkout of the pool is inside that transaction, as tenant 1. The good
// fixture rolls back first: the next checkout is idle and sees nothing. The same
// for release(clientError) where only the client's 'error' handler sets
// clientError (bad-release-event-error.ts): a job that fails on its own leaves
// it undefined, and node-postgres takes the connection back as it is. And for
// a list of statements sent in turn (bad-statement-list.ts): the statement
// after BEGIN fails, and the finally hands back the open transaction. And for
// a pool wrapper that hands its client to a callback (bad-wrapper-callback.ts):
// the callback's transaction helper does not roll back when the work throws,
// and the wrapper's finally releases the client inside that transaction; the
// good twin's helper rolls back, or its wrapper destroys the client.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { defineGlobal, endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
let eventBad: Record<string, any>;
let eventGood: Record<string, any>;
let listBad: Record<string, any>;
let listGood: Record<string, any>;
let wrapBad: Record<string, any>;
let wrapGood: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  defineGlobal('handlers', {
    fail: async () => {
      throw new Error('the job failed');
    },
  });
  bad = await importFixture('no-release-in-open-transaction/bad.ts', db.workerUrl);
  good = await importFixture('no-release-in-open-transaction/good.ts', db.workerUrl);
  eventBad = await importFixture('no-release-in-open-transaction/bad-release-event-error.ts', db.workerUrl);
  eventGood = await importFixture('no-release-in-open-transaction/good-release-event-error.ts', db.workerUrl);
  listBad = await importFixture('no-release-in-open-transaction/bad-statement-list.ts', db.workerUrl);
  listGood = await importFixture('no-release-in-open-transaction/good-statement-list.ts', db.workerUrl);
  wrapBad = await importFixture('no-release-in-open-transaction/bad-wrapper-callback.ts', db.workerUrl);
  wrapGood = await importFixture('no-release-in-open-transaction/good-wrapper-callback.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good, eventBad, eventGood, listBad, listGood, wrapBad, wrapGood].filter(Boolean));
  await db?.stop();
});

/** What the next job's checkout finds: transaction status, whether it is an old transaction, the rows it sees. */
async function nextCheckout(pool: { connect(): Promise<any> }) {
  const client = await pool.connect();
  try {
    const status = client.getTransactionStatus();
    const { rows } = await client.query('select count(*)::int as n, now() <> statement_timestamp() as old from invoices');
    return { status, rows: rows[0].n, insideOldTransaction: rows[0].old };
  } finally {
    await client.query('rollback');
    client.release();
  }
}

test("bad fixture: after a failed job the next checkout inherits its transaction and tenant 1's 20,000 rows", async () => {
  await assert.rejects(bad.runJob({ id: 1, kind: 'fail', tenantId: 1 }), /the job failed/);
  assert.deepEqual(await nextCheckout(bad.pool), { status: 'T', rows: 20000, insideOldTransaction: true });
});

test('bad fixture: a catch that only logs leaves the transaction open too', async () => {
  const error = console.error;
  console.error = () => {};
  try {
    await bad.runLogged({ id: 1, kind: 'fail', tenantId: 2 });
  } finally {
    console.error = error;
  }
  assert.deepEqual(await nextCheckout(bad.pool), { status: 'T', rows: 10000, insideOldTransaction: true });
});

test('bad fixture: an early return between BEGIN and COMMIT leaves the transaction open', async () => {
  assert.equal(await bad.claimOne(), undefined); // no job queued
  const found = await nextCheckout(bad.pool);
  assert.equal(found.status, 'T');
  assert.equal(found.insideOldTransaction, true);
});

test('good fixture: the failed job is rolled back, the next checkout is idle and sees 0 rows', async () => {
  await assert.rejects(good.runJob({ id: 1, kind: 'fail', tenantId: 1 }), /the job failed/);
  assert.deepEqual(await nextCheckout(good.pool), { status: 'I', rows: 0, insideOldTransaction: false });
  assert.equal(await good.claimOne(), undefined);
  assert.equal((await nextCheckout(good.pool)).status, 'I');
});

const failingWork = async () => {
  throw new Error('the job failed');
};

test("bad-release-event-error fixture: release(clientError) with no client error takes the connection back inside the job's transaction", async () => {
  await assert.rejects(eventBad.inTenant(1, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(eventBad.pool), { status: 'T', rows: 20000, insideOldTransaction: true });
});

test('good-release-event-error fixture: rolled back before release(clientError), or destroyed by release(error): the next checkout is idle', async () => {
  await assert.rejects(eventGood.inTenant(1, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(eventGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
  await assert.rejects(eventGood.inTenantDestroyOnFailure(2, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(eventGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
});

/** An error PostgreSQL raised (the index cannot be built: no such column, or the worker does not own the table). */
const sqlError = (error: { code?: string }) => typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code);

test('bad-statement-list fixture: the statement after BEGIN fails, and the next job on the connection fails in that aborted transaction', async () => {
  await assert.rejects(listBad.migrate(), sqlError);
  const client = await listBad.pool.connect();
  try {
    // The next job's first statement fails: the connection is still in the migration's aborted transaction.
    // (getTransactionStatus() is not asked: node-postgres may reject the failed query before it reads the 'E'.)
    await assert.rejects(client.query('select count(*) from invoices'), /current transaction is aborted/);
  } finally {
    await client.query('rollback');
    client.release();
  }
});

test('good-statement-list fixture: rolled back before release, the next checkout is idle; a list with no BEGIN leaves nothing open', async () => {
  await assert.rejects(listGood.migrate(), sqlError);
  assert.deepEqual(await nextCheckout(listGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
  await listGood.tidy();
  assert.deepEqual(await nextCheckout(listGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
});

test("bad-wrapper-callback fixture: the helper's BEGIN is left open by the failing work, and the wrapper's release hands it to the next checkout", async () => {
  await assert.rejects(wrapBad.asTenant(1, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(wrapBad.pool), { status: 'T', rows: 20000, insideOldTransaction: true });
  const error = console.error;
  console.error = () => {};
  try {
    await assert.rejects(wrapBad.asTenantLogged(2, failingWork), /the job failed/);
  } finally {
    console.error = error;
  }
  assert.deepEqual(await nextCheckout(wrapBad.pool), { status: 'T', rows: 10000, insideOldTransaction: true });
});

test("bad-wrapper-callback fixture: the next job on that connection runs inside the leftover transaction, as the failed job's tenant", async () => {
  await assert.rejects(wrapBad.asTenant(3, failingWork), /the job failed/);
  const client = await wrapBad.pool.connect();
  try {
    // The next job opens no transaction of its own: its statement runs in the failed job's, as tenant 3.
    const { rows } = await client.query("select current_setting('app.tenant', true) as tenant, count(*)::int as n from invoices");
    assert.deepEqual(rows[0], { tenant: '3', n: 6666 });
  } finally {
    await client.query('rollback');
    client.release();
  }
});

test('good-wrapper-callback fixture: the helper rolls back, or the wrapper destroys the client: the next checkout is idle and sees 0 rows', async () => {
  await assert.rejects(wrapGood.asTenant(1, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(wrapGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
  await assert.rejects(wrapGood.asTenantDisposable(2, failingWork), /the job failed/);
  assert.deepEqual(await nextCheckout(wrapGood.pool), { status: 'I', rows: 0, insideOldTransaction: false });
  assert.equal(await wrapGood.countInvoices(), 0);
});
