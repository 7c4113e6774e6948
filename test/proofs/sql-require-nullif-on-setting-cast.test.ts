// Proof for require-nullif-on-setting-cast (DESIGN.md F9): on a pooled
// connection that served a tenant before, current_setting('app.tenant', true)
// is '' and the bad fixture's policy fails every query; the good one does not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

async function withSchema(fixture: string, run: (worker: pg.Client) => Promise<void>): Promise<void> {
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  await owner.query('drop table if exists reports, report_views cascade; drop function if exists current_tenant()');
  await owner.query(readFixture(fixture));
  await owner.query("insert into reports (tenant_id) select 1 + g % 3 from generate_series(1, 30) g");
  await owner.query('grant select on all tables in schema public to pgq_worker');
  await owner.end();
  const worker = new pg.Client(db.workerUrl);
  await worker.connect();
  try {
    await run(worker);
  } finally {
    await worker.end();
  }
}

/** One job on the shared connection: the tenant set for its transaction only, as it should be. */
async function tenantJob(worker: pg.Client, tenant: number): Promise<number> {
  await worker.query('begin');
  await worker.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
  const { rows } = await worker.query('select count(*)::int as n from reports');
  await worker.query('commit');
  return rows[0].n;
}

test('bad fixture: after one tenant job, the next query on the connection fails with invalid input syntax', async () => {
  await withSchema('sql/require-nullif-on-setting-cast/bad.sql', async (worker) => {
    // A fresh connection: missing_ok gives NULL, the cast of NULL is fine, 0 rows.
    assert.equal((await worker.query('select count(*)::int as n from reports')).rows[0].n, 0);
    assert.equal(await tenantJob(worker, 1), 10);
    // Same connection, the next job reads before it sets its tenant (a count, a health check):
    await assert.rejects(worker.query('select count(*) from reports'), /invalid input syntax for type integer: ""/);
    await assert.rejects(worker.query('select current_tenant()'), /invalid input syntax for type integer: ""/);
  });
});

test('bad fixture: a policy without missing_ok fails on a connection that never set the tenant', async () => {
  await withSchema('sql/require-nullif-on-setting-cast/bad.sql', async (worker) => {
    await assert.rejects(worker.query('select count(*) from report_views'), /unrecognized configuration parameter "app.tenant"/);
  });
});

test('good fixture: the same sequence reads 0 rows instead of failing', async () => {
  await withSchema('sql/require-nullif-on-setting-cast/good.sql', async (worker) => {
    assert.equal((await worker.query('select count(*)::int as n from reports')).rows[0].n, 0);
    assert.equal(await tenantJob(worker, 1), 10);
    assert.equal((await worker.query('select count(*)::int as n from reports')).rows[0].n, 0);
    assert.equal((await worker.query('select current_tenant() as t')).rows[0].t, 0);
    assert.equal(await tenantJob(worker, 2), 10);
  });
});
