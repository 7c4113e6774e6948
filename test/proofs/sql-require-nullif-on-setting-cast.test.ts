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

// ---- column DEFAULTs and guarded casts -----------------------------------------------

/** Runs the statements of a fixture as the owner, in a fresh schema state. */
async function asOwner(sql: string): Promise<void> {
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    await owner.query(sql);
  } finally {
    await owner.end();
  }
}

/** An insert that leaves the tenant column out, on a connection where the setting is unset, then where it reads ''. */
async function insertTwice(table: string): Promise<{ unset: string; emptied: string }> {
  const client = new pg.Client(db.ownerUrl);
  await client.connect();
  const attempt = async () => {
    try {
      await client.query(`insert into ${table} default values`);
      return 'inserted';
    } catch (error) {
      return (error as Error).message;
    }
  };
  try {
    const unset = await attempt();
    await client.query('begin');
    await client.query("select set_config('app.tenant_id', '11111111-1111-1111-1111-111111111111', true), set_config('app.org', 'acme', true), set_config('app.tenant_no', '7', true)");
    await client.query('commit');
    const emptied = await attempt();
    return { unset, emptied };
  } finally {
    await client.end();
  }
}

test("DEFAULTs, bad fixture: a nullable column stores NULL, a text default stores '': rows of no tenant, no error", { timeout: 120_000 }, async () => {
  await asOwner('drop table if exists notes_nullable, notes_nullif, notes_text cascade');
  await asOwner(readFixture('sql/require-nullif-on-setting-cast/bad-default-nullable.sql'));
  assert.deepEqual(await insertTwice('notes_nullable'), { unset: 'inserted', emptied: 'invalid input syntax for type uuid: ""' });
  assert.deepEqual(await insertTwice('notes_nullif'), { unset: 'inserted', emptied: 'inserted' });
  assert.deepEqual(await insertTwice('notes_text'), { unset: 'null value in column "org" of relation "notes_text" violates not-null constraint', emptied: 'inserted' });
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    const rows = await owner.query(`select 'nullable' as t, count(*)::int as n, count(tenant_id)::int as set from notes_nullable
      union all select 'nullif', count(*)::int, count(tenant_id)::int from notes_nullif
      union all select 'text', count(*)::int, count(nullif(org, ''))::int from notes_text order by 1`);
    assert.deepEqual(rows.rows, [
      { t: 'nullable', n: 1, set: 0 },
      { t: 'nullif', n: 2, set: 0 },
      { t: 'text', n: 1, set: 0 },
    ]);
  } finally {
    await owner.end();
  }
});

test('DEFAULTs, good fixture: every insert without the tenant fails loudly, none stores a row', { timeout: 120_000 }, async () => {
  await asOwner('drop table if exists notes_strict, notes_strict_nullif, notes_counter cascade');
  await asOwner(readFixture('sql/require-nullif-on-setting-cast/good-default-not-null.sql'));
  assert.deepEqual(await insertTwice('notes_strict'), { unset: 'unrecognized configuration parameter "app.tenant_id"', emptied: 'invalid input syntax for type uuid: ""' });
  assert.deepEqual(await insertTwice('notes_strict_nullif'), {
    unset: 'null value in column "tenant_id" of relation "notes_strict_nullif" violates not-null constraint',
    emptied: 'null value in column "tenant_id" of relation "notes_strict_nullif" violates not-null constraint',
  });
  assert.deepEqual(await insertTwice('notes_counter'), { unset: 'unrecognized configuration parameter "app.tenant_no"', emptied: 'invalid input syntax for type integer: ""' });
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  try {
    const counts = await owner.query('select (select count(*) from notes_strict) + (select count(*) from notes_strict_nullif) + (select count(*) from notes_counter) as n');
    assert.equal(Number(counts.rows[0].n), 0);
  } finally {
    await owner.end();
  }
});

test("guards: on a connection that reads '', the good fixture's CASE and EXCEPTION forms return NULL, the bad fixture's fail", { timeout: 120_000 }, async () => {
  await asOwner(readFixture('sql/require-nullif-on-setting-cast/good-guarded.sql'));
  await asOwner(readFixture('sql/require-nullif-on-setting-cast/bad-guard-not-enough.sql'));
  const client = new pg.Client(db.workerUrl);
  await client.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', '3', true), set_config('request.jwt.claims', '{\"sub\": \"11111111-1111-1111-1111-111111111111\"}', true)");
    assert.deepEqual((await client.query('select current_tenant_case() as a, current_tenant_len() as b, current_tenant_safe() as c, current_user_id() as d')).rows[0], {
      a: 3,
      b: 3,
      c: 3,
      d: '11111111-1111-1111-1111-111111111111',
    });
    await client.query('commit');
    // The same connection now reads '' for both settings.
    assert.deepEqual((await client.query('select current_tenant_case() as a, current_tenant_len() as b, current_tenant_safe() as c')).rows[0], { a: null, b: null, c: null });
    for (const fn of ['current_tenant_isnull', 'current_tenant_wrong_handler', 'current_tenant_text']) {
      await assert.rejects(client.query(`select ${fn}()`), /invalid input syntax for type integer: ""/, fn);
    }
    // request.jwt.claims is no different outside PostgREST: '' fails the ::jsonb cast. PostgREST sets it first in every request.
    await assert.rejects(client.query('select current_user_id()'), /invalid input syntax for type json/);
  } finally {
    await client.end();
  }
});

