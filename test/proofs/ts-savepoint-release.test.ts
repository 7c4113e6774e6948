// Proof for no-release-in-open-transaction's savepoint shape (PostgreSQL
// 17.10, pg 8.23): ROLLBACK TO SAVEPOINT undoes the step but leaves the
// transaction open, so bad-rollback-to-savepoint.ts releases a client that
// the next checkout finds inside that transaction (with its uncommitted write
// and row lock). The good fixture ends the transaction before the release.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let bad: Record<string, any>;
let good: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  bad = await importFixture('no-release-in-open-transaction/bad-rollback-to-savepoint.ts', db.workerUrl);
  good = await importFixture('no-release-in-open-transaction/good-rollback-to-savepoint.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[bad, good].filter(Boolean));
  await db?.stop();
});

async function queueJob(pool: { query(text: string): Promise<{ rows: { id: number }[] }> }): Promise<number> {
  return (await pool.query("insert into jobs (kind) values ('step') returning id")).rows[0].id;
}

test('bad fixture: after ROLLBACK TO SAVEPOINT the released client is still in the transaction that took the job', async () => {
  const id = await queueJob(bad.pool);
  await bad.tryStep(id, async () => {});
  const client = await bad.pool.connect();
  try {
    assert.equal(client.getTransactionStatus(), 'T');
    const { rows } = await client.query('select status, now() <> statement_timestamp() as old from jobs where id = $1', [id]);
    assert.deepEqual(rows[0], { status: 'running', old: true });
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

test('good fixture: the transaction is committed before the release; the next checkout is idle', async () => {
  const id = await queueJob(good.pool);
  await good.tryStep(id, async () => {
    throw new Error('the step failed');
  });
  const client = await good.pool.connect();
  try {
    assert.equal(client.getTransactionStatus(), 'I');
    const { rows } = await client.query('select status from jobs where id = $1', [id]);
    assert.deepEqual(rows[0], { status: 'running' });
  } finally {
    client.release();
  }
});
