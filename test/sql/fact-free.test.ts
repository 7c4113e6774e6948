// The .sql front end parses only the statements and routine bodies that can
// carry a fact (src/sql/fact-free.ts): what it leaves out must be what no rule
// could read, so the facts are the same as a parse of every statement gives.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { readScript } from '../../src/languages/sql/script.ts';
import { bodyCarriesNoFact, createdTableOf, holdsNoStatement, statementCarriesNoFact } from '../../src/sql/fact-free.ts';
import { analyzeSql, loadSqlParser, type StatementFacts } from '../../src/sql/index.ts';

await loadSqlParser();

const fixtures = join(import.meta.dirname, '../../fixtures');

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sqlFiles(join(dir, e.name)) : e.name.endsWith('.sql') ? [join(dir, e.name)] : [],
  );
}

/** A statement any rule could read: a fact of its own (kind, span and where it sits are not facts). */
function carriesFact(s: StatementFacts): boolean {
  const { kind: _kind, span: _span, routine: _routine, plpgsql: _plpgsql, deallocateAll, ...rest } = s;
  return deallocateAll || Object.values(rest).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
}

/** The facts, without the numbers of host placeholders: they count the placeholders of the text parsed, and are not read in .sql files. */
function comparable(statements: StatementFacts[]): unknown {
  return JSON.parse(JSON.stringify(statements.filter(carriesFact), (key, value) => (key === 'index' || key === 'number' || key === 'paramNumbers' ? undefined : value)));
}

/** A migration of every kind of statement, those that carry facts between those that do not. */
const MIGRATION = `
create extension if not exists "uuid-ossp" with schema public;
create type job_state as enum ('queued', 'running', 'done');
create table app_jobs (id bigserial primary key, tenant_id bigint not null default nullif(current_setting('app.tenant', true), '')::bigint,
  state job_state not null default 'queued', attempts int not null default 0, locked_until timestamptz);
create index concurrently if not exists app_jobs_state_idx on app_jobs using btree (state, (lower(state::text))) include (attempts) where state <> 'done';
create unique index app_jobs_key on only app_jobs ((tenant_key(tenant_id)));
create index app_jobs_sub on app_jobs (id) where id in (select id from app_jobs for update);
alter table app_jobs add constraint app_jobs_tenant_fk foreign key (tenant_id) references public.tenants (id) on delete cascade;
alter table app_jobs alter column state type varchar(20) using state::varchar(20);
alter table app_jobs alter column state type text using normalize_state(state);
alter table app_jobs add column note character varying(200) default 'none';
alter table app_jobs add column owner_id bigint default current_owner();
alter table app_jobs alter column attempts set not null;
alter table app_jobs enable row level security;
alter table app_jobs force row level security;
create policy app_jobs_tenant on app_jobs using (tenant_id = current_setting('app.tenant')::bigint);
comment on table app_jobs is 'update jobs set state = ''x''; select set_config(''a'', ''b'', false)';
comment on function app_touch(int) is 'stamps';
grant select, update on app_jobs to worker;
revoke all on function app_touch(int) from public;
create or replace function app_touch() returns trigger language plpgsql as $$
begin
  new.updated_at := now();
  if new.state = 'done' then new.attempts := coalesce(new.attempts, 0) + 1; end if;
  return new;
end $$;
create trigger app_touch_trg before update on app_jobs for each row when (old.state is distinct from new.state) execute function app_touch();
create or replace function app_enter(p_tenant bigint) returns void language plpgsql as $$
begin
  perform set_config('app.tenant', p_tenant::text, true);
end $$;
create or replace function app_notify() returns trigger language plpgsql as $$
begin
  perform app_send(new.id);
  return new;
end $$;
create function app_deadline() returns timestamptz language sql as $$ select now() + interval '1 hour' $$;
begin;
set local app.tenant = '1';
update app_jobs set attempts = attempts + 1 where id = 1;
commit;
drop index if exists app_jobs_state_idx;
drop function if exists app_touch(int);
notify app_jobs, 'ready';
lock table app_jobs in exclusive mode;
analyze app_jobs;
reset app.tenant;
discard all;
`;

