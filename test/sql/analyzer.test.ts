// The SQL analyzer's facts, one concern per test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSql, loadSqlParser, type SqlAnalysis } from '../../src/sql/index.ts';

await loadSqlParser();

const only = (analysis: SqlAnalysis) => {
  assert.deepEqual(analysis.errors, []);
  assert.equal(analysis.statements.length, 1);
  return analysis.statements[0];
};
const textOf = (text: string, span: { start: number; end: number }) => text.slice(span.start, span.end);

test('SET, SET SESSION, SET LOCAL, RESET, RESET ALL, SET ROLE and search_path are setting writes', () => {
  const sql = "SET app.tenant = '1'; SET SESSION app.t TO 2; SET LOCAL app.tenant = '3'; RESET app.tenant; RESET ALL; SET ROLE tenant_1; SET search_path = t1, public; SET SESSION AUTHORIZATION bob";
  const writes = analyzeSql(sql).statements.flatMap((s) => s.settingWrites.map((w) => [w.name, w.level, w.via]));
  assert.deepEqual(writes, [
    ['app.tenant', 'session', 'set'],
    ['app.t', 'session', 'set'],
    ['app.tenant', 'local', 'set'],
    ['app.tenant', 'session', 'reset'],
    [undefined, 'session', 'reset_all'],
    ['role', 'session', 'set'],
    ['search_path', 'session', 'set'],
    ['session_authorization', 'session', 'set'],
  ]);
});

test('set_config reads its third argument: literal, text literal, or unknown', () => {
  const sql = "select set_config('app.a', '1', true), set_config('App.B', '1', false), set_config('app.c', '1', 'on'), set_config('app.d', $1, $2), set_config($3, '1', false)";
  const writes = only(analyzeSql(sql)).settingWrites.map((w) => [w.name, w.level]);
  assert.deepEqual(writes, [
    ['app.a', 'local'],
    ['app.b', 'session'],
    ['app.c', 'local'],
    ['app.d', 'unknown'],
    [undefined, 'session'],
  ]);
});

test('the SET clause of CREATE FUNCTION and ALTER ROLE ... SET are not writes of this session', () => {
  const sql = "create function f() returns int language sql set search_path = public as 'select 1'; alter role r set app.tenant = '0'; alter database d set app.tenant = '0'";
  assert.deepEqual(analyzeSql(sql).statements.flatMap((s) => s.settingWrites), []);
});

test('DISCARD variants, DEALLOCATE ALL and transaction control', () => {
  const sql = 'DISCARD ALL; DISCARD PLANS; DEALLOCATE ALL; DEALLOCATE PREPARE q; BEGIN; START TRANSACTION; SAVEPOINT a; RELEASE a; ROLLBACK TO a; COMMIT; END; ROLLBACK';
  const facts = analyzeSql(sql).statements.map((s) => s.discard ?? (s.deallocateAll ? 'deallocate all' : s.transaction ?? s.kind));
  assert.deepEqual(facts, ['all', 'plans', 'deallocate all', 'DeallocateStmt', 'begin', 'begin', 'savepoint', 'release', 'rollback_to', 'commit', 'commit', 'rollback']);
});

test('row-locking selects: alone, nested in UPDATE ... WHERE id = (SELECT ...), and in a CTE', () => {
  const alone = only(analyzeSql('select * from jobs j where status = $1 order by id for update skip locked limit 1'));
  assert.deepEqual(alone.lockingReads.map((l) => [l.tables, l.strength, l.skipLocked]), [[['jobs'], 'update', true]]);

  const nested = only(analyzeSql("update jobs set status = 'running' where id = (select id from jobs where status = 'queued' for no key update skip locked limit 1) returning *"));
  assert.deepEqual(nested.lockingReads.map((l) => [l.tables, l.strength, l.skipLocked]), [[['jobs'], 'no_key_update', true]]);
  assert.equal(nested.rowWrites[0].returning, true);

  const cte = only(analyzeSql('with c as (select id from queue.jobs for update of jobs nowait) delete from queue.jobs using c where jobs.id = c.id returning jobs.id'));
  assert.deepEqual(cte.lockingReads.map((l) => [l.tables, l.skipLocked, l.nowait]), [[['jobs'], false, true]]);
  assert.deepEqual(cte.rowWrites.map((w) => [w.op, w.table]), [['delete', 'jobs']]);
});

