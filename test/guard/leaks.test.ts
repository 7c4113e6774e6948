// The measured leaks (F1, F4, a search_path leak) are caught at the next
// checkout, on real PostgreSQL 17.10 with RLS forced; clean jobs pass
// through untouched. Each leak is first shown to leak on an unguarded pool,
// so a passing guard test cannot be a test that never leaked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import {
  guardPool,
  guardStats,
  LeakReport,
  TenantLeakError,
  type GuardOptions,
  type ViolationAction,
} from '../../src/guard/index.ts';

let db: TestDatabase;
const pools: pg.Pool[] = [];
const checkedOut = new Set<pg.PoolClient>();

before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  // A failed assertion can leave a client checked out; destroy it so
  // pool.end() resolves and the failure is reported instead of a hang.
  for (const client of checkedOut) client.release(true);
  await Promise.all(pools.filter((p) => !p.ending).map((p) => p.end()));
  await db.stop();
});

function rawPool(max = 1, url = db.workerUrl): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {}); // idle clients killed by tests must not crash the run
  pool.on('acquire', (client: pg.PoolClient) => checkedOut.add(client));
  pool.on('release', (_err: Error, client: pg.PoolClient) => checkedOut.delete(client));
  pools.push(pool);
  return pool;
}

function guarded(options: Partial<GuardOptions> = {}, max = 1): pg.Pool {
  return guardPool(rawPool(max), { settings: ['app.tenant', 'search_path'], ...options });
}

const rowsOf = (t: number) => Math.floor(20000 / t);

async function visibleRows(client: pg.PoolClient | pg.Pool): Promise<number> {
  const { rows } = await client.query<{ n: string }>('select count(*) as n from invoices');
  return Number(rows[0]!.n);
}

// The jobs. Their names are what the release stack must point at.
async function sessionTenantJob(pool: pg.Pool, tenant: number): Promise<number> {
  const client = await pool.connect();
  await client.query("select set_config('app.tenant', $1, false)", [String(tenant)]);
  const n = await visibleRows(client);
  client.release(); // F1: the session setting outlives the job
  return n;
}

async function uncommittedJob(pool: pg.Pool, tenant: number): Promise<number> {
  const client = await pool.connect();
  await client.query('begin');
  await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
  const n = await visibleRows(client);
  client.release(); // F4: no COMMIT, the transaction and its local setting stay open
  return n;
}

async function searchPathJob(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  await client.query('set search_path = pg_catalog, public');
  client.release();
}

async function cleanJob(pool: pg.Pool, tenant: number, end: 'commit' | 'rollback'): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    const n = await visibleRows(client);
    await client.query(end);
    return n;
  } finally {
    client.release();
  }
}

async function refusal(promise: Promise<unknown>): Promise<TenantLeakError> {
  let handedOut: unknown;
  try {
    handedOut = await promise;
  } catch (err) {
    assert.ok(err instanceof TenantLeakError, `TenantLeakError expected, got ${err}`);
    return err;
  }
  // Destroy what was wrongly handed out, so a failing test fails instead of hanging pool.end().
  (handedOut as { release?: (err: boolean) => void } | undefined)?.release?.(true);
  assert.fail('the checkout was not refused');
}

test('control: without the guard, F1 and F4 leak to the next checkout', async () => {
  const pool = rawPool();
  assert.equal(await sessionTenantJob(pool, 3), rowsOf(3));
  assert.equal(await visibleRows(pool), rowsOf(3), 'F1: the next job sees tenant 3');
  const fresh = rawPool();
  await uncommittedJob(fresh, 1);
  assert.equal(await visibleRows(fresh), rowsOf(1), 'F4: the next job is inside tenant 1s transaction');
  await pool.end();
  await fresh.end();
});

test('F1: a session set_config after a successful job is refused at the next checkout', async () => {
  const pool = guarded();
  assert.equal(await sessionTenantJob(pool, 3), rowsOf(3));
  const dirtyClient = (pool as unknown as { _clients: pg.PoolClient[] })._clients[0]!;
  const err = await refusal(pool.connect());
  assert.deepEqual(err.settings, ['app.tenant']);
  assert.equal(err.inTransaction, false);
  assert.equal(err.report.transactionStatus, null);
  assert.equal(err.report.releasedVia, 'release');
  assert.match(err.report.releasedAt ?? '', /^sessionTenantJob \(.*leaks\.test\.ts:\d+:\d+\)$/);
  assert.match(err.releaseStack ?? '', /sessionTenantJob/);
  assert.match(err.message, /app\.tenant was still set for the session/);
  assert.match(err.message, /released dirty by the previous job at sessionTenantJob/);
  assert.equal(err.report.values, undefined, 'no values unless includeValues');
  assert.equal(err.code, 'PGQ_TENANT_LEAK');
  // Destroyed, never returned to the pool: the next job gets a new connection.
  assert.equal(pool.totalCount, 0);
  const next = await pool.connect();
  assert.notEqual(next, dirtyClient);
  assert.equal(await visibleRows(next), 0);
  next.release();
  assert.equal(guardStats(pool)!.violations, 1);
  await pool.end();
});

