// Proof for no-session-tenant-setting on SQL (DESIGN.md F1): the bad
// fixture's enter_tenant() leaves the tenant set for the next job on the
// connection; the good fixture's local form ends with the job's transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { analyzeSql } from '../../src/sql/index.ts';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture, statementOf } from '../helpers/fixture-sql.ts';

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

test("bad fixture: enter_tenant() leaks tenant 1's 20,000 invoices to the next job", { timeout: 120_000 }, async () => {
  assert.equal(await nextJobSees('enter_tenant'), 20000);
});

test('good fixture: enter_tenant_locally() ends with the transaction, the next job sees 0 rows', { timeout: 120_000 }, async () => {
  assert.equal(await nextJobSees('enter_tenant_locally'), 0);
});

// ---- the shapes real projects write it in ------------------------------------------

/** Creates the functions of fixtures; later fixtures replace earlier ones of the same name. */
async function createFunctions(...fixtures: string[]): Promise<void> {
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    for (const fixture of fixtures) {
      const text = readFixture(`sql/no-session-tenant-setting/${fixture}`);
      for (const s of analyzeSql(text).statements.filter((s) => s.kind === 'CreateFunctionStmt' || s.kind === 'GrantStmt')) {
        await owner.query(text.slice(s.span.start, s.span.end).replace(/\bapi_user\b/g, 'pgq_worker'));
      }
    }
  } finally {
    await owner.end();
  }
}

/** Job 1 runs `enter` (with its values) in its transaction and commits; job 2, on the same connection, sets nothing and counts. */
async function leaksAfter(enter: string, values?: unknown[]): Promise<number> {
  const pool = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
  try {
    const first = await pool.connect();
    try {
      await first.query('begin');
      // Without values node-postgres sends the simple protocol, which runs several statements.
      await (values ? first.query(enter, values) : first.query(enter));
      await first.query('commit');
    } catch (error) {
      first.release(true);
      throw error;
    }
    first.release();
    const second = await pool.connect();
    try {
      return (await second.query('select count(*)::int as n from invoices')).rows[0].n;
    } finally {
      second.release();
    }
  } finally {
    await pool.end();
  }
}

test("generic setter: set_app_config('app.tenant', '1') through the bad fixture leaks 20,000 rows; the good fixture's local form, 0", { timeout: 120_000 }, async () => {
  await createFunctions('bad-generic-setter.sql');
  assert.equal(await leaksAfter("select set_app_config('app.tenant', '1')"), 20000);
  assert.equal(await leaksAfter("select app_config_set('app.tenant', '1')"), 20000);
  await createFunctions('good-generic-setter.sql');
  assert.equal(await leaksAfter("select set_app_config('app.tenant', '1')"), 0);
});

test('level from the caller: the bad fixture\'s calls pass false and leak; the good fixture\'s pass true or the default', { timeout: 120_000 }, async () => {
  await createFunctions('bad-level-from-caller.sql');
  const bad = readFixture('sql/no-session-tenant-setting/bad-level-from-caller.sql');
  assert.equal(await leaksAfter(statementOf(bad, (s) => s.calls?.some((c) => c.args.length === 2 && !c.args[0].name) ?? false), ['1']), 20000);
  assert.equal(await leaksAfter(statementOf(bad, (s) => s.calls?.some((c) => c.args[0]?.name === 'p_tenant') ?? false), ['1']), 20000);
  const good = readFixture('sql/no-session-tenant-setting/good-level-from-caller.sql');
  assert.equal(await leaksAfter(statementOf(good, (s) => s.calls?.some((c) => c.args.length === 2) ?? false), ['1']), 0);
  assert.equal(await leaksAfter(statementOf(good, (s) => s.calls?.some((c) => c.args.length === 1) ?? false), ['1']), 0);
});

test('dynamic SQL: EXECUTE format(... set_config(%L, %L, false) ...) leaks; the good fixture\'s local forms do not', { timeout: 120_000 }, async () => {
  await createFunctions('bad-dynamic-setter.sql');
  assert.equal(await leaksAfter("select enter_tenant_dynamic('1', 'public')"), 20000);
  await createFunctions('good-dynamic-setter.sql');
  assert.equal(await leaksAfter("select enter_tenant_dynamic('1', 'public')"), 0);
});

test("clears: the good fixture's leave_tenant query (set_config(..., '', false)) leaves the next job 0 rows", { timeout: 120_000 }, async () => {
  const clears = readFixture('sql/no-session-tenant-setting/good-clears.sql');
  const leave = statementOf(clears, (s) => s.settingWrites.some((w) => w.value?.kind === 'literal' && w.value.value === ''));
  assert.equal(await leaksAfter(`select set_config('app.tenant', '1', false); ${leave}`), 0);
  const toDefault = statementOf(clears, (s) => s.settingWrites.some((w) => w.value?.kind === 'default'));
  assert.equal(await leaksAfter(`select set_config('app.tenant', '1', false); ${toDefault}`), 0);
});

test("PostgREST: a pre-request hook's session write is rewritten at the start of every request, so the next request does not see it", { timeout: 120_000 }, async () => {
  await createFunctions('good-postgrest-request.sql');
  const pool = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
  // A request as PostgREST runs it: its claims set for the transaction, then db_pre_request, then the query.
  const request = async (claims: object) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      // PostgREST: select set_config('search_path', ..., true), set_config('role', ..., true), set_config('request.jwt.claims', ..., true), ...
      await client.query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify(claims)]);
      await client.query('select check_request()');
      const { rows } = await client.query('select count(*)::int as n from invoices');
      await client.query('commit');
      return rows[0].n;
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
  };
  try {
    assert.equal(await request({ role: 'authenticated', tenant_id: '1' }), 20000);
    assert.equal(await request({ role: 'anon' }), 0, 'the next request, without a tenant, sees none of tenant 1');
    assert.equal(await request({ role: 'authenticated', tenant_id: '2' }), 10000);
  } finally {
    await pool.end();
  }
});