test('updates: a count down is an increment by a negative amount; a difference of other columns is not', () => {
  const write = only(analyzeSql('update jobs set retries_left = retries_left - 1, budget = 10 - budget, spent = spent - $1 where id = $2')).rowWrites[0];
  assert.deepEqual(write.assignments[0].value, { kind: 'increment', by: -1 });
  assert.equal(write.assignments[1].value.kind, 'expression');
  assert.equal(write.assignments[2].value.kind, 'expression');
});

test('inserts: an INSERT ... SELECT that copies rows, column by column, from its table or through a CTE that moves them', () => {
  const copy = only(analyzeSql('insert into jobs (payload, attempt) select payload, attempt + 1 from jobs where id = $1 and attempt < max_attempts')).rowWrites[0];
  assert.equal(copy.copy?.from, 'jobs');
  assert.deepEqual(copy.copy?.values.map((v) => [v.column, v.value.kind]), [['payload', 'expression'], ['attempt', 'increment']]);
  assert.deepEqual(copy.copy?.where.map((c) => [c.column, c.op]), [['id', '='], ['attempt', '<']]);
  const moved = only(analyzeSql('with m as (delete from app.jobs where id = $1 returning *) insert into jobs (payload, attempt) select payload, m.attempt + 1 from m where attempt < 5'));
  const insert = moved.rowWrites.find((w) => w.op === 'insert')!;
  assert.deepEqual([insert.copy?.from, insert.copy?.schema], ['jobs', 'app']);
  assert.deepEqual(insert.copy?.values[1].value, { kind: 'increment', by: 1 });
  assert.deepEqual(insert.copy?.where.map((c) => c.column), ['attempt', 'id']);
  // Not read: VALUES, no column list, a column list the SELECT does not match, a UNION, a CTE that returns nothing.
  for (const sql of [
    'insert into jobs (payload, attempt) values ($1, 0)',
    'insert into jobs select * from jobs where id = $1',
    'insert into jobs (payload, attempt) select payload from jobs',
    'insert into jobs (attempt) select attempt + 1 from jobs union select 0',
    'with m as (delete from jobs where id = $1) insert into jobs (attempt) select 1 from m',
  ]) {
    assert.equal(only(analyzeSql(sql)).rowWrites.find((w) => w.op === 'insert')?.copy, undefined, sql);
  }
});

test('updates: assigned columns and the columns their WHERE compares', () => {
  const sql = "update jobs set attempts = attempts + 1, status = 'running', locked_until = now() + interval '30 seconds', locked_by = $3 where id = $1 and attempts = $2 and (locked_until < now() or status = 'queued')";
  const write = only(analyzeSql(sql)).rowWrites[0];
  assert.equal(write.table, 'jobs');
  assert.deepEqual(
    write.assignments.map((a) => [a.column, a.value.kind]),
    [['attempts', 'increment'], ['status', 'literal'], ['locked_until', 'expression'], ['locked_by', 'param']],
  );
  assert.deepEqual(write.assignments[0].value, { kind: 'increment', by: 1 });
  assert.deepEqual(
    write.where.map((c) => [c.column, c.op, c.value.kind, c.underOr]),
    [['id', '=', 'param', false], ['attempts', '=', 'param', false], ['locked_until', '<', 'expression', true], ['status', '=', 'literal', true]],
  );
});

test('a comparison written value-first is read column-first', () => {
  const write = only(analyzeSql('update jobs set status = $1 where now() > locked_until')).rowWrites[0];
  assert.deepEqual(write.where.map((c) => [c.column, c.op]), [['locked_until', '<']]);
});

