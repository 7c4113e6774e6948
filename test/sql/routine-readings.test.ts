// How a routine's statements are read where their meaning is outside the statement: a PL/pgSQL variable set
// once by its declaration, a write by the row of a FOR loop over a query, and a counter read through coalesce.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSql, loadSqlParser, type Comparison, type SqlAnalysis } from '../../src/sql/index.ts';

await loadSqlParser();

const writes = (analysis: SqlAnalysis) => {
  assert.deepEqual(analysis.errors, []);
  return analysis.statements.flatMap((s) => s.rowWrites);
};
const shown = (where: readonly Comparison[]) =>
  where.map((c) => {
    const v = c.value;
    const value = v.kind === 'literal' ? String(v.value) : v.kind === 'column' ? v.column : v.kind === 'expression' ? `f(${v.functions.join(',')})${v.intervalSeconds ?? ''}` : v.kind;
    return `${c.negated ? 'not ' : ''}${c.column} ${c.op} ${value}${c.underOr ? ' (or)' : ''}`;
  });

test('coalesce(column, constant) is compared, and counted, as the column', () => {
  const sql = `update mails set retries = coalesce(retries, 0) + 1, owner = coalesce($1, owner)
  where coalesce(retries, 0) < 3 and 5 > coalesce(tries, 0) and coalesce(a, b) = 1`;
  const [w] = writes(analyzeSql(sql));
  assert.deepEqual(shown(w.where), ['retries < 3', 'tries < 5']);
  assert.deepEqual(w.assignments[0].value, { kind: 'increment', by: 1 });
  // The caller's value or the column left as it is: nothing computed from the column.
  const owner = w.assignments[1].value;
  assert.ok(owner.kind === 'expression' && !owner.columns.includes('owner'));
});
