// Proofs run the fixtures' own SQL: these helpers read a fixture file and
// pick statements out of it with the analyzer, so the proof and the rule see
// the same text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSql, loadSqlParser, type StatementFacts } from '../../src/sql/index.ts';

await loadSqlParser();

export const fixturesRoot = join(import.meta.dirname, '../../fixtures');

export function readFixture(path: string): string {
  return readFileSync(join(fixturesRoot, path), 'utf8');
}

/** The text of the first statement of the fixture for which `pick` is true. */
export function statementOf(text: string, pick: (facts: StatementFacts) => boolean): string {
  const statement = analyzeSql(text).statements.find((s) => !s.routine && pick(s));
  if (!statement) throw new Error('fixture has no such statement');
  return text.slice(statement.span.start, statement.span.end);
}