test('a searched CASE is read branch by branch: the comparisons of each WHEN and the strings it gives', () => {
  const write = only(analyzeSql("update jobs set status = case when attempts >= max_attempts then 'dead'::job_state else 'queued' end::job_state, note = case kind when 'a' then 'x' end")).rowWrites[0];
  const [status, note] = write.assignments.map((a) => a.value);
  assert.deepEqual(status.kind === 'expression' && status.cases?.map((b) => [b.when?.map((c) => [c.column, c.op]), b.strings]), [
    [[['attempts', '>=']], ['dead']],
    [undefined, ['queued']],
  ]);
  assert.equal(note.kind === 'expression' && note.cases, undefined, 'a simple CASE (case kind when ...) compares no column by itself');
});

test('a join condition is read from the side of the own table, whichever side of the operator it is on', () => {
  const ownSide = (sql: string) => only(analyzeSql(sql)).rowWrites[0].where.filter((c) => c.value.kind === 'column').map((c) => [c.column, c.op, c.value.kind === 'column' && c.value.column]);
  const expected = [['runner_id', '=', 'id']];
  assert.deepEqual(ownSide('update tasks set state = $1 from gone where tasks.runner_id = gone.id'), expected);
  assert.deepEqual(ownSide('update tasks set state = $1 from gone where gone.id = tasks.runner_id'), expected);
  assert.deepEqual(ownSide('update tasks t set state = $1 from gone g where g.id = t.runner_id'), expected);
  assert.deepEqual(ownSide('delete from tasks using gone where gone.id > tasks.runner_id'), [['runner_id', '<', 'id']]);
  // Unqualified on one side: read as written.
  assert.deepEqual(ownSide('update tasks set state = $1 from gone where gone.id = runner_id'), [['id', '=', 'runner_id']]);
  const read = only(analyzeSql('select t.id from tasks t join runners r on true where r.id = t.runner_id for update of t skip locked'));
  assert.deepEqual(read.lockingReads[0].where.map((c) => [c.column, c.op]), [['runner_id', '=']]);
  const sub = only(analyzeSql('update tasks set state = $1 where exists (select 1 from runners r where tasks.runner_id = r.id and r.beat_at > now())')).rowWrites[0];
  const inner = sub.where[0].value;
  assert.deepEqual(inner.kind === 'subquery' && inner.where?.map((c) => c.column), ['id', 'beat_at']);
});

test('CREATE POLICY reads settings; ENABLE and FORCE ROW LEVEL SECURITY', () => {
  const sql = "create policy p on app.jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int); alter table app.jobs enable row level security; alter table app.jobs force row level security";
  const [policy, enable, force] = analyzeSql(sql).statements;
  assert.deepEqual(policy.policies.map((p) => [p.name, p.table, p.settingsRead.map((r) => [r.setting, r.missingOk])]), [['p', 'jobs', [['app.tenant', true]]]]);
  assert.deepEqual(enable.rowSecurity.map((r) => [r.table, r.action]), [['jobs', 'enable']]);
  assert.deepEqual(force.rowSecurity.map((r) => [r.table, r.action]), [['jobs', 'force']]);
});

test('casts of current_setting with and without nullif', () => {
  const sql = "select current_setting('app.t', true)::int, nullif(current_setting('app.t', true), '')::uuid, cast(current_setting('app.t') as bigint), current_setting('app.t')::text";
  const casts = only(analyzeSql(sql)).settingCasts.map((c) => [c.type, c.nullif, c.missingOk]);
  assert.deepEqual(casts, [['int', false, true], ['uuid', true, true], ['bigint', false, false]]);
});

test('psycopg placeholders: %s, %(name)s, %% and sql.SQL {} in a name position', () => {
  const sql = "select set_config('app.tenant', %(tenant)s, false) where 1 = %s and name like 'a%%'; select * from {} where id = %s";
  const analysis = analyzeSql(sql, { placeholders: 'psycopg' });
  assert.deepEqual(analysis.errors, []);
  assert.equal(analysis.statements.length, 2);
  const write = analysis.statements[0].settingWrites[0];
  assert.equal(textOf(sql, write.span), 'set_config');
});

test('knex placeholders: ? for values, ?? for names, jsonb ?| left alone', () => {
  const sql = "select * from ?? where id = ? and tags ?| array['a']";
  const analysis = analyzeSql(sql, { placeholders: 'qmark' });
  assert.deepEqual(analysis.errors, []);
  assert.equal(analysis.statements.length, 1);
});