describe('statements that carry no fact', () => {
  test('DDL that no rule reads is left unparsed; a call, a subquery, row level security or SET NOT NULL keep a statement', () => {
    const statements = MIGRATION.split(/;\n(?=[a-z])/).map((s) => s.trim());
    const left = statements.filter((s) => statementCarriesNoFact(s)).map((s) => s.split(/\s+/).slice(0, 4).join(' '));
    assert.deepEqual(left, [
      'create extension if not',
      "create type job_state as",
      'create index concurrently if',
      'alter table app_jobs add', // the foreign key
      'alter table app_jobs alter', // TYPE varchar(20) USING a cast
      'alter table app_jobs add', // character varying(200) DEFAULT a literal
      'comment on table app_jobs',
      'comment on function app_touch(int)',
      'grant select, update on',
      'revoke all on function',
      'create trigger app_touch_trg before',
      'drop index if exists',
      'drop function if exists',
      'notify app_jobs, \'ready\'',
      'lock table app_jobs in',
      'analyze app_jobs',
    ]);
  });

  test('each fact keeps its statement: a setting read in a default or a predicate, RLS, NOT NULL, role settings, nested statements', () => {
    for (const text of [
      "alter table t alter column c set default current_setting('app.tenant')::int",
      "alter table t add column tenant_id int default (pg_catalog.current_setting('app.tenant'))::int",
      "create index i on t (tenant_id) where tenant_id = current_setting('app.tenant')::int",
      'alter table only t disable row level security',
      'alter table t no force row level security',
      'alter table t alter column c set not null',
      'alter policy p on t using (true)',
      "alter role worker set app.tenant = '1'",
      'create schema s create table t (id int)',
      'copy (select * from t for update) to stdout',
      'create index i on t (app.tenant_key(id))',
      'create index i on t ("tenantKey"(id))',
      'create materialized view v as select 1',
      'create rule r as on insert to t do instead nothing',
      'selec 1',
    ]) {
      assert.equal(statementCarriesNoFact(text), false, text);
    }
    for (const text of [
      'create index i on t (pg_catalog.lower(x), lower(y), (coalesce(z, 0)))',
      'create constraint trigger c after insert on t deferrable for each row execute procedure app.f()',
      'grant usage on schema s to r',
      'vacuum (verbose, analyze) t',
      'alter table t alter column c type numeric(10, 2) using c::numeric(10, 2)',
      'alter table t add constraint x exclude using gist (room with =)',
    ]) {
      assert.equal(statementCarriesNoFact(text), true, text);
    }
  });

  test('a statement that is not PostgreSQL as written (a template) is parsed: the parser and the dialect detection say what it is', () => {
    assert.equal(statementCarriesNoFact('create index a_idx on {{ .Schema }}.jobs (id);'), false);
    assert.equal(statementCarriesNoFact('create index a_idx on "{{ index .Options "Namespace" }}".jobs using btree (id);'), false);
    assert.equal(statementCarriesNoFact('create index a_idx on "app".jobs using btree (id);'), true);
    // A Go template's printed field is a name (script.ts); its control actions are not PostgreSQL.
    const model = sqlFrontEnd.parse('-- a Go template\n{{ if .Indexes }}create index if not exists a_idx on "{{ index .Options "Namespace" }}".jobs using btree (id);{{ end }}\n', 'db/migrations/2_a.up.sql', {});
    assert.match(model.skipped?.message ?? '', /not PostgreSQL/);
  });

  test('a routine body with no statement, routine call or setting is not parsed; one with any is', () => {
    assert.equal(bodyCarriesNoFact("begin new.updated_at := now(); if new.state = 'update' then return null; end if; return new; end"), true);
    assert.equal(bodyCarriesNoFact('begin perform app_send(new.id); return new; end'), false, 'a call of a routine the project may define');
    assert.equal(bodyCarriesNoFact("begin perform set_config('app.tenant', '1', true); end"), false);
    assert.equal(bodyCarriesNoFact('begin v := current_setting(\'app.tenant\'); end'), false);
    assert.equal(bodyCarriesNoFact('begin delete from jobs where id = 1; end'), false);
    assert.equal(bodyCarriesNoFact("begin execute format('truncate %I', t); end"), false);
    assert.equal(bodyCarriesNoFact('begin commit; end'), false);
    assert.equal(bodyCarriesNoFact('select now() + interval \'1 hour\''), false);
  });

  test('the facts are those of a parse of every statement, on the migration above and on every SQL fixture', () => {
    const files: [string, string][] = [['migration.sql', MIGRATION], ...sqlFiles(fixtures).map((f): [string, string] => [f, readFileSync(f, 'utf8')])];
    let skipped = 0;
    for (const [file, text] of files) {
      const reading = readScript(text, file);
      const every = analyzeSql(reading.sql, { holes: reading.holes });
      const some = analyzeSql(reading.sql, { holes: reading.holes, onlyFacts: true });
      assert.deepEqual(comparable(some.statements), comparable(every.statements), file);
      for (const error of some.errors) assert.ok(every.errors.some((e) => e.message === error.message && e.span.start === error.span.start), file);
      skipped += some.skipped ?? 0;
    }
    assert.ok(skipped > 50, `statements left unparsed: ${skipped}`);
  });

  test('the front end leaves them out of its sites; a file with a statement that does not parse is parsed whole', () => {
    const model = sqlFrontEnd.parse(MIGRATION, 'db/migrations/001_jobs.sql', {});
    assert.deepEqual(model.sqlErrors, []);
    const kinds = model.sites.map((s) => s.analysis.statements[0].kind);
    // The two indexes on a routine's value and on a subquery are read; the third is not, nor COMMENT, GRANT or the trigger.
    assert.equal(kinds.filter((k) => k === 'IndexStmt').length, 2, kinds.join(' '));
    assert.ok(!kinds.includes('CommentStmt') && !kinds.includes('GrantStmt') && !kinds.includes('CreateTrigStmt'), kinds.join(' '));
    assert.ok(kinds.includes('CreatePolicyStmt') && kinds.includes('CreateStmt') && kinds.includes('DiscardStmt'));
    const routines = new Set(model.sites.flatMap((s) => s.analysis.statements.map((st) => st.routine?.name)).filter(Boolean));
    assert.deepEqual([...routines].sort(), ['app_deadline', 'app_enter', 'app_notify'], 'the body of app_touch is not parsed');

    const broken = 'create index a_idx on a (x;\ncomment on table a is \'x\';\nselec 1;\n';
    const parsed = sqlFrontEnd.parse(broken, 'b.sql', {});
    assert.deepEqual(parsed.sqlErrors.map((e) => [e.message, broken.slice(0, e.span.start).split('\n').length]), [
      ['syntax error at or near ";"', 1],
      ['syntax error at or near "selec"', 3],
    ]);
    assert.equal(parsed.fatal, undefined, 'the COMMENT parses');
    const none = sqlFrontEnd.parse('drop table `jobs`;\nselec 1;\n', 'c.sql', { sql: { dialectDetection: 'off' } });
    assert.match(none.fatal?.message ?? '', /^Parsing error/, 'no statement parses: one fatal message');
  });
});

