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