test('named placeholders: :name for values, :name: for names, casts, := and slices left alone', () => {
  const sql = "select set_config('app.tenant', :tenant, true), a[1:2], :tenant::text from :table: where id = :id and b[lo:hi] is not null";
  const analysis = analyzeSql(sql, { placeholders: 'colon' });
  const statement = only(analysis);
  assert.equal(textOf(sql, statement.settingWrites[0].span), 'set_config');
  // Without the style the same text does not parse: the placeholders were what made it SQL.
  assert.notDeepEqual(analyzeSql(sql).errors, []);
});

test('template holes stand for values, and for names when a value cannot stand there', () => {
  // select * from ${table} where tenant_id = ${tenant}
  const sql = 'select * from X where tenant_id = Y; update X set attempts = attempts + 1 where id = Z';
  const holes = [sql.indexOf('X'), sql.indexOf('Y'), sql.lastIndexOf('X'), sql.indexOf('Z')].map((start) => ({ start, end: start + 1 }));
  const analysis = analyzeSql(sql, { holes });
  assert.deepEqual(analysis.errors, []);
  assert.equal(analysis.statements.length, 2);
  const update = analysis.statements[1].rowWrites[0];
  assert.equal(textOf(sql, update.assignments[0].span), 'attempts');
  assert.deepEqual(update.where.map((c) => [c.column, c.value.kind]), [['id', 'param']]);
});

test('a native $1 in a name position is retried as an identifier', () => {
  const analysis = analyzeSql('select count(*) from $1 where id = $2');
  assert.deepEqual(analysis.errors, []);
  assert.equal(analysis.statements.length, 1);
});

test('recovery: a statement that does not parse is reported once, the others are analysed', () => {
  const sql = "select 1;\nselect from where;\nselect set_config('app.t', '1', false);\nthis is not sql";
  const analysis = analyzeSql(sql);
  assert.equal(analysis.statements.length, 2);
  assert.equal(analysis.statements[1].settingWrites[0].name, 'app.t');
  assert.equal(analysis.errors.length, 2);
  assert.match(analysis.errors[0].message, /syntax error at or near "where"/);
  assert.equal(textOf(sql, analysis.errors[0].span), 'w');
  assert.equal(textOf(sql, analysis.errors[1].span), 't');
});

test('PL/pgSQL bodies: PERFORM, statements, expressions and EXECUTE of a literal', () => {
  const sql = `create function enter(p int) returns void language plpgsql as $body$
declare t int;
begin
  perform set_config('app.tenant', p::text, false);
  t := current_setting('app.tenant', true)::int;
  update jobs set attempts = attempts + 1 where id = p;
  execute 'DISCARD ALL';
  execute format('set app.x = %L', p);
end $body$`;
  const analysis = analyzeSql(sql);
  assert.deepEqual(analysis.errors, []);
  const nested = analysis.statements.filter((s) => s.routine);
  assert.ok(nested.every((s) => s.routine?.name === 'enter' && s.routine.kind === 'function'));
  const write = nested.flatMap((s) => s.settingWrites)[0];
  assert.deepEqual([write.name, write.level, textOf(sql, write.span)], ['app.tenant', 'session', 'set_config']);
  const cast = nested.flatMap((s) => s.settingCasts)[0];
  assert.equal(textOf(sql, cast.span), "current_setting('app.tenant', true)::int");
  assert.deepEqual(nested.flatMap((s) => s.rowWrites).map((w) => w.table), ['jobs']);
  const discard = nested.find((s) => s.discard === 'all');
  assert.equal(textOf(sql, discard!.span), 'DISCARD ALL');
});

test('DO blocks and SQL-language function bodies are analysed', () => {
  const sql = "do $$ begin perform set_config('app.tenant', '1', false); end $$; create function t() returns int language sql as 'select current_setting(''app.t'', true)::int'";
  const nested = analyzeSql(sql).statements.filter((s) => s.routine);
  assert.deepEqual(nested.map((s) => s.routine?.kind), ['do', 'function']);
  assert.equal(nested[0].settingWrites[0].name, 'app.tenant');
  assert.equal(nested[1].settingCasts[0].setting, 'app.t');
});