test("arrays: after one tenant job, the bad fixture's ::int[] and ::text[] casts fail with malformed array literal, the good fixture's read NULL", { timeout: 120_000 }, async () => {
  for (const [fixture, failing] of [
    ['sql/require-nullif-on-setting-cast/bad-array-cast.sql', true],
    ['sql/require-nullif-on-setting-cast/good-array-cast.sql', false],
  ] as const) {
    await asOwner('drop table if exists shared_reports cascade; drop function if exists current_regions(), current_region_list()');
    await asOwner(readFixture(fixture));
    await asOwner("insert into shared_reports (tenant_id) select 1 + g % 3 from generate_series(1, 30) g; grant select on shared_reports to pgq_worker");
    const client = new pg.Client(db.workerUrl);
    await client.connect();
    try {
      await client.query('begin');
      await client.query("select set_config('app.tenants', '{1,2}', true), set_config('app.regions', '{eu,us}', true)");
      assert.equal((await client.query('select count(*)::int as n from shared_reports')).rows[0].n, 20);
      assert.deepEqual((await client.query('select current_regions() as r')).rows[0].r, ['eu', 'us']);
      await client.query('commit');
      // The same connection now reads '' for both settings.
      if (failing) {
        await assert.rejects(client.query('select count(*) from shared_reports'), /malformed array literal: ""/);
        await assert.rejects(client.query('select current_regions()'), /malformed array literal: ""/);
      } else {
        assert.equal((await client.query('select count(*)::int as n from shared_reports')).rows[0].n, 0);
        assert.deepEqual((await client.query('select current_regions() as r, current_region_list() as l')).rows[0], { r: null, l: '' });
      }
    } finally {
      await client.end();
    }
  }
});

/**
 * One request the way PostgREST before v10 runs it: its own transaction, one
 * local request.jwt.claim.* write per claim the JWT carries, the role claim
 * always (the anonymous role when there is no JWT). Returns owns_note(7), or the error.
 */
async function legacyRequest(client: pg.Client, claims: Record<string, string>): Promise<boolean | string> {
  await client.query('begin');
  try {
    for (const [claim, value] of Object.entries({ role: 'pgq_worker', ...claims })) {
      await client.query('select set_config($1, $2, true)', [`request.jwt.claim.${claim}`, value]);
    }
    const { rows } = await client.query('select owns_note(7) as owns');
    return rows[0].owns;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.query('rollback');
  }
}

test("PostgREST's per-claim settings: an anonymous request after a member's fails the bad fixture's cast, reads NULL through the good fixture's nullif", { timeout: 120_000 }, async () => {
  for (const [fixture, anonymous] of [
    ['sql/require-nullif-on-setting-cast/bad-postgrest-claim.sql', 'invalid input syntax for type integer: ""'],
    ['sql/require-nullif-on-setting-cast/good-postgrest-claim.sql', false],
  ] as const) {
    await asOwner('drop table if exists notes cascade; drop function if exists owns_note(int), request_region(), request_member(), request_role()');
    await asOwner(readFixture(fixture));
    const client = new pg.Client(db.workerUrl);
    await client.connect();
    try {
      // A fresh connection: the claim was never written, missing_ok gives NULL.
      assert.equal(await legacyRequest(client, {}), fixture.includes('bad') ? null : false);
      assert.equal(await legacyRequest(client, { member_id: '7' }), true);
      // The next request on the connection carries no member_id claim: PostgREST writes only the role.
      assert.equal(await legacyRequest(client, {}), anonymous, fixture);
    } finally {
      await client.end();
    }
  }
});

test("an extension's registered setting never reads '': after a local write ended and after RESET, the cast gives its default; an application setting reads ''", { timeout: 120_000 }, async () => {
  // auto_explain ships with PostgreSQL and registers auto_explain.* when loaded, as citus does citus.* and columnar.*.
  const client = new pg.Client(db.ownerUrl);
  await client.connect();
  try {
    await client.query("load 'auto_explain'");
    const cast = async (setting: string) => {
      try {
        return (await client.query('select current_setting($1)::int as v', [setting])).rows[0].v as number;
      } catch (error) {
        return (error as Error).message;
      }
    };
    await client.query("begin; select set_config('auto_explain.log_min_duration', '250', true), set_config('app.shard_budget', '250', true); commit");
    assert.deepEqual([await cast('auto_explain.log_min_duration'), await cast('app.shard_budget')], [-1, 'invalid input syntax for type integer: ""']);
    await client.query("set auto_explain.log_min_duration = 250; reset auto_explain.log_min_duration; set app.shard_budget = '250'; reset app.shard_budget");
    assert.deepEqual([await cast('auto_explain.log_min_duration'), await cast('app.shard_budget')], [-1, 'invalid input syntax for type integer: ""']);
  } finally {
    await client.end();
  }
});
