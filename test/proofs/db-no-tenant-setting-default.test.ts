// Proof for no-tenant-setting-default: with the bad fixture's role default
// (ALTER ROLE ... IN DATABASE ... SET app.tenant TO '1'), a worker connection
// that sets no tenant reads tenant 1's rows — when it is new, after a job's
// SET LOCAL transaction ends, after RESET, RESET ALL and DISCARD ALL. With
// the good fixture's empty default it reads none.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { readFixture, statementOf } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

/** The fixture's `ALTER ROLE app_worker IN DATABASE appdb SET app.tenant ...`, for the test's role and database. */
function roleDefault(fixture: string): string {
  const text = statementOf(readFixture(fixture), (s) => (s.roleSettings ?? []).some((d) => d.name === 'app.tenant' && d.role === 'app_worker' && d.database === 'appdb'));
  return text.replace('app_worker', WORKER_ROLE).replace('appdb', db.database);
}

async function asOwner(sql: string): Promise<void> {
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    await owner.query(sql);
  } finally {
    await owner.end();
  }
}

const count = async (worker: pg.Client) => (await worker.query('select count(*)::int as n from invoices')).rows[0].n as number;

/** What a worker connection that sets no tenant reads, at each point where the tenant should be gone. */
async function untenantedReads(): Promise<Record<string, number>> {
  const worker = new pg.Client(db.workerUrl);
  await worker.connect();
  try {
    const reads: Record<string, number> = { fresh: await count(worker) };
    await worker.query('begin');
    await worker.query("select set_config('app.tenant', '2', true)");
    reads.inJob = await count(worker);
    await worker.query('commit');
    reads.afterJob = await count(worker);
    await worker.query("select set_config('app.tenant', '3', false)");
    await worker.query('reset app.tenant');
    reads.afterReset = await count(worker);
    await worker.query("select set_config('app.tenant', '3', false)");
    await worker.query('reset all');
    reads.afterResetAll = await count(worker);
    await worker.query("select set_config('app.tenant', '3', false)");
    await worker.query('discard all');
    reads.afterDiscardAll = await count(worker);
    return reads;
  } finally {
    await worker.end();
  }
}

test('bad fixture: a connection that sets no tenant reads tenant 1, new or after any reset', { timeout: 60_000 }, async () => {
  await asOwner(roleDefault('sql/no-tenant-setting-default/bad.sql'));
  try {
    const reads = await untenantedReads();
    assert.deepEqual(reads, { fresh: 20_000, inJob: 10_000, afterJob: 20_000, afterReset: 20_000, afterResetAll: 20_000, afterDiscardAll: 20_000 });
  } finally {
    await asOwner(`alter role ${WORKER_ROLE} in database ${db.database} reset all`);
  }
});

test('good fixture: with an empty default it reads no tenant, new or after any reset', { timeout: 60_000 }, async () => {
  await asOwner(roleDefault('sql/no-tenant-setting-default/good.sql'));
  try {
    const reads = await untenantedReads();
    assert.deepEqual(reads, { fresh: 0, inJob: 10_000, afterJob: 0, afterReset: 0, afterResetAll: 0, afterDiscardAll: 0 });
  } finally {
    await asOwner(`alter role ${WORKER_ROLE} in database ${db.database} reset all`);
  }
});
