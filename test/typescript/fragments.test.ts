// Fragments interpolated into a tagged query (flow/fragments.ts): a fragment
// of a fragment-making tag is SQL text where it is interpolated; an optional
// clause (`cond ? sql`...` : sql``) is read without it; anything else stays
// a hole.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel } from '../../src/model/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const modelOf = (body: string): FileModel =>
  typescriptFrontEnd.parse(`import { sql } from 'drizzle-orm';\nimport { drizzle } from 'drizzle-orm/node-postgres';\nimport pg from 'pg';\nconst db = drizzle(new pg.Pool());\n${body}`, 'fragments.ts', {});
const kinds = (m: FileModel) => m.sites.map((s) => s.analysis.statements.map((st) => st.kind).join(',') || 'unparsed');

test('a fragment held in a const, or written at the hole, is spliced into the statement', () => {
  const m = modelOf(`
const onlyDue = sql\`AND due_at <= now()\`;
export async function a() { await db.execute(sql\`UPDATE tasks SET claimed_at = now() WHERE id = 1 \${onlyDue} RETURNING id\`); }
export async function b() { await db.execute(sql\`UPDATE tasks SET claimed_at = now() WHERE id = 1 \${sql\`AND due_at <= now()\`} RETURNING id\`); }
`);
  assert.deepEqual(kinds(m), ['UpdateStmt', 'UpdateStmt']);
});

test('an optional clause is read without it; two different clauses, and values, stay holes', () => {
  const m = modelOf(`
export async function optional(kinds?: string[]) {
  const filter = kinds ? sql\`AND kind = ANY(\${kinds})\` : sql\`\`;
  await db.execute(sql\`UPDATE tasks SET claimed_at = now() WHERE id = 1 \${filter} RETURNING id\`);
}
export async function either(late: boolean) {
  const filter = late ? sql\`AND due_at < now()\` : sql\`AND due_at >= now()\`;
  await db.execute(sql\`UPDATE tasks SET claimed_at = now() WHERE id = 1 \${filter} RETURNING id\`);
}
export async function value(id: number) {
  await db.execute(sql\`UPDATE tasks SET claimed_at = now() WHERE id = \${id} RETURNING id\`);
}
`);
  // The optional clause leaves a statement that parses; the two-way one leaves a hole where a clause goes (no statement); a value is a placeholder.
  assert.deepEqual(m.sites.map((s) => `${s.functionName} ${s.analysis.statements.map((st) => st.kind).join(',')}`), ['optional UpdateStmt', 'value UpdateStmt']);
});

// The same reading for plain SQL text (strings.ts): node-postgres' text with an optional clause held in a const.
const pgModelOf = (body: string): FileModel => typescriptFrontEnd.parse(`import pg from 'pg';\nconst pool = new pg.Pool();\n${body}`, 'optional-text.ts', {});

test('an optional narrowing clause in plain text is read without it; a widening one, or two clauses, stay holes', () => {
  const m = pgModelOf(`
export async function narrowing(kind?: string) {
  const filter = kind ? \`AND kind = $2\` : '';
  await pool.query(\`UPDATE tasks SET claimed_at = now() WHERE id = $1 \${filter} RETURNING id\`, kind ? [1, kind] : [1]);
}
export async function inline(kind?: string) {
  await pool.query(\`UPDATE tasks SET claimed_at = now() WHERE id = $1 \${kind ? 'AND kind = $2' : ''} RETURNING id\`, [1]);
}
export async function widening(all: boolean) {
  const filter = all ? "OR state = 'running'" : '';
  await pool.query(\`UPDATE tasks SET claimed_at = now() WHERE id = $1 \${filter} RETURNING id\`, [1]);
}
export async function either(late: boolean) {
  const filter = late ? 'AND due_at < now()' : 'AND due_at >= now()';
  await pool.query(\`UPDATE tasks SET claimed_at = now() WHERE id = $1 \${filter} RETURNING id\`, [1]);
}
`);
  // A hole left in the text reads as a call of the analyzer's stand-in function there; a clause read away leaves none.
  const whole = m.sites.filter((s) => s.analysis.statements.some((st) => st.kind === 'UpdateStmt' && !(st.calls ?? []).some((c) => c.name.startsWith('pgq_'))));
  assert.deepEqual(whole.map((s) => s.functionName), ['narrowing', 'inline']);
});