test('a text with nothing left but blanks and closed comments holds no statement; an unclosed comment, a literal or a word does', () => {
  for (const text of ['', '  \n\t\r\n', '-- a note\n', '-- no line break at the end', '/* a */ /* nested /* b */ c */\n-- d\n   ']) assert.equal(holdsNoStatement(text), true, JSON.stringify(text));
  for (const text of ['/* unclosed', '/* nested /* b */ still open', "'text'", 'x', ';', '-- a\nselect 1', '\f', '/ *']) assert.equal(holdsNoStatement(text), false, JSON.stringify(text));
});

test('a migration of statements that all carry no fact is analysed to what a parse of the blanked text gives; one statement left is parsed', () => {
  const ddl = "-- 0042_add_index\ncreate index on notes (body);\nalter table notes add column flag boolean;\ncomment on table notes is 'notes';\n/* done */\n";
  assert.deepEqual(analyzeSql(ddl, { onlyFacts: true }), { statements: [], errors: [], skipped: 3 });
  const left = analyzeSql(`${ddl}select set_config('app.tenant', '1', false);\n`, { onlyFacts: true });
  assert.deepEqual(
    left.statements.map((st) => st.settingWrites.map((w) => w.name)),
    [['app.tenant']],
  );
  assert.equal(left.skipped, 3);
});

