// The guard skips the check after a job whose query texts provably left no
// setting (src/guard/proof.ts). On real PostgreSQL 17.10: every way a job can
// leave a setting or a transaction behind still reaches the check and is
// refused; a provably clean job costs no round trip; an unproven one costs
// exactly one. Round trips are counted as the server's ReadyForQuery
// messages, through a TCP proxy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { guardPool, guardStats, TenantLeakError } from '../../src/guard/index.ts';
import { loadProver, textLeavesNoSetting, type ConnectionFacts } from '../../src/guard/proof.ts';
import { PgProxy } from './support.ts';

let db: TestDatabase;
let proxy: PgProxy;
const pools: pg.Pool[] = [];

before(async () => {
  db = await startTestDatabase();
  await loadProver();
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  // A routine that writes the tenant for the session: the call site shows no set_config.
  await owner.query(`create or replace function pgq_use_tenant(t text) returns void language sql as $$ select set_config('app.tenant', t, false) $$`);
  await owner.query(`create or replace function pgq_noop(t text) returns text language sql as $$ select t $$`);
  await owner.query(`grant execute on function pgq_use_tenant(text), pgq_noop(text) to ${WORKER_ROLE}`);
  await owner.end();
  proxy = await PgProxy.start(db.workerUrl);
});
after(async () => {
  await Promise.all(pools.filter((p) => !p.ending).map((p) => p.end()));
  await proxy.close();
  await db.stop();
});

function guarded(settings = ['app.tenant', 'search_path']): pg.Pool {
  // Round trips are counted: the catalog facts must not age (and be re-read) in the middle of a test on a loaded machine.
  const pool = guardPool(new pg.Pool({ connectionString: proxy.url(db.workerUrl), max: 1 }), { settings, factsMaxAgeMs: 600_000 });
  pool.on('error', () => {});
  pools.push(pool);
  return pool;
}

async function tenantsSeen(pool: pg.Pool | pg.PoolClient): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('select count(distinct tenant_id) as n from invoices');
  return Number(rows[0]!.n);
}

/** The README's job: BEGIN, set_config(..., true), a query, COMMIT, release. */
async function localJob(pool: pg.Pool, tenant: number): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    const n = await tenantsSeen(client);
    await client.query('commit');
    return n;
  } finally {
    client.release();
  }
}

/** Round trips of one checkout, and what it gave. */
async function checkoutRoundTrips(pool: pg.Pool): Promise<{ trips: number; outcome: pg.PoolClient | Error }> {
  const before = proxy.roundTrips;
  const outcome = await pool.connect().catch((err: Error) => err);
  return { trips: proxy.roundTrips - before, outcome };
}

async function expectRefused(pool: pg.Pool, what: string): Promise<TenantLeakError> {
  const { trips, outcome } = await checkoutRoundTrips(pool);
  if (!(outcome instanceof Error)) {
    outcome.release(true);
    assert.fail(`${what}: the dirty connection was handed out`);
  }
  assert.ok(outcome instanceof TenantLeakError, `${what}: TenantLeakError expected, got ${outcome}`);
  assert.ok(trips <= 1, `${what}: at most one round trip (${trips})`);
  return outcome;
}

test('a provably clean job (the README job) costs its next checkout no round trip', async () => {
  const pool = guarded();
  assert.equal(await localJob(pool, 1), 1);
  for (let i = 0; i < 5; i++) {
    const { trips, outcome } = await checkoutRoundTrips(pool);
    assert.ok(!(outcome instanceof Error), String(outcome));
    assert.equal(trips, 0, 'no check query');
    (outcome as pg.PoolClient).release();
    assert.equal(await localJob(pool, 2), 1, 'the job sees one tenant');
  }
  assert.equal(await tenantsSeen(pool), 0, 'and nothing was left: outside a transaction no tenant is set');
  assert.ok(guardStats(pool)!.elided >= 10);
  await pool.end();
});

test('an unproven job that left nothing costs exactly one round trip, and the connection is reused', async () => {
  const pool = guarded();
  await localJob(pool, 1);
  const client = await pool.connect();
  await client.query("select pgq_noop('x')"); // a routine: it could have written a setting
  client.release();
  const { trips, outcome } = await checkoutRoundTrips(pool);
  assert.equal(outcome, client, 'the same, clean connection');
  assert.equal(trips, 1, 'one check query');
  (outcome as pg.PoolClient).release();
  await pool.end();
});