test('offsets are UTF-16 offsets of the given text, past multi-byte characters', () => {
  const sql = "select '日本語 🎉' as x; SET app.tenant = 'ü'";
  const [, set] = analyzeSql(sql).statements;
  assert.equal(textOf(sql, set.span), "SET app.tenant = 'ü'");
});

test('a large text is parsed in batches and keeps every statement', () => {
  const statements = 20_000;
  const sql = Array.from({ length: statements }, (_, i) => `update jobs set attempts = attempts + 1 where id = ${i};`).join('\n');
  const analysis = analyzeSql(sql);
  assert.equal(analysis.statements.length, statements);
  assert.deepEqual(analysis.errors, []);
  const last = analysis.statements[statements - 1];
  assert.equal(textOf(sql, last.span), `update jobs set attempts = attempts + 1 where id = ${statements - 1}`);
});

test('a setting name composed at run time is unknown, not the placeholder', () => {
  const analysis = analyzeSql("SET {} = %s; SET LOCAL {} TO 'x'", { placeholders: 'psycopg' });
  assert.deepEqual(analysis.errors, []);
  assert.deepEqual(analysis.statements.map((s) => s.settingWrites[0].name), [undefined, undefined]);
});

test('text that is not SQL stops after a bounded number of failed statements', async () => {
  const { MAX_STATEMENT_ERRORS } = await import('../../src/sql/analyze.ts');
  const sql = 'florp wibble ( ] 12 ;'.repeat(MAX_STATEMENT_ERRORS * 4);
  const analysis = analyzeSql(sql);
  assert.equal(analysis.errors.length, MAX_STATEMENT_ERRORS + 1);
  assert.match(analysis.errors.at(-1)!.message, /the rest of the text was not analysed/);
});

test('setting values: literals, DEFAULT, placeholders, lists; set_config name and level from placeholders', async () => {
  const sql = "SET app.a = ''; SET app.b TO DEFAULT; SET search_path = app, 'public'; SET ROLE app_user; select set_config($1, $2, $3), set_config('app.c', NULL, false)";
  const writes = analyzeSql(sql).statements.flatMap((s) => s.settingWrites);
  assert.deepEqual(writes.map((w) => w.value), [
    { kind: 'literal', value: '' },
    { kind: 'default' },
    { kind: 'literal', value: 'app, public' },
    { kind: 'literal', value: 'app_user' },
    { kind: 'placeholder', index: 2 },
    { kind: 'literal', value: null },
  ]);
  assert.deepEqual([writes[4].nameFrom, writes[4].levelFrom], [{ kind: 'placeholder', index: 1 }, { kind: 'placeholder', index: 3 }]);
});

test('a generic setter: set_config with the name, value and level from the routine parameters, by name and by $N', () => {
  const sql = `create function set_app_config(setting_name text, setting_value text, is_local boolean default false) returns void language plpgsql as $$
begin
  perform set_config(setting_name, setting_value, is_local);
end $$;
create function set_cfg(text, text) returns text language sql as 'select set_config($1, $2, false)';`;
  const nested = analyzeSql(sql).statements.filter((s) => s.routine);
  const [generic, positional] = nested.flatMap((s) => s.settingWrites);
  assert.deepEqual(
    [generic.name, generic.nameFrom, generic.value, generic.levelFrom],
    [undefined, { kind: 'routine-parameter', name: 'setting_name' }, { kind: 'routine-parameter', name: 'setting_value' }, { kind: 'routine-parameter', name: 'is_local' }],
  );
  assert.deepEqual(nested[0].routine?.parameters, ['setting_name', 'setting_value', 'is_local']);
  assert.deepEqual(nested[0].routine?.parameterDefaults, [undefined, undefined, { kind: 'literal', value: false }]);
  assert.deepEqual([positional.nameFrom, positional.level], [{ kind: 'routine-parameter', name: '$1' }, 'session']);
  const create = analyzeSql(sql).statements.find((s) => s.defines);
  assert.equal(create?.defines?.name, 'set_app_config');
});

