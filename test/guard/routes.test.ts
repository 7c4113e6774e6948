// Every route by which a job can leave app.tenant set while its query text
// looks harmless (issue #23): built-ins that run SQL text, names the server
// resolves to a user's function, operator, cast or domain, and a role whose
// string literals parse differently. Each route is first shown to leak on an
// unguarded pool, then refused at the next checkout by the guard with its
// default options (elide on). On real PostgreSQL 17.10.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { guardPool, guardStats, TenantLeakError } from '../../src/guard/index.ts';
import { loadProver, needsOf } from '../../src/guard/proof.ts';

let db: TestDatabase;
let owner: pg.Client;

before(async () => {
  db = await startTestDatabase();
  await loadProver();
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  // A function that writes the tenant for the session and returns its argument, for the routes to call.
  await owner.query(
    `create function pgq_leak(t int) returns int language sql as $$ select set_config('app.tenant', t::text, false); select t $$`,
  );
});
after(async () => {
  await owner.end();
  await db.stop();
});

const TENANT = '7';

/** The README's job: provably clean, so the checkout after it runs no check. */
async function readmeJob(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", ['1']);
    await client.query('select count(*) from tenants where id = $1', [1]);
    await client.query('commit');
  } finally {
    client.release();
  }
}

async function runJob(pool: pg.Pool, texts: readonly string[]): Promise<void> {
  const client = await pool.connect();
  try {
    for (const text of texts) await client.query(text);
  } finally {
    client.release();
  }
}

interface Route {
  name: string;
  /** Run as the owner before, and after (in reverse). */
  setup?: readonly string[];
  cleanup?: readonly string[];
  /** The job's texts. */
  job: readonly string[];
  /** The facts also make the README job unknown (it uses =, or any cast may run user code...): it is checked too. */
  readmeChecked?: boolean;
}

let routesTried = 0;
let routesRefused = 0;

async function assertRefused(route: Route): Promise<void> {
  routesTried++;
  for (const sql of route.setup ?? []) await owner.query(sql);
  try {
    // The route is real: unguarded, the next job on the connection sees the tenant the route set.
    const plain = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
    await runJob(plain, route.job);
    const { rows } = await plain.query<{ t: string | null }>("select current_setting('app.tenant', true) as t");
    await plain.end();
    assert.equal(rows[0]!.t, TENANT, `${route.name}: the route does not leak, so it proves nothing`);

    const pool = guardPool(new pg.Pool({ connectionString: db.workerUrl, max: 1 }), { settings: ['app.tenant'] });
    pool.on('error', () => {});
    try {
      await readmeJob(pool);
      await readmeJob(pool);
      if (route.readmeChecked) {
        assert.equal(guardStats(pool)!.elided, 0, `${route.name}: with these facts the README job is checked too`);
      } else {
        assert.ok(guardStats(pool)!.elided >= 1, `${route.name}: the README job is elided before the route runs`);
      }
      await runJob(pool, route.job);
      const outcome = await pool.connect().catch((err: Error) => err);
      if (!(outcome instanceof Error)) {
        const { rows: seen } = await outcome.query<{ t: string | null }>("select current_setting('app.tenant', true) as t");
        outcome.release(true);
        assert.fail(`${route.name}: the next checkout was handed out with app.tenant = ${JSON.stringify(seen[0]!.t)}`);
      }
      assert.ok(outcome instanceof TenantLeakError, `${route.name}: TenantLeakError expected, got ${outcome}`);
      assert.deepEqual(outcome.settings, ['app.tenant']);
      assert.equal(guardStats(pool)!.violations, 1);
      routesRefused++;
    } finally {
      await pool.end();
    }
  } finally {
    for (const sql of [...(route.cleanup ?? [])].reverse()) await owner.query(sql);
  }
}

test('built-ins that run SQL text: query_to_xml and ts_stat', async () => {
  await assertRefused({
    name: 'query_to_xml',
    job: [`select pg_catalog.query_to_xml('select set_config(''app.tenant'', ''${TENANT}'', false)', true, false, '')`],
  });
  await assertRefused({
    name: 'ts_stat',
    job: [`select * from pg_catalog.ts_stat('select set_config(''app.tenant'', ''${TENANT}'', false)::tsvector')`],
  });
});

test('a user overload of a built-in name: public.lower(int) wins over pg_catalog.lower(text) for lower(7)', async () => {
  const job = [`select lower(${TENANT})`];
  assert.ok(needsOf(job[0]!), 'the text alone looks harmless: only the catalog shows the overload');
  await assertRefused({
    name: 'public.lower(int)',
    setup: ['create function public.lower(t int) returns text language sql as $$ select pgq_leak(t)::text $$'],
    cleanup: ['drop function public.lower(int)'],
    job,
  });
});

