// Parses remembered by their text (parser.ts) and parameter rewrites remembered by tree
// (routine-parameters.ts): a text met again gives what its first parse gave, counts the same steps
// towards the file's bound, and each routine still reads its own parameters and offsets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { parsePlPgSql, parseStatements } from '../../src/sql/parser.ts';
import { endWork, startWork } from '../../src/work.ts';

await loadSqlParser();

/** The steps one call counts (work.ts), and what it returned. */
function counted<T>(call: () => T): { steps: number; result: T } {
  startWork(0);
  const result = call();
  return { steps: endWork(), result };
}

test('a statement parsed again gives the same tree and counts the same steps', () => {
  const text = 'select 1 from parse_memory_a; update parse_memory_a set b = 2 where c = 3';
  const first = counted(() => parseStatements(text));
  const again = counted(() => parseStatements(text));
  assert.equal(first.steps, 3);
  assert.equal(again.steps, first.steps);
  assert.deepEqual(again.result, first.result);
});

test('a text that does not parse fails again with the same message and the same step', () => {
  const text = 'select from where parse_memory_b';
  const first = counted(() => parseStatements(text));
  const again = counted(() => parseStatements(text));
  assert.equal(first.result.ok, false);
  assert.deepEqual(again.result, first.result);
  assert.deepEqual([first.steps, again.steps], [1, 1]);
});

test('a PL/pgSQL routine parsed again gives the same tree and counts the same steps', () => {
  const text = 'create function parse_memory_c() returns void language plpgsql as $$ begin perform 1; end $$';
  const first = counted(() => parsePlPgSql(text));
  const again = counted(() => parsePlPgSql(text));
  assert.equal(first.result.ok, true);
  assert.deepEqual(again.result, first.result);
  assert.equal(again.steps, first.steps);
});

test('the same statement in routines of other parameters reads each routine\'s own: the rewrite is not shared', () => {
  const body = 'update parse_memory_jobs set done = true where id = p_id and token = p_token';
  const byId = `create function finish_a(p_id bigint, p_token text) returns void language plpgsql as $$ begin ${body}; end $$;`;
  const byToken = `create function finish_b(p_token text, p_id bigint) returns void language plpgsql as $$ begin ${body}; end $$;`;
  const unrelated = `create function finish_c(p_other bigint) returns void language plpgsql as $$ begin ${body}; end $$;`;
  const placeholders = (sql: string) => {
    const nested = analyzeSql(sql).statements.find((s) => s.routine && s.rowWrites.length > 0);
    assert.ok(nested);
    return JSON.stringify(nested.rowWrites);
  };
  const a = placeholders(byId);
  const b = placeholders(byToken);
  const c = placeholders(unrelated);
  // Parameter numbers follow each routine's own list: $1/$2 swap between a and b; c has none of them.
  assert.match(a, /"\$1"|number":1/);
  assert.notEqual(a, b);
  assert.notEqual(a, c);
  assert.equal(placeholders(`${byId}\n`), a);
});

test('a routine defined again further into another script gets that script\'s offsets', () => {
  const routine = "create function parse_memory_d(p_tenant text) returns void language plpgsql as $$ begin perform set_config('app.tenant', p_tenant, false); end $$;";
  const spansOf = (sql: string) => analyzeSql(sql).statements.filter((s) => s.routine).flatMap((s) => s.settingWrites.map((w) => sql.slice(w.span.start, w.span.end)));
  const alone = spansOf(routine);
  const later = spansOf(`select 1;\n-- an update script defines it again\n${routine}`);
  assert.deepEqual(alone, ['set_config']);
  assert.deepEqual(later, alone);
});

test('in a routine with multi-byte characters (a comment in French, an emoji) each statement is found at its own offsets', () => {
  const sql = `create function parse_memory_e(p_tenant text) returns void language plpgsql as $$
begin
  -- réglage du locataire 🎉
  perform set_config('app.tenant', p_tenant, false);
  -- file d'attente: « tâches »
  update parse_memory_jobs set état = 'fini' where id = 1;
end $$;`;
  const nested = analyzeSql(sql).statements.filter((s) => s.routine);
  assert.deepEqual(
    nested.map((s) => sql.slice(s.span.start, s.span.end)),
    ["set_config('app.tenant', p_tenant, false)", "update parse_memory_jobs set état = 'fini' where id = 1"],
  );
});
