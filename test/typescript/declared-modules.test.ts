// A module of function declarations only (flow/declared.ts) answers what it
// exports as a function, and that a function returning an object returns no
// value, from its syntax: a handler that calls its controller for the object
// it answers with reads the controller without walking it or the chain below
// it. What every file reports is what it reports when it is scanned alone,
// and a declared function that returns a pool is still walked for it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { parseTypeScriptProgram } from '../../src/languages/typescript/parse.ts';
import { exportedDeclarations, returnsNoValue } from '../../src/languages/typescript/flow/declared.ts';
import { moduleParses } from '../../src/languages/typescript/flow/modules.ts';
import { scan } from '../../src/scan/scan.ts';

function project(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'pgq-declared-modules-')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const sessionSet = (on: string) => `await ${on}.query("select set_config('app.tenant', $1, false)", [String(tenant)]);`;
const layers = {
  'package.json': '{ "name": "shop", "type": "module" }',
  'src/db/pool.ts': "import pg from 'pg';\nexport const pool = new pg.Pool({ max: 4 });\n",
  'src/db/index.ts': "export { pool } from './pool.js';\nexport type Row = Record<string, unknown>;\n",
  // Declarations only, and db() returns the pool: walked for what it returns.
  'src/db/handle.ts': "import { pool } from './index.js';\n\nexport function db() {\n  return pool;\n}\n",
  'src/repositories/invoices.ts': `import { pool } from '../db/index.js';\nimport type { Row } from '../db/index.js';\n\nexport async function markPaid(tenant: number): Promise<Row> {\n  ${sessionSet('pool')}\n  const { rows } = await pool.query('update invoices set paid = true returning id');\n  return rows[0];\n}\n`,
  'src/services/billing.ts': "import { markPaid } from '../repositories/invoices.js';\n\nexport async function settle(tenant: number) {\n  const paid = await markPaid(tenant);\n  return { paid, at: Date.now() };\n}\n",
  'src/controllers/billing.ts': "import { settle } from '../services/billing.js';\n\nexport async function post(tenant: number) {\n  return { status: 200, body: await settle(tenant) };\n}\n",
  'src/handlers/pay.ts': `import { post } from '../controllers/billing.js';\nimport { db } from '../db/handle.js';\n\nexport async function handle(tenant: number) {\n  ${sessionSet('db()')}\n  return post(tenant);\n}\n`,
};

const findingsOf = (dir: string, results: { filePath: string; messages: { line: number; ruleId: string | null }[] }[]) =>
  results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line} ${m.ruleId}`));

test('a handler reads its controller of declarations only without walking the chain below it, and the pool a declared function returns', async () => {
  const dir = project(layers);
  const before = { ...moduleParses };
  const result = await scan({ paths: [join(dir, 'src/handlers/pay.ts')], cwd: dir, concurrency: 'off' });
  assert.deepEqual(findingsOf(dir, result.results), ['src/handlers/pay.ts:5 no-session-tenant-setting']);
  // controllers/billing (asked what post returns: an object), db/handle, db/index, db/pool: parsed.
  // services/billing and the repository below it are neither parsed nor walked.
  assert.equal(moduleParses.count - before.count, 4);
  // db/handle (db() returns a name: its walk says the pool), db/index and db/pool: walked.
  assert.equal(moduleParses.walks - before.walks, 3);
});

test('every file of the layers reports in the whole scan what it reports scanned alone', async () => {
  const dir = project(layers);
  const whole = findingsOf(dir, (await scan({ paths: [dir], cwd: dir, concurrency: 'off' })).results);
  const alone: string[] = [];
  for (const file of Object.keys(layers).filter((f) => f.endsWith('.ts')).sort()) {
    const single = project(layers);
    alone.push(...findingsOf(single, (await scan({ paths: [join(single, file)], cwd: single, concurrency: 'off' })).results));
  }
  assert.deepEqual(whole, alone);
  assert.ok(whole.includes('src/repositories/invoices.ts:5 no-session-tenant-setting'), whole.join('\n'));
  assert.ok(whole.includes('src/handlers/pay.ts:5 no-session-tenant-setting'), whole.join('\n'));
});

test('only a module of function declarations, none reassigned, answers from its syntax; only returns of objects, literals and arithmetic are no value', () => {
  const declared = (text: string) => [...(exportedDeclarations(parseTypeScriptProgram(text, 'm.ts'))?.keys() ?? ['(walked)'])];
  assert.deepEqual(declared("import { pool } from './db';\nexport type Id = number;\nfunction helper() {}\nexport async function find(id: Id) { return helper(); }\n"), ['find']);
  // A const, an export list, a class, `this`, a reassigned declaration: the walk says what the names hold.
  assert.deepEqual(declared("export const pool = make();\nexport function find() {}\n"), ['(walked)']);
  assert.deepEqual(declared('function find() {}\nexport { find };\n'), ['(walked)']);
  assert.deepEqual(declared('export function find() {}\nclass Repo {}\n'), ['(walked)']);
  assert.deepEqual(declared('export function find() { return this; }\n'), ['(walked)']);
  assert.deepEqual(declared('export function find() {}\nexport function swap() { find = () => 1; }\n'), ['(walked)']);
  const returns = (text: string) => {
    const program = parseTypeScriptProgram(text, 'm.ts');
    return returnsNoValue(exportedDeclarations(program)!.get('f')!);
  };
  assert.equal(returns('export async function f(a: number) { if (a) return { a }; return [await g(), `x${a}`, 1 + a, -a]; function g() { return pool; } }'), true);
  assert.equal(returns('export function f() {}'), true);
  assert.equal(returns('export function f(a: number) { if (a) return { a }; return a; }'), false);
  assert.equal(returns('export async function f() { return await g(); }'), false);
  assert.equal(returns('export function f() { return (x ? y : z) as never; }'), false);
});
