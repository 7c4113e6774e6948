// pg-promise query files (script.ts): `$1:name`, `$(name:raw)`, `$<name>`, ... are the library's variables, read as
// holes; a bare `$1` and a cast `$1::name` stay PostgreSQL's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

test('every statement of a pg-promise query file parses, its variables read as names, values or clauses', () => {
  const file = join(import.meta.dirname, '../../fixtures/sql-files/pg-promise-query-file.sql');
  const model = sqlFrontEnd.parse(readFileSync(file, 'utf8'), file, {});
  assert.equal(model.fatal, undefined);
  const statements = model.sites.flatMap((s) => s.analysis.statements);
  assert.deepEqual(model.sites.flatMap((s) => s.analysis.errors.map((e) => e.message)), []);
  assert.deepEqual(statements.map((s) => s.kind), ['CreateStmt', 'IndexStmt', 'SelectStmt', 'UpdateStmt', 'SelectStmt']);
});

test('a cast of a parameter to the type name, or to json, is not a pg-promise filter', () => {
  const model = sqlFrontEnd.parse("update jobs set owner = $1::name, meta = $2::json where id = $3;\n", 'casts.sql', {});
  const [update] = model.sites.flatMap((s) => s.analysis.statements);
  assert.equal(update.kind, 'UpdateStmt');
  // The parameters are PostgreSQL's own: none became a hole (a hole reads as the analyzer's stand-in call).
  assert.deepEqual((update.calls ?? []).map((c) => c.name), []);
  assert.deepEqual(update.rowWrites[0].assignments.map((a) => a.value.kind), ['param', 'param']);
});