test('F1 is caught after a failed job too (no transaction to roll back)', async () => {
  const pool = guarded();
  const client = await pool.connect();
  await client.query("select set_config('app.tenant', '2', false)");
  await assert.rejects(client.query('select 1/0'));
  client.release();
  const err = await refusal(pool.query('select 1'));
  assert.deepEqual(err.settings, ['app.tenant']);
  await pool.end();
});

test('F4: BEGIN + local setting + release() without COMMIT is refused at the next checkout', async () => {
  const pool = guarded();
  assert.equal(await uncommittedJob(pool, 1), rowsOf(1));
  const err = await refusal(pool.connect());
  assert.equal(err.inTransaction, true);
  assert.equal(err.report.transactionStatus, 'T');
  assert.deepEqual(err.settings, ['app.tenant'], 'the local setting is visible inside the open transaction');
  assert.match(err.report.releasedAt ?? '', /^uncommittedJob /);
  assert.match(err.message, /a transaction was still open/);
  assert.match(err.message, /COMMIT or ROLLBACK/);
  assert.equal(pool.totalCount, 0);
  assert.equal(await visibleRows(pool), 0, 'the next job runs outside that transaction');
  await pool.end();
});

async function failedTransactionJob(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  await client.query('begin');
  await assert.rejects(client.query('select 1/0'));
  // The rejection comes before the ReadyForQuery that says 'E'; wait for it, boundedly
  // (faults.test.ts covers a release before it arrives).
  for (let i = 0; i < 10_000 && client.getTransactionStatus() !== 'E'; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(client.getTransactionStatus(), 'E');
  client.release();
}

test('a failed transaction left open is refused without a query (status E), naming the release that left it', async () => {
  const pool = guarded();
  await failedTransactionJob(pool);
  const checksBefore = guardStats(pool)!.checks;
  const err = await refusal(pool.connect());
  assert.equal(err.report.transactionStatus, 'E');
  assert.equal(err.report.settingsRead, false);
  assert.equal(guardStats(pool)!.checks, checksBefore, 'the driver status answered, no round trip');
  assert.match(err.message, /failed transaction was still open/);
  assert.equal(err.report.releasedVia, 'release');
  assert.match(err.report.releasedAt ?? '', /^failedTransactionJob \(.*leaks\.test\.ts:\d+:\d+\)$/);
  await pool.end();
});

test('a SET search_path leak is refused: the test is "differs from the value at connect"', async () => {
  const pool = guarded();
  await searchPathJob(pool);
  const err = await refusal(pool.connect());
  assert.deepEqual(err.settings, ['search_path']);
  assert.equal(err.inTransaction, false);
  assert.match(err.message, /search_path differs from the value at connect/);
  assert.match(err.report.releasedAt ?? '', /^searchPathJob /);
  await pool.end();
});

test('a SET ROLE leak is refused when role is listed (RESET ALL would not undo it, F11)', async () => {
  const pool = guardPool(rawPool(1, db.ownerUrl), { settings: ['app.tenant', 'role'] });
  const client = await pool.connect();
  await client.query('set role pgq_worker');
  client.release();
  const err = await refusal(pool.connect());
  assert.deepEqual(err.settings, ['role']);
  await pool.end();
});

test('clean jobs (local form, committed or rolled back) pass through on the same connection', async () => {
  const pool = guarded();
  const maxAge = 1000; // the default factsMaxAgeMs
  let seen: pg.PoolClient | undefined;
  pool.on('acquire', (client: pg.PoolClient) => {
    seen ??= client;
    assert.equal(client, seen, 'the same connection every time: nothing was destroyed');
  });
  const started = Date.now();
  for (let i = 0; i < 20; i++) {
    const tenant = (i % 5) + 1;
    assert.equal(await cleanJob(pool, tenant, i % 2 ? 'commit' : 'rollback'), rowsOf(tenant));
    assert.equal(await visibleRows(pool), 0, 'pool.query sees no tenant');
  }
  // The catalog facts the proofs rely on are re-read once they are factsMaxAgeMs old (one check each).
  const refreshes = Math.ceil((Date.now() - started) / maxAge);
  const stats = guardStats(pool)!;
  assert.equal(stats.violations, 0);
  assert.equal(stats.checkouts, 40);
  assert.ok(
    stats.checks <= 1 + refreshes,
    `only the new connection was read, and the facts refreshed by age (${stats.checks} checks, ${refreshes} refreshes allowed)`,
  );
  assert.equal(stats.elided, 40 - stats.checks);
  assert.equal(pool.totalCount, 1);
  await pool.end();
});

test('with elide: false, clean jobs are checked at every checkout (sampleRate 1)', async () => {
  const pool = guarded({ elide: false });
  for (let i = 0; i < 10; i++) assert.equal(await cleanJob(pool, 2, 'commit'), rowsOf(2));
  const stats = guardStats(pool)!;
  assert.equal(stats.checks, 10);
  assert.equal(stats.elided, 0);
  await pool.end();
});

test('a leak through pool.query() is refused, and the report points at the pool.query() caller', async () => {
  const pool = guarded();
  async function poolQueryLeak() {
    await pool.query("select set_config('app.tenant', '4', false)");
  }
  await poolQueryLeak();
  const err = await refusal(pool.query('select count(*) from invoices'));
  assert.equal(err.report.releasedVia, 'pool.query');
  assert.match(err.report.releasedAt ?? '', /^poolQueryLeak /);
  await pool.end();
});

test('the callback form of connect() is guarded', async () => {
  const pool = guarded();
  await sessionTenantJob(pool, 5);
  const refused = await new Promise<{ err: Error | undefined; client: unknown; done: unknown }>((resolve) =>
    pool.connect((err, client, done) => resolve({ err, client, done })),
  );
  assert.ok(refused.err instanceof TenantLeakError);
  assert.equal(refused.client, undefined);
  assert.equal(typeof refused.done, 'function');
  const clean = await new Promise<number>((resolve, reject) =>
    pool.connect((err, client, done) => {
      if (err) return reject(err);
      client!.query('select count(*) as n from invoices', (qErr, res) => {
        done();
        if (qErr) reject(qErr);
        else resolve(Number(res.rows[0].n));
      });
    }),
  );
  assert.equal(clean, 0);
  assert.equal(pool.idleCount, 1, 'done() returned the clean connection to the pool');
  await pool.end();
});

test("'discard' destroys the dirty connection, reports it, and hands out a clean one", async () => {
  const reports: Array<[LeakReport, ViolationAction]> = [];
  const pool = guarded({ onViolation: 'discard', onReport: (r, a) => reports.push([r, a]) });
  await sessionTenantJob(pool, 2);
  const client = await pool.connect();
  assert.equal(await visibleRows(client), 0);
  client.release();
  assert.equal(reports.length, 1);
  assert.equal(reports[0]![1], 'discard');
  assert.deepEqual(reports[0]![0].settings, ['app.tenant']);
  assert.match(reports[0]![0].releasedAt ?? '', /^sessionTenantJob /);
  assert.equal(pool.totalCount, 1);
  // pool.query goes through the same path.
  await uncommittedJob(pool, 1);
  assert.equal(await visibleRows(pool), 0);
  assert.equal(reports.length, 2);
  assert.equal(reports[1]![0].inTransaction, true);
  await pool.end();
});

test('a function decides: keep, throw, nothing (= discard), async, or a bad answer', async () => {
  let answer: unknown = 'keep';
  const seen: LeakReport[] = [];
  const pool = guarded({
    onViolation: (report) => {
      seen.push(report);
      return answer as ViolationAction;
    },
  });
  await sessionTenantJob(pool, 3);
  const kept = await pool.connect();
  assert.equal(await visibleRows(kept), rowsOf(3), "'keep' hands the dirty connection out (observe-only)");
  kept.release();

  answer = 'throw';
  await refusal(pool.connect());
  assert.equal(pool.totalCount, 0);

  answer = undefined;
  await sessionTenantJob(pool, 3);
  assert.equal(await visibleRows(pool), 0, 'returning nothing discards');

  answer = Promise.resolve('throw');
  await sessionTenantJob(pool, 3);
  await refusal(pool.connect());

  answer = 'retry';
  await sessionTenantJob(pool, 3);
  await assert.rejects(pool.connect(), /onViolation returned "retry"; valid values: 'throw', 'discard', 'keep'/);
  assert.equal(pool.totalCount, 0, 'a bad answer still destroys the dirty connection');
  assert.equal(seen.length, 5);
  await pool.end();
});

test('a handler that throws rejects the checkout with its error, and the connection is destroyed', async () => {
  const pool = guarded({
    onViolation: () => {
      throw new Error('handler failed');
    },
  });
  await sessionTenantJob(pool, 3);
  await assert.rejects(pool.connect(), /handler failed/);
  assert.equal(pool.totalCount, 0);
  assert.equal(await visibleRows(pool), 0);
  await pool.end();
});

test('values appear only with includeValues: true', async () => {
  const secret = 'tenant-4711-personal';
  const quiet = guarded();
  const c1 = await quiet.connect();
  await c1.query("select set_config('app.tenant', $1, false)", [secret]);
  c1.release();
  const hidden = await refusal(quiet.connect());
  assert.doesNotMatch(hidden.message, new RegExp(secret));
  assert.doesNotMatch(JSON.stringify(hidden.report), new RegExp(secret));
  await quiet.end();

  const loud = guarded({ includeValues: true });
  const c2 = await loud.connect();
  await c2.query("select set_config('app.tenant', $1, false)", [secret]);
  c2.release();
  const shown = await refusal(loud.connect());
  assert.deepEqual(shown.report.values, { 'app.tenant': secret });
  assert.match(shown.message, new RegExp(`app\\.tenant = "${secret}"`));
  await loud.end();
});

test('jobName names the job that released the connection dirty', async () => {
  const job = new AsyncLocalStorage<string>();
  const pool = guarded({ jobName: () => job.getStore() });
  await job.run('invoice-export#812', () => sessionTenantJob(pool, 7));
  const err = await refusal(job.run('next-job', () => pool.connect()));
  assert.equal(err.report.jobName, 'invoice-export#812');
  assert.match(err.message, /released dirty by job "invoice-export#812"/);
  await pool.end();
});

test('sampleRate: 0 skips the check on reused connections (new ones are still read)', async () => {
  const pool = guarded({ sampleRate: 0 });
  await sessionTenantJob(pool, 3);
  assert.equal(await visibleRows(pool), rowsOf(3), 'not checked: the leak goes through');
  const stats = guardStats(pool)!;
  assert.equal(stats.checks, 1, 'only the new connection was read');
  assert.equal(stats.checkouts, 2);
  await pool.end();
});

test('enabled: false leaves the leak in place (the switch really switches)', async () => {
  const pool = guardPool(rawPool(), { settings: ['app.tenant'], enabled: false });
  await sessionTenantJob(pool, 3);
  assert.equal(await visibleRows(pool), rowsOf(3));
  await pool.end();
});

test('without getTransactionStatus (pg < 8.21) the SQL test finds open and failed transactions', async () => {
  const pool = guarded();
  // Hide the driver's status so the check falls back to now() <> statement_timestamp().
  pool.on('connect', (client: pg.PoolClient) => {
    Object.defineProperty(client, 'getTransactionStatus', { value: undefined });
  });
  assert.equal(await cleanJob(pool, 2, 'commit'), rowsOf(2));
  assert.equal(await visibleRows(pool), 0, 'clean: the SQL test says no transaction');
  await uncommittedJob(pool, 1);
  const open = await refusal(pool.connect());
  assert.equal(open.report.transactionStatus, 'T');
  const client = await pool.connect();
  await client.query('begin');
  await assert.rejects(client.query('select 1/0'));
  client.release();
  const failed = await refusal(pool.connect());
  assert.equal(failed.report.transactionStatus, 'E', '25P02 from the check means a failed transaction');
  assert.equal(guardStats(pool)!.checkErrors, 0);
  await pool.end();
});

test('connections opened before guardPool() are judged against "unset" for tenant settings', async () => {
  const pool = rawPool();
  await sessionTenantJob(pool, 3); // dirty, idle, opened before the guard
  guardPool(pool, { settings: ['app.tenant'] });
  const err = await refusal(pool.connect());
  assert.deepEqual(err.settings, ['app.tenant']);
  assert.equal(err.report.releaseStack, undefined, 'released before the guard: no site recorded');
  assert.match(err.message, /release site not recorded/);
  await pool.end();
});

test('a misspelt built-in setting fails the checkout with PostgreSQL’s own error', async () => {
  const pool = guardPool(rawPool(), { settings: ['app.tenant', 'serach_path'] });
  await assert.rejects(pool.connect(), /unrecognized configuration parameter "serach_path"/);
  assert.equal(pool.totalCount, 0);
  await pool.end();
});