test('routine calls: not the built-ins, with literal, placeholder and named arguments, also CALL and PERFORM', () => {
  const sql = "select app.enter_tenant($1, false), now(), count(*), coalesce(x, 1) from t; call refresh_totals(p_tenant => 7); do $$ begin perform enter_tenant(3); end $$";
  const calls = analyzeSql(sql).statements.flatMap((s) => (s.calls ?? []).map((c) => [c.name, c.args]));
  assert.deepEqual(calls, [
    ['app.enter_tenant', [{ value: { kind: 'placeholder', index: 1 } }, { value: { kind: 'literal', value: false } }]],
    ['refresh_totals', [{ name: 'p_tenant', value: { kind: 'literal', value: 7 } }]],
    ['enter_tenant', [{ value: { kind: 'literal', value: 3 } }]],
  ]);
});

test('ROLLBACK TO SAVEPOINT stays in the transaction, COMMIT AND CHAIN ends it and opens the next', async () => {
  const { transactionEffect } = await import('../../src/sql/index.ts');
  const sql = 'BEGIN; SAVEPOINT s; ROLLBACK TO SAVEPOINT s; RELEASE SAVEPOINT s; COMMIT AND CHAIN; ROLLBACK AND CHAIN; END; ABORT; PREPARE TRANSACTION \'x\'; COMMIT PREPARED \'x\'';
  assert.deepEqual(analyzeSql(sql).statements.map(transactionEffect), ['opens', 'none', 'none', 'none', 'ends-and-opens', 'ends-and-opens', 'ends', 'ends', 'ends', 'none']);
});

test('casts guarded by CASE on the empty string or by an EXCEPTION handler; ::text::int is still a cast', () => {
  const sql = `select case when current_setting('app.t', true) = '' then null else current_setting('app.t', true)::int end,
    case when current_setting('app.t', true) is null then null else current_setting('app.t', true)::int end,
    case when length(current_setting('app.u', true)) > 0 then current_setting('app.u', true)::uuid end,
    current_setting('app.t', true)::text::int;
create function t() returns int language plpgsql as $$
declare v int;
begin
  begin
    v := current_setting('app.t', true)::int;
  exception when invalid_text_representation then
    v := current_setting('app.fallback', true)::int;
  end;
  return v;
end $$`;
  const casts = analyzeSql(sql).statements.flatMap((s) => s.settingCasts.map((c) => [c.setting, c.type, c.guard ?? 'none']));
  assert.deepEqual(casts, [
    ['app.t', 'int', 'case'],
    ['app.t', 'int', 'none'],
    ['app.u', 'uuid', 'case'],
    ['app.t', 'int', 'none'],
    ['app.t', 'int', 'exception-handler'],
    ['app.fallback', 'int', 'none'],
  ]);
});

test('column DEFAULTs that read a setting, with NOT NULL, PRIMARY KEY, nullif and the cast', () => {
  const sql = `create table a (
  id bigserial,
  t uuid not null default current_setting('app.t')::uuid,
  u uuid default nullif(current_setting('app.t', true), '')::uuid,
  v text default current_setting('app.t', true),
  w int default current_setting('app.w', true)::int,
  primary key (id, w)
);
alter table a add column x int default current_setting('app.x', true)::int, alter column v set default current_setting('app.v')`;
  const defaults = analyzeSql(sql).statements.flatMap((s) => (s.settingDefaults ?? []).map((d) => [d.column, d.notNull, d.setting, d.missingOk, d.nullif, d.castType ?? '-']));
  assert.deepEqual(defaults, [
    ['t', true, 'app.t', false, false, 'uuid'],
    ['u', false, 'app.t', true, true, 'uuid'],
    ['v', false, 'app.t', true, false, '-'],
    ['w', true, 'app.w', true, false, 'int'],
    ['x', false, 'app.x', true, false, 'int'],
    ['v', 'unknown', 'app.v', false, false, '-'],
  ]);
  const casts = analyzeSql(sql).statements.flatMap((s) => s.settingCasts);
  assert.ok(casts.length > 0 && casts.every((c) => c.inDefault));
});

