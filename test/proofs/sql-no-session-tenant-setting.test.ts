// Proof for no-session-tenant-setting on SQL (DESIGN.md F1): the bad
// fixture's enter_tenant() leaves the tenant set for the next job on the
// connection; the good fixture's local form ends with the job's transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { analyzeSql } from '../../src/sql/index.ts';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  for (const fixture of ['bad', 'good']) {
    const text = readFixture(`sql/no-session-tenant-setting/${fixture}.sql`);
    for (const s of analyzeSql(text).statements.filter((s) => s.kind === 'CreateFunctionStmt')) {
      await owner.query(text.slice(s.span.start, s.span.end));
    }
  }
  await owner.end();
});
after(async () => {
  await db?.stop();
});

/** Two jobs on one pooled connection: the first enters tenant 1, the second sets nothing and counts. */
async function nextJobSees(enter: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
  try {
    const first = await pool.connect();
    await first.query('begin');
    await first.query(`select ${enter}(1)`);
    assert.equal((await first.query('select count(*)::int as n from invoices')).rows[0].n, 20000);
    await first.query('commit');
    first.release();
    const second = await pool.connect();
    const { rows } = await second.query('select count(*)::int as n from invoices');
    second.release();
    return rows[0].n;
  } finally {
    await pool.end();
  }
}

test("bad fixture: enter_tenant() leaks tenant 1's 20,000 invoices to the next job", async () => {
  assert.equal(await nextJobSees('enter_tenant'), 20000);
});

test('good fixture: enter_tenant_locally() ends with the transaction, the next job sees 0 rows', async () => {
  assert.equal(await nextJobSees('enter_tenant_locally'), 0);
});