test('a user function with the name of an extension function (uuid_generate_v4 without uuid-ossp)', async () => {
  await assertRefused({
    name: 'uuid_generate_v4',
    setup: [
      `create function public.uuid_generate_v4() returns uuid language sql as $$ select pgq_leak(${TENANT}); select gen_random_uuid() $$`,
    ],
    cleanup: ['drop function public.uuid_generate_v4()'],
    job: ['select uuid_generate_v4()'],
  });
});

test('quoted names are not case-folded: "LOWER"(text) and "PG_CATALOG".lower(text)', async () => {
  await assertRefused({
    name: '"LOWER"(text)',
    setup: ['create function public."LOWER"(t text) returns text language sql as $$ select pgq_leak(t::int)::text $$'],
    cleanup: ['drop function public."LOWER"(text)'],
    job: [`select "LOWER"('${TENANT}')`],
  });
  await assertRefused({
    name: '"PG_CATALOG".lower(text)',
    setup: [
      'create schema "PG_CATALOG"',
      `grant usage on schema "PG_CATALOG" to ${WORKER_ROLE}`,
      'create function "PG_CATALOG".lower(t text) returns text language sql as $$ select pgq_leak(t::int)::text $$',
    ],
    cleanup: ['drop schema "PG_CATALOG" cascade'],
    job: [`select "PG_CATALOG".lower('${TENANT}')`],
  });
});

test('a user operator with a built-in name (= on int and text)', async () => {
  const job = [`select ${TENANT} = '${TENANT}'::text`];
  assert.ok(needsOf(job[0]!), 'the text alone looks harmless');
  await assertRefused({
    name: 'operator public.=(int, text)',
    setup: [
      'create function public.pgq_eq(a int, b text) returns boolean language sql as $$ select pgq_leak(a) is not null $$',
      'create operator public.= (leftarg = int, rightarg = text, function = public.pgq_eq)',
    ],
    cleanup: ['drop function public.pgq_eq(int, text)', 'drop operator public.= (int, text)'],
    job,
    readmeChecked: true,
  });
});

test('a user cast: explicit, and an assignment cast the INSERT text does not show', async () => {
  const setup = [
    'create type public.pgq_ref as (id int)',
    'create function public.pgq_ref(t int) returns public.pgq_ref language sql as $$ select row(pgq_leak(t))::public.pgq_ref $$',
    'create cast (int as public.pgq_ref) with function public.pgq_ref(int) as assignment',
    'create table public.pgq_refs (r public.pgq_ref)',
    `grant insert on public.pgq_refs to ${WORKER_ROLE}`,
  ];
  const cleanup = ['drop type public.pgq_ref', 'drop function public.pgq_ref(int)', 'drop cast (int as public.pgq_ref)', 'drop table public.pgq_refs'];
  // A cast that runs a user function can hide in any coercion: nothing is elided on this database.
  await assertRefused({ name: 'explicit cast to a user type', setup, cleanup, job: [`select (${TENANT}::pgq_ref).id`], readmeChecked: true });
  const insert = [`insert into pgq_refs (r) values (${TENANT})`];
  assert.ok(needsOf(insert[0]!), 'the INSERT alone looks harmless');
  await assertRefused({ name: 'assignment cast in an INSERT', setup, cleanup, job: insert, readmeChecked: true });
});

test('a domain whose CHECK calls a function: an explicit cast, and an INSERT into a column of the domain', async () => {
  const setup = [
    'create function public.pgq_tenant_ok(t int) returns boolean language sql as $$ select pgq_leak(t) is not null $$',
    'create domain public.pgq_tenant as int check (public.pgq_tenant_ok(value))',
    'create table public.pgq_rows (t public.pgq_tenant)',
    `grant insert on public.pgq_rows to ${WORKER_ROLE}`,
  ];
  const cleanup = ['drop function public.pgq_tenant_ok(int)', 'drop domain public.pgq_tenant', 'drop table public.pgq_rows'];
  await assertRefused({ name: 'cast to the domain', setup, cleanup, job: [`select ${TENANT}::pgq_tenant`] });
  const insert = [`insert into pgq_rows (t) values (${TENANT})`];
  assert.ok(needsOf(insert[0]!), 'the INSERT alone looks harmless');
  await assertRefused({ name: 'INSERT into a domain column', setup, cleanup, job: insert });
});

