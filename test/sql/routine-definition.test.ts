// A CREATE FUNCTION / PROCEDURE whose body carries no fact is read from its words
// (src/sql/routine-definition.ts), not parsed: what it gives must be what the
// parse gives routines.ts, and a definition that does not parse is never read.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { readScript } from '../../src/languages/sql/script.ts';
import { bodyCarriesNoFact, keepFactStatements } from '../../src/sql/fact-free.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { parseStatements } from '../../src/sql/parser.ts';
import { routineDefinedBy, type RoutineDefinition } from '../../src/sql/routine-definition.ts';
import { routineInfo } from '../../src/sql/routines.ts';
import { tokensOf } from '../../src/sql/statement-tokens.ts';

await loadSqlParser();

const fixtures = join(import.meta.dirname, '../../fixtures');

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sqlFiles(join(dir, e.name)) : e.name.endsWith('.sql') ? [join(dir, e.name)] : [],
  );
}

const read = (text: string): RoutineDefinition | undefined => routineDefinedBy(text, tokensOf(text, 0, text.length));

/** What the parse of the statement alone gives routines.ts, in the reading's shape; undefined when it does not parse. */
function parsed(text: string): (RoutineDefinition & { defaults?: unknown }) | undefined {
  const result = parseStatements(text, false);
  if (!result.ok || result.statements.length !== 1) return undefined;
  const routine = routineInfo(result.statements[0].stmt, { start: 0, end: 0 });
  if (!routine || routine.atomic || routine.body === undefined) return undefined;
  const { name, kind, language, parameters, parameterDefaults } = routine.info;
  return { name, kind: kind as RoutineDefinition['kind'], language, parameters: parameters ?? [], body: routine.body, ...(parameterDefaults ? { defaults: parameterDefaults } : {}) };
}

test('a definition read from its words is what its parse gives: name, kind, language, input parameters, body', () => {
  const texts = [
    'create or replace function app.touch() returns trigger language plpgsql as $$ begin new.updated_at := now(); return new; end $$;',
    'CREATE FUNCTION "App"."Touch"(p_before timestamptz, in out "Count" int, variadic int[], out total bigint) LANGUAGE "PLPGSQL" AS $body$ select 1 $body$',
    "create function f(a character varying(20), b double precision, c timestamp(3) with time zone, d numeric(10, 2)[], e jobs.id%type) returns setof int language 'sql' immutable strict as 'select $1'",
    "create procedure p(inout n int, x bit varying) security definer set search_path = public, pg_temp set work_mem to '64MB' language plpgsql as $$ begin null; end $$",
    'create function f(int, text) returns table (id bigint, done boolean) language sql stable parallel safe cost 10 rows 5 called on null input as $$ values (1) $$',
    "create function f() returns void as 'it''s' language plpgsql not leakproof external security invoker set x.y from current;",
  ];
  for (const text of texts) {
    const words = read(text);
    assert.notEqual(words, undefined, text);
    assert.deepEqual(words, parsed(text), text);
  }
});

test('what is not plainly such a definition is left to the parser, whether it parses or not', () => {
  for (const text of [
    // Not in the subset read here (the parse reads them).
    "create function f(a int default 1) returns int language sql as 'select a'",
    "create function f(a int = 1) returns int language sql as 'select a'",
    'create function f() returns int language sql return 1',
    'create function f() returns int language sql begin atomic select 1; end',
    "create function f() returns int language c as 'lib', 'sym'",
    "create function f() returns int language sql as E'select 1'",
    "create function f() returns int language sql as 'select 1'\n'more'",
    'create function f() returns int language sql window as $$ select 1 $$',
    'create function f() returns int language sql set role = admin as $$ select 1 $$',
    'create function a.b.c.d() returns int language sql as $$ select 1 $$',
    `create function ${'f'.repeat(64)}() returns int language sql as $$ select 1 $$`,
    'create function "naïve"() returns int language sql as $$ select 1 $$',
    'create function "{{ .Schema }}".f() returns int language sql as $$ select 1 $$',
    'create function f(interval day) returns int language sql as $$ select 1 $$',
    'create function f() returns int language sql as $$ select 1 $$ as $$ select 2 $$',
    'create function f() returns int language sql as $$ select 1 $$; select 2',
  ]) {
    assert.equal(read(text), undefined, text);
    assert.equal(parseStatements(text, false).ok, true, text);
  }
  // Not PostgreSQL: the parse says so.
  for (const text of [
    'create function f(a int,) returns int language sql as $$ select 1 $$',
    'create function f(out a int) returns table (b int) language sql as $$ select 1 $$',
    'create function f() language sql returns int as $$ select 1 $$',
    'create procedure p() returns int language sql as $$ select 1 $$',
    'create function select() returns int language sql as $$ select 1 $$',
    'create function f(time timestamp) returns int language sql as $$ select 1 $$',
    'create function f() returns int language sql cost 10abc as $$ select 1 $$',
    'create function f() returns int language sql as $$ select 1',
  ]) {
    assert.equal(read(text), undefined, text);
    assert.equal(parseStatements(text, false).ok, false, text);
  }
});

