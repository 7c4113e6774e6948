// SQL that is not at the call (#25): the text a module's functions return is
// read as statements of unknown scope, once, only where it is clearly SQL that
// locks or writes rows, and never as transaction or session state.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { join } from 'node:path';

before(() => loadSqlParser());

const modelOf = (text: string): FileModel => typescriptFrontEnd.parse(text, 'statements.ts', {});
const sites = (m: FileModel) => m.sites.map((s) => `${s.functionName ?? '-'} ${s.scope.kind} ${s.analysis.statements.map((st) => st.kind).join(',')}`);

test('a claim, a lease write and a finish returned by functions are sites of unknown scope', () => {
  const m = modelOf(`
export function claim(schema: string) {
  return \`UPDATE \${schema}.jobs SET status = 'running', attempts = attempts + 1
            WHERE id = (SELECT id FROM \${schema}.jobs WHERE status = 'queued' LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id\`;
}
export const beat = (schema: string) => \`UPDATE \${schema}.jobs SET locked_until = now() + interval '1 minute' WHERE id = $1\`;
export function finish(schema: string) { return { text: "UPDATE jobs SET status = 'done' WHERE id = $1 AND attempts = $2", values: [] }; }
`);
  assert.deepEqual(sites(m), ['claim unknown UpdateStmt', 'beat unknown UpdateStmt', 'finish unknown UpdateStmt']);
  // The schema hole is one name in every statement: the claim and the lease write are on the same table.
  assert.deepEqual(m.sites.map((s) => s.analysis.statements[0].rowWrites[0].schema), ['${schema}', '${schema}', undefined]);
});

test('text that is not clearly SQL, reads that lock nothing, and state statements are not read', () => {
  const m = modelOf(`
export const message = (name: string) => \`update \${name} when ready\`;
export const list = (schema: string) => \`SELECT id FROM \${schema}.jobs WHERE status = 'queued'\`;
export function asTenant(tenant: string) { return \`SELECT set_config('app.tenant', '\${tenant}', false)\`; }
export const reset = () => 'DISCARD ALL';
export const open = () => 'BEGIN';
export function settingAndWrite() { return "SET app.tenant = '1'; UPDATE jobs SET status = 'done' WHERE id = $1"; }
`);
  // Of the last, only its UPDATE: the setting depends on the connection that runs it, which is unknown here.
  assert.deepEqual(sites(m), ['settingAndWrite unknown UpdateStmt']);
});

test('a function whose text a call of the file sends already is read there, not twice', () => {
  const m = modelOf(`
import pg from 'pg';
const pool = new pg.Pool();
function claimSql(table: string) { return \`UPDATE \${table} SET status = 'running' WHERE id = $1\`; }
export async function claim(id: number) { await pool.query(claimSql('jobs'), [id]); }
`);
  assert.deepEqual(sites(m), ['claim autocommit UpdateStmt']);
});

test('a builder module: an uncounted claim and an unfenced finish are flagged, the counted and fenced one is not', async () => {
  const fixtures = join(import.meta.dirname, '../../fixtures/projects');
  const bad = await scan({ paths: [join(fixtures, 'ts-sql-builders-bad')] });
  const found = bad.results.flatMap((r) => r.messages.map((m) => `${r.filePath.split('/').pop()}:${m.line} ${m.ruleId}`)).sort();
  assert.deepEqual(found, ['statements.ts:16 require-claim-attempt-limit', 'statements.ts:28 require-fenced-finish']);
  const good = await scan({ paths: [join(fixtures, 'ts-sql-builders-good')] });
  assert.deepEqual(good.results.flatMap((r) => r.messages), []);
});
