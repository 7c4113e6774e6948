// SQL a module marks with `/* sql */` (#25): read as statements of unknown
// scope where no call reads it, once, only where it locks or writes rows; a
// template engine's `{{name}}` reads as that name in every statement.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel } from '../../src/model/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const modelOf = (text: string): FileModel => typescriptFrontEnd.parse(text, 'statements.ts', {});
const tables = (m: FileModel) => m.sites.flatMap((s) => s.analysis.statements.flatMap((st) => [...st.rowWrites.map((w) => `${w.schema ?? ''}.${w.table}`), ...st.lockingReads.flatMap((r) => r.tables.map((t) => `read ${t}`))]));

test('marked statements handed to a helper are sites of unknown scope, with the engine names as names', () => {
  const m = modelOf(`
import { def } from './kit';
export const claim = def(/* sql */ \`UPDATE {{schema}}.{{prefix}}tasks SET state = 'busy' WHERE id = (SELECT id FROM {{schema}}.{{prefix}}tasks WHERE state = 'new' LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id\`, {});
export const done = def(/*SQL*/ "UPDATE {{schema}}.{{prefix}}tasks SET state = 'done' WHERE id = $1", {});
`);
  assert.deepEqual(m.sites.map((s) => `${s.scope.kind} ${s.connection.kind}`), ['unknown unknown', 'unknown unknown']);
  assert.deepEqual(tables(m), ['schema.prefixtasks', 'read prefixtasks', 'schema.prefixtasks']);
});

test('unmarked text, reads that lock nothing and state statements are not read', () => {
  const m = modelOf(`
import { def } from './kit';
export const plain = def(\`UPDATE tasks SET state = 'done' WHERE id = $1\`, {});
export const list = def(/* sql */ \`SELECT id FROM tasks WHERE state = 'new'\`, {});
export const tenant = def(/* sql */ \`SELECT set_config('app.tenant', $1, false)\`, {});
export const open = def(/* sql */ 'BEGIN', {});
export const note = /* sql */ 'update the docs';
`);
  assert.deepEqual(m.sites, []);
});

test('a marked text a call sends is read once, at the call', () => {
  const m = modelOf(`
import pg from 'pg';
const pool = new pg.Pool();
export async function done(id: number) {
  await pool.query(/* sql */ \`UPDATE tasks SET state = 'done' WHERE id = $1\`, [id]);
}
`);
  assert.equal(m.sites.length, 1);
  assert.notEqual(m.sites[0].connection.kind, 'unknown');
});