test('every fact-free definition of the fixtures read from its words is its parse; so is every mutant read from its words', () => {
  let definitions = 0;
  let mutants = 0;
  for (const file of sqlFiles(fixtures)) {
    const reading = readScript(readFileSync(file, 'utf8'), file);
    const kept = keepFactStatements(reading.sql, [...reading.holes].sort((a, b) => a.start - b.start));
    for (const { start, end, defined } of kept.routines) {
      definitions++;
      const text = reading.sql.slice(start, end);
      assert.deepEqual(defined, parsed(text), `${file}: ${text}`);
      assert.ok(bodyCarriesNoFact(defined.body));
      // A token dropped, doubled, or swapped with the next: whenever the words still read a definition, it parses as one.
      const tokens = tokensOf(text, 0, text.length);
      const ends = tokens.map((_, k) => tokens[k + 1]?.start ?? text.length);
      for (let k = 0; k < tokens.length; k++) {
        const { start: a } = tokens[k];
        const b = ends[k];
        const variants = [text.slice(0, a) + text.slice(b), `${text.slice(0, b)}${text.slice(a, b)} ${text.slice(b)}`];
        if (k + 1 < tokens.length) variants.push(`${text.slice(0, a)}${text.slice(b, ends[k + 1])} ${text.slice(a, b)}${text.slice(ends[k + 1])}`);
        for (const variant of variants) {
          const words = read(variant);
          if (!words) continue;
          mutants++;
          assert.deepEqual(words, parsed(variant), variant);
        }
      }
    }
  }
  assert.ok(definitions >= 5, `${definitions} definitions`);
  assert.ok(mutants >= 20, `${mutants} mutants`);
});

test('a migration of definitions gives the statements, spans and skip count a parse gives; a definition that does not parse is still reported', () => {
  const text = `-- 0003: triggers
create table jobs (id bigint primary key, status text, updated_at timestamptz);
/* stamps */ create or replace function jobs_touch() returns trigger language plpgsql as $$
begin new.updated_at := now(); return new; end $$;
create trigger jobs_touch before update on jobs for each row execute function jobs_touch();
create function jobs_claim(p_worker text) returns bigint language sql as $$ update jobs set status = 'running' where id = 1 returning id $$;
create function jobs_noop(p int) returns int language sql as $$ select 1 $$
`;
  const words = analyzeSql(text, { onlyFacts: true, memo: false });
  const kept = keepFactStatements(text, []);
  assert.equal(kept.routines.length, 1);
  // The definitions' statements and spans, as a parse of every statement gives them.
  const defines = (a: typeof words) => a.statements.filter((s) => s.defines).map((s) => [s.kind, s.span, s.defines]);
  assert.deepEqual(defines(words), defines(analyzeSql(text, { memo: false })));
  assert.deepEqual(defines(words).map(([, , d]) => (d as { name: string }).name), ['jobs_touch', 'jobs_claim', 'jobs_noop']);
  assert.ok((words.skipped ?? 0) >= 1);

  const broken = 'create or replace function jobs_touch() returns trigger language plpgsql strict strict immutable as $$ begin return new; end $$;\ncreate function f(a int,) returns trigger language plpgsql as $$ begin return new; end $$;\n';
  const model = sqlFrontEnd.parse(broken, 'db/migrations/003_touch.sql', {});
  assert.equal(model.sqlErrors.length, 1);
  assert.match(model.sqlErrors[0].message, /syntax error/);
});
