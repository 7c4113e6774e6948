// 10,000 checkouts by 50 concurrent jobs on a pool of 10, 1 job in 10
// leaking on purpose (F1, F4, search_path). The guard runs in 'discard'
// mode, so the jobs keep going; the test asserts that no connection is
// leaked, every dirty connection was destroyed and never handed out again,
// and no job ever saw a tenant it did not set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { guardPool, guardStats, LeakReport, TenantLeakError } from '../../src/guard/index.ts';
import { seeded } from './support.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db.stop();
});

type LeakKind = 'session' | 'transaction' | 'search_path';

const WORKERS = 50;
const JOBS_PER_WORKER = 200; // 50 x 200 = 10,000 checkouts by jobs
const POOL_SIZE = 10;

// 10,000 real checkouts: a minute on a 2-core machine that runs other tests too, minutes under heavy load.
test('10,000 checkouts, 50 jobs at a time, pool of 10, 1 in 10 leaking: nothing leaks', { timeout: 600_000 }, async () => {
  // The first invoice of every tenant: one probe that shows any tenant whose
  // rows are visible, with 100 index lookups instead of a scan.
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  const { rows: firsts } = await owner.query<{ id: string }>(
    'select min(id) as id from invoices group by tenant_id order by tenant_id',
  );
  await owner.end();
  const probe = firsts.map((r) => r.id);
  assert.equal(probe.length, 100);
  // No parameters, so pg uses the simple protocol: now() <> statement_timestamp()
  // is an open-transaction test only there (with Parse/Bind/Execute it is
  // true even in autocommit, measured on 17.10).
  const PROBE_SQL =
    "select coalesce(array_agg(tenant_id order by tenant_id), '{}') as tenants, " +
    "current_setting('search_path') as search_path, now() <> statement_timestamp() as in_tx " +
    `from invoices where id = any('{${probe.join(',')}}'::bigint[])`;

  const reports: LeakReport[] = [];
  const pool = guardPool(new pg.Pool({ connectionString: db.workerUrl, max: POOL_SIZE }), {
    settings: ['app.tenant', 'search_path'],
    onViolation: 'discard',
    onReport: (report) => reports.push(report),
  });
  pool.on('error', () => {});

  const dirty = new Map<pg.PoolClient, LeakKind>();
  const dirtyByPid = new Map<number, LeakKind>();
  const destroyedDirty = new Set<pg.PoolClient>();
  const problems: string[] = [];
  let maxTotal = 0;
  let leaks = 0;
  let cleanSearchPath: string | undefined;

  pool.on('acquire', () => {
    maxTotal = Math.max(maxTotal, pool.totalCount);
  });
  pool.on('release', (err: Error | undefined, client: pg.PoolClient) => {
    if (err instanceof TenantLeakError && dirty.has(client)) destroyedDirty.add(client);
  });

  const pid = (client: pg.PoolClient) => (client as unknown as { processID: number }).processID;

  async function checkout(): Promise<pg.PoolClient> {
    const client = await pool.connect();
    if (dirty.has(client)) problems.push(`a dirty connection (${dirty.get(client)}) was handed out again`);
    if (client.getTransactionStatus() !== 'I') problems.push('a job got a connection inside a transaction');
    return client;
  }

  function expectTenants(job: string, got: number[], want: number[]): void {
    if (got.join() !== want.join()) problems.push(`${job} saw tenants [${got}] instead of [${want}]`);
  }

  function markDirty(client: pg.PoolClient, kind: LeakKind): void {
    leaks++;
    dirty.set(client, kind);
    dirtyByPid.set(pid(client), kind);
  }

  // The leaking jobs; their names are what each report must point at.
  async function leakSession(tenant: number) {
    const client = await checkout();
    await client.query("select set_config('app.tenant', $1, false)", [String(tenant)]);
    const { rows } = await client.query(PROBE_SQL);
    expectTenants('leakSession', rows[0].tenants, [tenant]);
    markDirty(client, 'session');
    client.release();
  }
  async function leakTransaction(tenant: number) {
    const client = await checkout();
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    const { rows } = await client.query(PROBE_SQL);
    expectTenants('leakTransaction', rows[0].tenants, [tenant]);
    markDirty(client, 'transaction');
    client.release();
  }
  async function leakSearchPath() {
    const client = await checkout();
    await client.query('set search_path = pg_catalog, public');
    markDirty(client, 'search_path');
    client.release();
  }

  async function tenantJob(tenant: number, end: 'commit' | 'rollback') {
    const client = await checkout();
    try {
      await client.query('begin');
      await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
      const { rows } = await client.query(PROBE_SQL);
      expectTenants('a tenant job', rows[0].tenants, [tenant]);
      await client.query(end);
    } finally {
      client.release();
    }
  }

  function expectNoContext(job: string, row: { tenants: number[]; search_path: string; in_tx: boolean }) {
    expectTenants(job, row.tenants, []);
    cleanSearchPath ??= row.search_path;
    if (row.search_path !== cleanSearchPath) problems.push(`${job} ran with search_path ${row.search_path}`);
    if (row.in_tx) problems.push(`${job} ran inside a leftover transaction`);
  }

  async function systemJob() {
    const client = await checkout();
    try {
      const { rows } = await client.query(PROBE_SQL);
      expectNoContext('a system job', rows[0]);
    } finally {
      client.release();
    }
  }

  async function poolQueryJob() {
    const { rows } = await pool.query(PROBE_SQL);
    expectNoContext('a pool.query job', rows[0]);
  }

  async function worker(id: number) {
    const random = seeded(1000 + id);
    for (let k = 0; k < JOBS_PER_WORKER; k++) {
      const r = random();
      const tenant = 1 + Math.floor(random() * 100);
      if (r < 0.1) {
        const kind = Math.floor(random() * 3);
        if (kind === 0) await leakSession(tenant);
        else if (kind === 1) await leakTransaction(tenant);
        else await leakSearchPath();
      } else if (r < 0.55) {
        await tenantJob(tenant, k % 2 ? 'commit' : 'rollback');
      } else if (r < 0.8) {
        await systemJob();
      } else {
        await poolQueryJob();
      }
    }
  }

  await Promise.all(Array.from({ length: WORKERS }, (_, id) => worker(id)));

  // The last leaks may still sit idle: check out every connection once so
  // each is looked at, then give them back.
  const held = await Promise.all(Array.from({ length: POOL_SIZE }, () => checkout()));
  for (const client of held) client.release();

  assert.deepEqual(problems, []);
  assert.ok(leaks > 800 && leaks < 1200, `about 1 in 10 jobs leaked (${leaks})`);
  assert.ok(maxTotal <= POOL_SIZE, `pool.totalCount reached ${maxTotal}`);
  assert.ok(pool.totalCount <= POOL_SIZE);

  // Every leak was found once, at the next checkout of that connection, and destroyed.
  assert.equal(reports.length, leaks);
  assert.equal(destroyedDirty.size, dirty.size);
  assert.equal(guardStats(pool)!.violations, leaks);
  assert.equal(guardStats(pool)!.checkErrors, 0);
  const expectedFrame: Record<LeakKind, RegExp> = {
    session: /^leakSession /,
    transaction: /^leakTransaction /,
    search_path: /^leakSearchPath /,
  };
  for (const report of reports) {
    const kind = dirtyByPid.get(report.backendPid!);
    assert.ok(kind, `report for an unknown backend ${report.backendPid}`);
    assert.match(report.releasedAt ?? '', expectedFrame[kind]);
    if (kind === 'session') {
      assert.deepEqual([report.settings, report.inTransaction], [['app.tenant'], false]);
    } else if (kind === 'transaction') {
      assert.deepEqual([report.settings, report.inTransaction], [['app.tenant'], true]);
    } else {
      assert.deepEqual([report.settings, report.inTransaction], [['search_path'], false]);
    }
  }
  assert.ok(guardStats(pool)!.checkouts >= WORKERS * JOBS_PER_WORKER);

  await pool.end();
  assert.equal(pool.totalCount, 0);
});
