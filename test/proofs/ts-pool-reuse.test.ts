// Proof for no-session-tenant-setting's TypeScript pool shapes (PostgreSQL
// 17.10, pg 8.23, postgres.js 3.4.9): a pool of one connection that a worker
// keeps (bad-shared-one-connection-pool.ts) hands the next job the previous
// tenant — max: 1 does not make it a script client; the one-connection script
// clients of good-script-client.ts end with their script, and a constant
// applied in a connect hook (good-connect-hook.ts) is the same on every
// checkout, whatever tenant ran before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { endPools, importFixture } from '../typescript/fixture-module.ts';

let db: TestDatabase;
let shared: Record<string, any>;
let script: Record<string, any>;
let hook: Record<string, any>;
before(async () => {
  db = await startTestDatabase();
  shared = await importFixture('no-session-tenant-setting/bad-shared-one-connection-pool.ts', db.workerUrl);
  script = await importFixture('no-session-tenant-setting/good-script-client.ts', db.workerUrl);
  hook = await importFixture('no-session-tenant-setting/good-connect-hook.ts', db.workerUrl);
});
after(async () => {
  await endPools(...[shared, script, hook].filter(Boolean));
  await db?.stop();
});

test("bad fixture: the worker's one-connection pool carries each job's tenant to the next query (20,000 / 10,000 / 6,666 rows)", async () => {
  const seen: number[] = [];
  for (const tenant of ['1', '2', '3']) {
    assert.equal(await shared.runJob(tenant), Math.floor(20000 / Number(tenant)));
    const [row] = await shared.sql`select count(*)::int as n from invoices`;
    seen.push(row.n);
  }
  assert.deepEqual(seen, [20000, 10000, 6666]);
});

test('good fixture: the script clients end with their script; a new connection sees no tenant and the default search_path', async () => {
  process.env.DATABASE_URL = db.ownerUrl;
  try {
    await script.migrate('public');
  } finally {
    process.env.DATABASE_URL = db.workerUrl;
  }
  await script.backfill('1');
  const client = new pg.Client({ connectionString: db.workerUrl });
  await client.connect();
  try {
    const { rows } = await client.query("select count(*)::int as n, current_setting('search_path') as path from invoices");
    assert.deepEqual(rows[0], { n: 0, path: '"$user", public' });
  } finally {
    await client.end();
  }
});

test("good fixture: the connect hook's constant is on every checkout, and no job's tenant is", async () => {
  for (const tenant of ['1', '2']) {
    assert.equal(await hook.runJob(tenant), Math.floor(20000 / Number(tenant)));
    const client = await hook.pool.connect();
    try {
      const { rows } = await client.query("select current_setting('search_path') as path, count(*)::int as n from invoices");
      assert.deepEqual(rows[0], { path: 'public', n: 0 });
    } finally {
      client.release();
    }
  }
});