describe('CREATE TABLE read from its words', () => {
  /** Every statement's facts, whole: kind, span and all. */
  const whole = (text: string, onlyFacts: boolean) => JSON.parse(JSON.stringify(analyzeSql(text, { onlyFacts, memo: false }).statements)) as unknown;

  test('a plain CREATE TABLE is not parsed, and gives the facts and the span a parse gives', () => {
    const tables = [
      'create table jobs (id bigserial primary key, status text not null default \'new\', attempts int not null default 0, locked_until timestamptz)',
      'CREATE TABLE IF NOT EXISTS "Billing"."Jobs" ("Id" bigint, "State" text, CONSTRAINT jobs_pk PRIMARY KEY ("Id"), CHECK ("State" <> \'\'))',
      'create unlogged table app.queue (id uuid default gen_random_uuid(), payload jsonb, price numeric(10, 2), unique (id), foreign key (id) references app.other (id) on delete cascade)',
      'create global temporary table scratch (a int, like other including all)',
      'create table empty ()',
      'create table t (a int) -- a note after the statement, before its semicolon\n  ',
      'create table t2 (a int, b text collate "C", c int generated always as (a * 2) stored, d varchar(20) check (d in (\'x\', \'y\')))',
    ];
    const text = `-- 0001: tables, between statements a parse reads
set search_path = app;
${tables.map((t, i) => `/* ${i} ${'é'.repeat(i)} */ ${t};`).join('\n')}
create or replace function app_enter(p bigint) returns void language plpgsql as $$ begin perform set_config('app.tenant', p::text, true); end $$;
create table last_one (id int, status text)`;
    const some = analyzeSql(text, { onlyFacts: true, memo: false });
    assert.equal(some.statements.filter((s) => s.kind === 'CreateStmt').length, tables.length + 1);
    assert.ok((some.skipped ?? 0) >= tables.length + 1, `skipped ${some.skipped}`);
    assert.deepEqual(whole(text, true), whole(text, false));
    for (const table of tables) assert.notEqual(createdTableOf(table), undefined, table);
  });

  test('what is not plainly a column list, or may carry a fact, or is named past what a parse keeps, is parsed', () => {
    for (const text of [
      'create table t as select * from jobs for update',
      'create table t of job_type',
      'create table t partition of jobs for values in (1)',
      'create table t (a int) inherits (base)',
      'create table t (a int) with (fillfactor = 70)',
      'create table t (a int) partition by range (a)',
      "create table t (tenant_id int default current_setting('app.tenant')::int)",
      'create table t (id int default next_job_id())',
      'create table t (id int default (select max(id) from jobs))',
      'create table t (exclude text)',
      'create table t (a int,)',
      'create table t (a)',
      'create table t (left int)',
      'create table select (a int)',
      'create table a.b.c (a int)',
      `create table t (${'a'.repeat(64)} int)`,
      'create table t ("naïve" int)',
      'create table t ("" int)',
      'create table t (a int); select 1',
      'create table {{ .Schema }}.jobs (id int)',
      'create table t (a int',
      'create index i on t (a)',
    ]) {
      assert.equal(createdTableOf(text), undefined, text);
    }
    // A host's interpolation in the statement: the parse says what it is.
    const reading = readScript('create table :"schema".jobs (id int, status text);\n', 'q.sql');
    const some = analyzeSql(reading.sql, { holes: reading.holes, onlyFacts: true, memo: false });
    assert.deepEqual(some.statements, analyzeSql(reading.sql, { holes: reading.holes, memo: false }).statements);
  });

  test("another database's CREATE TABLE is left to the parser (which says the file is not PostgreSQL); PostgreSQL's own forms are read", () => {
    for (const text of [
      'create table t (id integer primary key autoincrement)',
      'create table t (id int unsigned not null auto_increment, primary key (id))',
      "create table t (status int default 0 comment 'the status')",
      "create table t (a text default 'x'::text comment 'c')",
      'create table t (updated timestamp default current_timestamp on update current_timestamp)',
      'create table t (id int identity(1,1) primary key)',
      'create table t (id int not null clustered)',
      'create table t (a int references)',
      'create table t (a int default)',
    ]) {
      assert.equal(createdTableOf(text), undefined, text);
    }
    for (const text of [
      "create table t (a jsonb not null default '{}'::jsonb, b timestamptz not null default (now()), c interval default interval '1 day')",
      'create table t (id bigint generated by default as identity primary key, kind app.job_kind not null)',
      'create table t (a int, b int, foreign key (a) references s (id) on delete set default on update cascade)',
      "create table t (a character varying(20) default 'x'::character varying not null, b double precision, c timestamp(3) with time zone)",
      'create table t (a int[] default array[]::int[], b numeric(10, 2) default -1.5 check (b > 0), constraint t_pk primary key (a))',
    ]) {
      assert.notEqual(createdTableOf(text), undefined, text);
      assert.deepEqual(analyzeSql(text, { memo: false }).errors, [], text);
    }
  });

  test('a broken file is parsed whole: the CREATE TABLE read from its words does not hide a statement that does not parse', () => {
    const model = sqlFrontEnd.parse('create table jobs (id int, status text);\nselec 1;\n', 'db/migrations/002_jobs.sql', {});
    assert.deepEqual(model.sqlErrors.map((e) => e.message), ['syntax error at or near "selec"']);
    assert.ok(model.sites.some((s) => s.analysis.statements.some((st) => st.createdTable?.table === 'jobs')));
  });
});

test('a TEMP table is marked temporary, read from its words or parsed (ON COMMIT, AS SELECT); a materialized view or plain table is not', () => {
  const text = [
    'create temp table push_log (statement text not null);',
    'create temporary table if not exists app.scratch (id int) on commit drop;',
    'create temporary table remote_rows on commit drop as select 1 as id;',
    'create materialized view totals as select 1 as n;',
    'create table jobs (id int);',
    'create unlogged table staging (id int);',
  ].join('\n');
  for (const onlyFacts of [true, false]) {
    const created = analyzeSql(text, { onlyFacts, memo: false }).statements.flatMap((s) => (s.createdTable ? [[s.createdTable.table, s.createdTable.temporary ?? false]] : []));
    assert.deepEqual(created, [['push_log', true], ['scratch', true], ['remote_rows', true], ['jobs', false], ['staging', false]], `onlyFacts ${onlyFacts}`);
  }
});
