// Proof for no-session-tenant-setting on TS (DESIGN.md F1): the bad fixture's
// runJob, on the real node-postgres pool, leaves its tenant on the connection:
// the next checkout, setting nothing, counts that tenant's rows. The good
// fixture's local form in BEGIN..COMMIT leaves nothing. The same session write
// on a connection handed down through a lock wrapper's returned function
// leaks when the caller's connection is a pooled client it releases, and ends
// with the connection when it is a pg Client of the job's own that it ends.
// A session write undone by a finally block's RESET before the release leaves
// nothing either, on a failing job too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { waitUntil } from '../helpers/wait.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
let handedPooled: Record<string, any>;
let handedOwn: Record<string, any>;
let resetInFinally: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-session-tenant-setting/bad.ts', db.workerUrl);
  good = await importFixture('no-session-tenant-setting/good.ts', db.workerUrl);
  handedPooled = await importFixture('no-session-tenant-setting/bad-curried-pool-client.ts', db.workerUrl);
  handedOwn = await importFixture('no-session-tenant-setting/good-curried-script-client.ts', db.workerUrl);
  resetInFinally = await importFixture('no-session-tenant-setting/good-reset-in-finally.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good, handedPooled, handedOwn, resetInFinally].filter(Boolean));
  await db?.stop();
});

/** The next job on the pool: checks a client out, sets no tenant, counts invoices. */
async function nextCheckoutCount(pool: { connect(): Promise<any> }): Promise<number> {
  const client = await pool.connect();
  try {
    return (await client.query('select count(*)::int as n from invoices')).rows[0].n;
  } finally {
    client.release();
  }
}

test('bad fixture: every job leaks its tenant to the next checkout (20,000 / 10,000 / 6,666 rows)', async () => {
  const seen: number[] = [];
  for (const tenantId of [1, 2, 3]) {
    assert.equal(await bad.runJob({ id: tenantId, tenantId }), Math.floor(20000 / tenantId));
    seen.push(await nextCheckoutCount(bad.pool));
  }
  assert.deepEqual(seen, [20000, 10000, 6666]);
});

test('good fixture: the local form ends with the transaction, the next checkout sees 0 rows', async () => {
  assert.equal(await good.runJob({ id: 1, tenantId: 1 }), 20000);
  assert.equal(await nextCheckoutCount(good.pool), 0);
  assert.equal(await good.countFor(2), 10000);
  const [row] = await good.sql`select count(*)::int as n from invoices`;
  assert.equal(row.n, 0);
});

test('handed down through a returned function: a pooled client released after the job leaks its tenant to the next checkout', async () => {
  const seen: number[] = [];
  for (const tenantId of [1, 2, 3]) {
    assert.equal(await handedPooled.runJob(tenantId), Math.floor(20000 / tenantId));
    seen.push(await nextCheckoutCount(handedPooled.pool));
  }
  assert.deepEqual(seen, [20000, 10000, 6666]);
});

test("handed down the same way: a pg Client of the job's own, ended after it, takes its setting with it", async () => {
  for (const tenantId of [1, 2]) {
    const { count, pid } = await handedOwn.runJob(tenantId);
    assert.equal(count, Math.floor(20000 / tenantId), 'the setting was in force for the job');
    const next = new pg.Client({ connectionString: db.workerUrl });
    await next.connect();
    try {
      // The job's connection is gone (its backend exits once the client's goodbye arrives): no later job can be handed it.
      const alive = async () => (await next.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid])).rows[0].n > 0;
      await waitUntil(async () => !(await alive()), { what: `backend ${pid} to exit`, intervalMs: 20 });
      assert.equal((await next.query('select count(*)::int as n from invoices')).rows[0].n, 0);
    } finally {
      await next.end();
    }
  }
});

test('good fixture: a finally that resets the setting before the release leaves the next checkout 0 rows, after a failing job too', async () => {
  const count = (c: pg.PoolClient) => c.query('select count(*)::int as n from invoices').then((r) => r.rows[0].n as number);
  assert.equal(await resetInFinally.withTenant(1, count), 20000);
  assert.equal(await nextCheckoutCount(resetInFinally.pool), 0);
  await assert.rejects(resetInFinally.withTenant(2, async () => { throw new Error('job failed'); }), /job failed/);
  assert.equal(await nextCheckoutCount(resetInFinally.pool), 0);
  assert.equal(await resetInFinally.withTenantHelper(2, count), 10000);
  assert.equal(await nextCheckoutCount(resetInFinally.pool), 0);
  assert.equal(await resetInFinally.countInvoices(3), 6666);
  const [row] = await resetInFinally.sql`select count(*)::int as n from invoices`;
  assert.equal(row.n, 0);
});
