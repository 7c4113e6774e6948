// Proof for no-tenant-policy-on-queue: with the bad fixture's tenant policy on
// the queue table, the worker's claim (the fixture's own statement) finds no
// job although jobs are queued; with the good fixture it claims one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture, statementOf } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

/** Runs `setup` as the table owner (who makes the fixture's tables and policy), on a connection of its own. */
async function asOwner(setup: (owner: pg.Client) => Promise<void>): Promise<void> {
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    await setup(owner);
  } finally {
    await owner.end();
  }
}

/** Runs `work` as the worker role, to which the policy applies, on a connection of its own. */
async function asWorker<T>(work: (worker: pg.Client) => Promise<T>): Promise<T> {
  const worker = new pg.Client(db.workerUrl);
  await worker.connect();
  try {
    return await work(worker);
  } finally {
    await worker.end();
  }
}

async function claimAfterSetup(fixture: string): Promise<{ queued: number; claimed: unknown[] }> {
  const text = readFixture(fixture);
  const claim = statementOf(text, (s) => s.lockingReads.some((l) => l.skipLocked));
  let queued = 0;
  await asOwner(async (owner) => {
    await owner.query('drop table if exists tenant_jobs, tenant_notes cascade');
    await owner.query(text);
    await owner.query('insert into tenant_jobs (tenant_id) select g from generate_series(1, 5) g');
    queued = (await owner.query("select count(*)::int as n from tenant_jobs where status = 'queued'")).rows[0].n;
  });
  // The worker does not know the tenant before it has claimed a job.
  const claimed = await asWorker(async (worker) => (await worker.query(claim)).rows);
  return { queued, claimed };
}

test('bad fixture: 5 jobs queued, the claim returns none', async () => {
  const { queued, claimed } = await claimAfterSetup('sql/no-tenant-policy-on-queue/bad.sql');
  assert.equal(queued, 5);
  assert.deepEqual(claimed, []);
});

test('good fixture: the same claim returns the oldest job', async () => {
  const { queued, claimed } = await claimAfterSetup('sql/no-tenant-policy-on-queue/good.sql');
  assert.equal(queued, 5);
  assert.equal(claimed.length, 1);
  assert.equal((claimed[0] as { tenant_id: number }).tenant_id, 1);
});

test('a lease claim (UPDATE ... RETURNING without SKIP LOCKED) under the bad fixture\'s policy: 3 events queued, none claimed', { timeout: 120_000 }, async () => {
  const text = readFixture('sql/no-tenant-policy-on-queue/bad-lease-claim.sql');
  const claim = statementOf(text, (s) => s.rowWrites.some((w) => w.op === 'update' && w.returning));
  await asOwner(async (owner) => {
    await owner.query('drop table if exists outbox_events cascade');
    await owner.query(text);
    await owner.query('grant select, update on outbox_events to pgq_worker');
    await owner.query('insert into outbox_events (tenant_id) select g from generate_series(1, 3) g');
  });
  await asWorker(async (worker) => {
    assert.deepEqual((await worker.query(claim)).rows, []);
  });
});

test("a per-tenant worker (the good fixture's claim_for_tenant) sets its tenant first and claims that tenant's job", { timeout: 120_000 }, async () => {
  await asOwner(async (owner) => {
    await owner.query('drop table if exists per_tenant_jobs cascade');
    const text = readFixture('sql/no-tenant-policy-on-queue/good-per-tenant-worker.sql');
    await owner.query(text.slice(0, text.indexOf('-- name: claim_in_transaction')));
    await owner.query('grant select, update on per_tenant_jobs to pgq_worker');
    await owner.query('insert into per_tenant_jobs (tenant_id) select 1 + g % 3 from generate_series(1, 6) g');
  });
  await asWorker(async (worker) => {
    await worker.query('begin');
    const { rows } = await worker.query('select id, tenant_id from claim_for_tenant(2)');
    await worker.query('commit');
    assert.deepEqual(rows.map((r) => r.tenant_id), [2]);
  });
});

test("a migration with the lease design's columns and a tenant policy: a tenant-blind lease claim finds none of 4 queued jobs", { timeout: 120_000 }, async () => {
  await asOwner(async (owner) => {
    await owner.query('drop table if exists export_jobs cascade');
    await owner.query(readFixture('sql/no-tenant-policy-on-queue/bad-lease-shape-migration.sql'));
    await owner.query("insert into export_jobs (tenant_id, payload) select g, '{}' from generate_series(1, 4) g");
    await owner.query('grant select, update on export_jobs to pgq_worker');
  });
  await asWorker(async (worker) => {
    // The lease claim a worker of this table runs, before it knows any tenant.
    const claim = `update export_jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '1 minute'
      where id = (select id from export_jobs where status = 'queued' and attempts < max_attempts order by id for update skip locked limit 1)
      returning id`;
    assert.deepEqual((await worker.query(claim)).rows, []);
    await worker.query('begin');
    await worker.query("select set_config('app.tenant', '3', true)");
    assert.equal((await worker.query(claim)).rows.length, 1);
    await worker.query('commit');
  });
});

test("a per-tenant worker that sets another setting than the policy reads (bad-other-setting.sql) claims none of its tenant's jobs; the one that sets the policy's (good-same-setting.sql) claims one", { timeout: 120_000 }, async () => {
  const takeAs = async (fixture: string) => {
    await asOwner(async (owner) => {
      await owner.query('drop table if exists tenant_exports cascade');
      await owner.query(readFixture(fixture));
      await owner.query('grant select, update on tenant_exports to pgq_worker');
      await owner.query('insert into tenant_exports (tenant_id) select 1 + g % 3 from generate_series(1, 6) g');
    });
    return await asWorker(async (worker) => {
      await worker.query('begin');
      const { rows } = await worker.query('select tenant_id from take_export(2)');
      await worker.query('commit');
      return rows.map((r) => r.tenant_id);
    });
  };
  assert.deepEqual(await takeAs('sql/no-tenant-policy-on-queue/bad-other-setting.sql'), []);
  assert.deepEqual(await takeAs('sql/no-tenant-policy-on-queue/good-same-setting.sql'), [2]);
});
