// Picks statements out of fixture files by their `-- name:` comment, so the
// proofs run the very SQL the rules read.
import { analyzeSql, loadSqlParser } from '../../../src/sql/index.ts';
import { readFixture } from '../../helpers/fixture-sql.ts';

await loadSqlParser();

/** The text of the statement that follows `-- name: <name>` in the fixture. */
export function namedStatement(fixture: string, name: string): string {
  const text = readFixture(fixture);
  const marker = new RegExp(`^-- name: ${name}\\b.*$`, 'm').exec(text);
  if (!marker) throw new Error(`${fixture} has no statement named ${name}`);
  const after = marker.index + marker[0].length;
  const statement = analyzeSql(text).statements.find((s) => !s.routine && s.span.start > after);
  if (!statement) throw new Error(`${fixture}: nothing follows -- name: ${name}`);
  return text.slice(statement.span.start, statement.span.end);
}