test('a role with standard_conforming_strings = off: the text parses differently on the server', async () => {
  // With the setting on (libpg-query's view) this is two string literals; with it
  // off, \' escapes the quote, the first literal ends later and set_config runs.
  const text = `select 'x\\', ' , set_config($q$app.tenant$q$, $q$${TENANT}$q$, false) --'`;
  assert.ok(needsOf(text), 'as the parser reads it, the text is two literals');
  await assertRefused({
    name: 'standard_conforming_strings = off',
    setup: [`alter role ${WORKER_ROLE} in database ${db.database} set standard_conforming_strings = off`],
    cleanup: [`alter role ${WORKER_ROLE} in database ${db.database} reset standard_conforming_strings`],
    job: [text],
    readmeChecked: true,
  });
});

test('code the text does not show: a trigger, a policy, a column default, a view, an FK cascade and a partition', async () => {
  // Each runs pgq_leak() on a relation the job names, with no function call in the job's text.
  const table = (name: string, key = '') => [`create table public.${name} (id int ${key})`, `grant all on public.${name} to ${WORKER_ROLE}`];
  const leakTrigger = [
    `create function public.pgq_leak_trigger() returns trigger language plpgsql as $$ begin perform pgq_leak(${TENANT}); return new; end $$`,
  ];
  const routes: Route[] = [
    {
      name: 'a trigger',
      setup: [...leakTrigger, ...table('pgq_trig'), 'create trigger pgq_t before insert on public.pgq_trig for each row execute function public.pgq_leak_trigger()'],
      cleanup: ['drop function public.pgq_leak_trigger()', 'drop table public.pgq_trig'],
      job: ['insert into pgq_trig (id) values (1)'],
    },
    {
      name: 'a row-level security policy',
      setup: [
        ...table('pgq_pol'),
        `insert into public.pgq_pol values (${TENANT})`,
        'alter table public.pgq_pol enable row level security',
        'create policy pgq_p on public.pgq_pol using (pgq_leak(id) is not null)',
      ],
      cleanup: ['drop table public.pgq_pol'],
      job: ['select count(*) from pgq_pol'],
    },
    {
      name: 'a column default',
      setup: [...table('pgq_def'), `alter table public.pgq_def add column t int default pgq_leak(${TENANT})`],
      cleanup: ['drop table public.pgq_def'],
      job: ['insert into pgq_def (id) values (1)'],
    },
    {
      name: 'a view',
      setup: [`create view public.pgq_view as select pgq_leak(${TENANT}) as t`, `grant select on public.pgq_view to ${WORKER_ROLE}`],
      cleanup: ['drop view public.pgq_view'],
      job: ['select t from pgq_view'],
    },
    {
      name: 'an ON DELETE CASCADE into a table with a trigger',
      setup: [
        ...leakTrigger,
        ...table('pgq_parent', 'primary key'),
        'create table public.pgq_child (id int references public.pgq_parent on delete cascade)',
        `grant all on public.pgq_child to ${WORKER_ROLE}`,
        'insert into public.pgq_parent values (1), (2)',
        'insert into public.pgq_child values (1), (2)',
        'create trigger pgq_t after delete on public.pgq_child for each row execute function public.pgq_leak_trigger()',
      ],
      cleanup: ['drop function public.pgq_leak_trigger()', 'drop table public.pgq_parent', 'drop table public.pgq_child'],
      // Two rows, one per run: the unguarded control deletes 1, the guarded job 2.
      job: ['delete from pgq_parent where id = (select min(id) from pgq_parent)'],
    },
    {
      name: 'a trigger on a partition',
      setup: [
        ...leakTrigger,
        'create table public.pgq_parted (id int) partition by range (id)',
        'create table public.pgq_part1 partition of public.pgq_parted for values from (0) to (100)',
        `grant all on public.pgq_parted to ${WORKER_ROLE}`,
        'create trigger pgq_t before insert on public.pgq_part1 for each row execute function public.pgq_leak_trigger()',
      ],
      cleanup: ['drop function public.pgq_leak_trigger()', 'drop table public.pgq_parted'],
      job: ['insert into pgq_parted (id) values (1)'],
    },
  ];
  for (const route of routes) {
    assert.ok(needsOf(route.job[0]!), `${route.name}: the text alone looks harmless`);
    await assertRefused(route);
  }
});

test('every route was tried and refused', () => {
  assert.equal(routesTried, 18);
  assert.equal(routesRefused, routesTried, `${routesRefused} of ${routesTried} routes refused`);
  console.log(`routes tried: ${routesTried}, refused: ${routesRefused}`);
});
