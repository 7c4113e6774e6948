// `query(text, values)` on the query function a caller hands in (flow/sites.ts, handedQuery): a parameter named
// `query`, or the `query` property of a destructured parameter, sends like `deps.query(text, values)`. Another name,
// or a local function, is not read so.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const read = (body: string): string[] =>
  typescriptFrontEnd
    .parse(body, 'store.ts', {})
    .sites.filter((s) => s.analysis.statements.some((st) => st.kind === 'UpdateStmt'))
    .map((s) => s.functionName ?? '?');

test("the caller's query function, by parameter or destructured property (renamed too), is read", () => {
  assert.deepEqual(
    read(`
export function destructured({ query }: { query: Function }) { return async function a() { await query("UPDATE jobs SET state = 'done' WHERE id = $1", [1]); }; }
export async function renamed({ query: send }: { query: Function }) { await send("UPDATE jobs SET state = 'done' WHERE id = $1", [1]); }
export async function plain(query: Function) { await query("UPDATE jobs SET state = 'done' WHERE id = $1", [1]); }
`),
    ['destructured', 'renamed', 'plain'],
  );
});

test('another property, a rebound name, or a function of the file is not the caller’s query', () => {
  assert.deepEqual(
    read(`
export async function other({ run }: { run: Function }) { await run("UPDATE jobs SET state = 'done' WHERE id = $1", [1]); }
export async function rebound({ query }: { query: Function }) { query = wrap(query); await query("UPDATE jobs SET state = 'done' WHERE id = $1", [1]); }
function local(text: string) { return text.length; }
export async function notAParameter() { local("UPDATE jobs SET state = 'done' WHERE id = 1"); }
`),
    [],
  );
});