test('a session set_config (F1) is refused with one round trip', async () => {
  const pool = guarded();
  const client = await pool.connect();
  await client.query("select set_config('app.tenant', $1, false)", ['3']);
  client.release();
  const err = await expectRefused(pool, 'F1');
  assert.deepEqual(err.settings, ['app.tenant']);
  await pool.end();
});

test('set_config with is_local given by the caller ($3) is unproven: refused when it was false', async () => {
  const pool = guarded();
  const client = await pool.connect();
  await client.query('select set_config($1, $2, $3)', ['app.tenant', '3', false]);
  client.release();
  assert.deepEqual((await expectRefused(pool, 'computed is_local')).settings, ['app.tenant']);
  await pool.end();
});

test('a release inside an open transaction (F4) is refused', async () => {
  const pool = guarded();
  const client = await pool.connect();
  await client.query('begin');
  await client.query("select set_config('app.tenant', $1, true)", ['1']);
  client.release();
  const err = await expectRefused(pool, 'F4');
  assert.equal(err.inTransaction, true);
  await pool.end();
});

test('a routine that writes the setting for the session is refused', async () => {
  const pool = guarded();
  // Shown to leak first: the next job, setting nothing, sees tenant 2's rows.
  const raw = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
  await raw.query("select pgq_use_tenant('2')");
  assert.equal(await tenantsSeen(raw), 1, 'control: the routine leaks');
  await raw.end();
  const client = await pool.connect();
  await client.query("select pgq_use_tenant('2')");
  client.release();
  assert.deepEqual((await expectRefused(pool, 'routine write')).settings, ['app.tenant']);
  await pool.end();
});

test('DO blocks, CALL and texts that do not parse are unproven: a leak behind them is refused', async () => {
  for (const [name, texts] of [
    ['DO', ["do $$ begin perform set_config('app.tenant', '2', false); end $$"]],
    ['unparsable text before the leak', ['selec 1', "select set_config('app.tenant', '2', false)"]],
  ] as const) {
    const pool = guarded();
    const client = await pool.connect();
    for (const text of texts) await client.query(text).catch(() => undefined);
    client.release();
    await expectRefused(pool, name);
    await pool.end();
  }
});

test('search_path and role changes are refused', async () => {
  const pool = guarded();
  const client = await pool.connect();
  await client.query('set search_path = pg_catalog, public');
  client.release();
  assert.deepEqual((await expectRefused(pool, 'search_path')).settings, ['search_path']);
  await pool.end();

  const owner = guardPool(new pg.Pool({ connectionString: proxy.url(db.ownerUrl), max: 1 }), { settings: ['role'] });
  pools.push(owner);
  const c = await owner.connect();
  await c.query("select set_config('role', $1, false)", [WORKER_ROLE]);
  c.release();
  assert.deepEqual((await expectRefused(owner, 'role')).settings, ['role']);
  await owner.end();
});

test('a clean job after an unchecked dirty one does not hide the dirt (the proof covers every job since the last check)', async () => {
  const pool = guardPool(new pg.Pool({ connectionString: proxy.url(db.workerUrl), max: 1 }), { settings: ['app.tenant'], sampleRate: 0 });
  pools.push(pool);
  await localJob(pool, 1); // the new connection is read (always), the job is clean
  const client = await pool.connect();
  await client.query("select set_config('app.tenant', '2', false)");
  client.release(); // unproven; sampleRate 0: its next checkout is not checked
  assert.equal(await localJob(pool, 3), 1);
  const next = await pool.connect();
  assert.equal(await tenantsSeen(next), 1, 'the dirt is still there: tenant 2, set for the session');
  next.release();
  const stats = guardStats(pool)!;
  assert.equal(stats.elided, 1, 'only the checkout after the first clean job was skipped on proof, not the ones after the dirty job');
  assert.equal(stats.violations, 0, 'sampleRate 0 samples the unproven checkouts out');
  await pool.end();
});

test('queries sent after release (while the connection idles in the pool) are not proof of anything', async () => {
  const pool = guarded();
  await localJob(pool, 1);
  const client = await pool.connect();
  client.release();
  await client.query("select set_config('app.tenant', '2', false)"); // a job that kept its client
  assert.deepEqual((await expectRefused(pool, 'query after release')).settings, ['app.tenant']);
  await pool.end();
});