test('dynamic SQL in PL/pgSQL: format() with %I/%L/%s, || with quote_ident/quote_literal, a variable assigned before EXECUTE', () => {
  const sql = `create function claim(p_queue text, p_worker text) returns setof bigint language plpgsql as $$
declare q text;
begin
  return query execute format('update %I.%I set status = ''running'', locked_by = %L where id = (select id from %I.%I where status = ''queued'' for update skip locked limit 1) returning id', 'queues', 'q_' || p_queue, p_worker, 'queues', 'q_' || p_queue);
  execute 'update jobs_' || quote_ident(p_queue) || ' set attempts = attempts + 1 where id = ' || quote_literal(p_worker);
  q := format('select set_config(%L, %L, false)', 'app.tenant', p_worker);
  execute q;
  execute format('SET search_path = %I', p_queue);
end $$`;
  const text = (span: { start: number; end: number }) => sql.slice(span.start, span.end);
  const dynamic = analyzeSql(sql).statements.filter((s) => s.dynamic);
  assert.equal(dynamic.length, 4);
  const [claim, update, setter, path] = dynamic;
  assert.deepEqual(claim.rowWrites.map((w) => [w.table, w.returning]), [['q_{p_queue}', true]]);
  assert.deepEqual(claim.lockingReads.map((l) => [l.tables, l.skipLocked]), [[['q_{p_queue}'], true]]);
  assert.equal(text(claim.rowWrites[0].assignments[0].span), 'status');
  assert.deepEqual(update.rowWrites[0].assignments.map((a) => [a.column, a.value.kind]), [['attempts', 'increment']]);
  assert.deepEqual([setter.settingWrites[0].name, setter.settingWrites[0].level], ['app.tenant', 'session']);
  assert.deepEqual([path.settingWrites[0].name, path.settingWrites[0].value], ['search_path', { kind: 'expression' }]);
  assert.equal(text(path.settingWrites[0].span).startsWith('SET search_path'), true);
});

test('BEGIN ATOMIC bodies are the routine\'s statements, not statements of the CREATE', () => {
  const sql = "create function f(p int) returns void language sql begin atomic select set_config('app.tenant', p::text, false); update t set x = p; end";
  const [create, ...nested] = analyzeSql(sql).statements;
  assert.deepEqual(create.settingWrites, []);
  assert.deepEqual(nested.map((s) => [s.kind, s.routine?.name]), [['SelectStmt', 'f'], ['UpdateStmt', 'f']]);
  assert.equal(sql.slice(nested[1].span.start, nested[1].span.end), 'update t set x = p');
});

test('ALTER ROLE ... SET is not a write of this session; PostgREST\'s pre-request hook is read from it', () => {
  const [statement] = analyzeSql("alter role authenticator set pgrst.db_pre_request = 'public.check_request'").statements;
  assert.deepEqual(statement.settingWrites, []);
  assert.deepEqual(statement.roleSettings?.map((r) => [r.name, r.value]), [['pgrst.db_pre_request', 'public.check_request']]);
});

test('the leading transaction control of a text, without a parse, agrees with the parser', async () => {
  const { transactionEffect, transactionEffectOfText } = await import('../../src/sql/index.ts');
  const texts = [
    'BEGIN', 'begin isolation level serializable', 'START TRANSACTION', '-- c\nCOMMIT', 'END', 'ROLLBACK', 'ABORT', 'ROLLBACK TO SAVEPOINT s', 'rollback work to s',
    'ROLLBACK TRANSACTION TO SAVEPOINT s', 'COMMIT AND CHAIN', 'rollback work and chain', 'COMMIT AND NO CHAIN', "PREPARE TRANSACTION 'x'", "COMMIT PREPARED 'x'",
    "ROLLBACK PREPARED 'x'", 'SAVEPOINT s', 'RELEASE SAVEPOINT s', 'select 1',
  ];
  for (const text of texts) {
    const [statement] = analyzeSql(text).statements;
    assert.equal(transactionEffectOfText(text), transactionEffect(statement), text);
  }
});
