// Connections kept where a framework keeps them: a member path of a local or
// a parameter (`event.locals.db = await pool.reserve()`) holds what was
// assigned to it until the path or its root is assigned again, and SvelteKit's
// `$lib` alias names src/lib (its tsconfig is generated, not committed).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const siteWith = (model: FileModel, fragment: string): SqlSite => {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(fragment));
  assert.ok(site, `a site with ${fragment}`);
  return site;
};

test('a connection assigned to a member path is read back from it, until the path or its root is assigned again', () => {
  const text = `import postgres from 'postgres';
const sql = postgres(process.env.DATABASE_URL!);
export async function handle({ event }: { event: { locals: Record<string, any> } }) {
  event.locals.db = await sql.reserve();
  await event.locals.db\`select 1 /*reserved*/\`;
  event.locals = {};
  await event.locals.db\`select 1 /*after*/\`;
}
`;
  const model = typescriptFrontEnd.parse(text, '/virtual/hooks.ts', {});
  assert.equal(siteWith(model, '/*reserved*/').connection.kind, 'pooled-client');
  const after = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes('/*after*/'));
  assert.notEqual(after?.connection.kind, 'pooled-client', 'a shorter path assigned again: not what it held');
});

test("SvelteKit's $lib names src/lib of the project", () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-svelte-'));
  const write = (name: string, body: string) => {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), body);
  };
  write('package.json', '{ "name": "app", "private": true }');
  write('src/lib/server/db.js', "import postgres from 'postgres';\nconst sql = postgres(process.env.DATABASE_URL);\nexport default sql;\n");
  const file = join(dir, 'src/hooks.server.js');
  const text = "import sql from '$lib/server/db.js';\nexport async function handle() { await sql`select 1 /*lib*/`; }\n";
  write('src/hooks.server.js', text);
  const model = typescriptFrontEnd.parse(text, file, {});
  assert.equal(siteWith(model, '/*lib*/').connection.kind, 'pool');
});