test('the verdicts on texts', () => {
  const clean = [
    'begin',
    "select set_config('app.tenant', $1, true)",
    "SET LOCAL app.tenant = '1'",
    'set transaction isolation level serializable',
    'select count(*), now(), coalesce(max(id), 0) from invoices where tenant_id = $1',
    "update jobs set status = 'done', attempts = attempts + 1 where id = $1 returning id",
    'with c as (select id from jobs where status = $1 for update skip locked limit 1) update jobs j set status = $2 from c where j.id = c.id',
    'insert into log (at, what) values (clock_timestamp(), $1)',
    'commit',
    'rollback to savepoint a',
    "select pg_catalog.set_config('app.tenant', '1', 'true')",
    "select extract(epoch from now()), substring('abc' from 2), position('b' in 'abc'), x between 1 and 2 from t",
    "select '1'::int, $1::bigint, cast($2 as text), case k when 1 then 'a' end from t where a in (1, 2) and b like 'x%'",
  ];
  const unproven = [
    "select set_config('app.tenant', $1, false)",
    'select set_config($1, $2, $3)',
    "set app.tenant = '1'",
    'reset app.tenant',
    'reset all',
    'set role worker',
    'set session authorization worker',
    'set search_path = x',
    'select my_function($1)',
    'select public.now()',
    'call p()',
    "do $$ begin perform 1; end $$",
    'selec 1',
    'prepare transaction $$x$$',
    'create temp table t (id int)',
    "with x as (select set_config('app.tenant', '1', false)) select * from x",
    // Built-ins that run SQL text, and pg_catalog functions off the allowlist.
    "select pg_catalog.query_to_xml('select 1', true, false, '')",
    "select query_to_xml('select 1', true, false, '')",
    "select * from pg_catalog.ts_stat('select 1')",
    'select pg_catalog.pg_reload_conf()',
    // Not a pg_catalog function (uuid-ossp's, or a user's of that name).
    'select uuid_generate_v4()',
    // Quoted names are not folded: "LOWER" and "PG_CATALOG" are other objects than lower and pg_catalog.
    `select "LOWER"('x')`,
    `select "PG_CATALOG".lower('x')`,
    // Local writes of a built-in setting change what the rest of the transaction means.
    'set local search_path = public, pg_catalog',
    "select set_config('search_path', 'public', true)",
    'set local standard_conforming_strings = off',
    // Operators and casts off the allowlists.
    'select 1 === 2',
    'select 1 operator(public.+) 2',
    "select '7'::public.tenant_ref",
    "select '7'::tenant_ref",
  ];
  const facts: ConnectionFacts = {
    standardStrings: true,
    shadowedFunctions: new Set(),
    shadowedOperators: new Set(),
    shadowedTypes: new Set(),
    userCasts: false,
    userDomainChecks: false,
    implicitRelations: new Set(),
  };
  for (const text of clean) assert.equal(textLeavesNoSetting(text, facts), true, text);
  for (const text of unproven) assert.equal(textLeavesNoSetting(text, facts), false, text);

  // The same clean texts, on connections whose facts make a name they use unknown.
  const lower = 'select lower(name) from tenants where id = $1';
  assert.equal(textLeavesNoSetting(lower, facts), true);
  assert.equal(textLeavesNoSetting(lower, { ...facts, shadowedFunctions: new Set(['lower']) }), false, 'a user lower() exists');
  assert.equal(textLeavesNoSetting(lower, { ...facts, shadowedOperators: new Set(['=']) }), false, 'a user = exists');
  assert.equal(textLeavesNoSetting("select 'x'::text", { ...facts, shadowedTypes: new Set(['text']) }), false, 'a user type text exists');
  assert.equal(textLeavesNoSetting("select 'x'::pg_catalog.text", { ...facts, shadowedTypes: new Set(['text']) }), true, 'qualified: no lookup');
  assert.equal(textLeavesNoSetting(lower, { ...facts, standardStrings: false }), false, 'standard_conforming_strings off');
  assert.equal(textLeavesNoSetting(lower, { ...facts, userCasts: true }), false, 'a cast runs a user function');
  const insert = 'insert into log (what) values ($1)';
  assert.equal(textLeavesNoSetting(insert, facts), true);
  assert.equal(textLeavesNoSetting(insert, { ...facts, userDomainChecks: true }), false, 'a domain CHECK runs a user function');
  assert.equal(textLeavesNoSetting(lower, { ...facts, userDomainChecks: true }), true, 'reading runs no domain CHECK');
  const withTrigger = { ...facts, implicitRelations: new Set(['log']) };
  assert.equal(textLeavesNoSetting(insert, withTrigger), false, 'log has a trigger (or policy, default...) that runs user code');
  assert.equal(textLeavesNoSetting(lower, withTrigger), true, 'tenants has none');
  assert.equal(textLeavesNoSetting('select * from public.log l join tenants t on t.id = l.id', withTrigger), false);
});
