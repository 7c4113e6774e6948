// The CLI parses TS/JS with oxc-parser through an adapter (src/languages/
// typescript/parse.ts); the walker was written against typescript-estree's
// tree. These tests hold the adapter to that: on every TS/JS fixture, and on
// the syntax the fixtures may not show, both trees give the same FileModel.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { FileModel } from '../../src/model/index.ts';
import { TYPESCRIPT_EXTENSIONS } from '../../src/languages/extensions.ts';
import { buildTypeScriptModel, typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { parseTypeScriptProgram, parseWithOxc, parseWithTypeScriptEstree, tooDeepForOxc, weighsTooDeep } from '../../src/languages/typescript/parse.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const root = join(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (TYPESCRIPT_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) out.push(path);
  }
  return out.sort();
}

function modelWith(parse: typeof parseTypeScriptProgram, text: string, file: string): FileModel {
  return buildTypeScriptModel(parse(text, file), text, file, {});
}

/** The adapter's own tree: a file oxc rejected would fall back to typescript-estree and prove nothing. */
function oxcTree(text: string, file: string) {
  const program = parseWithOxc(text, file);
  assert.ok(program, `oxc parses ${file}`);
  return program;
}

test('every TS/JS fixture: the adapter tree and typescript-estree give the same FileModel', { timeout: 120_000 }, () => {
  const files = sourceFiles(join(root, 'fixtures'));
  assert.ok(files.length >= 20, `TS/JS fixtures found (${files.length})`);
  let sites = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const adapted = modelWith(oxcTree, text, file);
    assert.deepStrictEqual(adapted, modelWith(parseWithTypeScriptEstree, text, file), file);
    sites += adapted.sites.length;
  }
  assert.ok(sites > 50, `the fixtures hold SQL sites to compare (${sites})`);
});

test("this repository's own TS (src, rules, test, bench): the same FileModel from both trees", { timeout: 120_000 }, () => {
  // Ordinary code with every kind of syntax, none of it written for the front end.
  const files = ['src', 'rules', 'test', 'bench'].flatMap((dir) => sourceFiles(join(root, dir)));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    assert.deepStrictEqual(modelWith(oxcTree, text, file), modelWith(parseWithTypeScriptEstree, text, file), file);
  }
});

const SNIPPETS: [string, string][] = [
  [
    'job.ts',
    `#!/usr/bin/env node
'use strict';
// pgq-audit-ignore-next-line no-session-tenant-setting -- why
import type { PoolClient } from 'pg';
@decorated class Jobs { constructor(private readonly client: PoolClient) {}
  async run(t: string): Promise<void> {
    await ((this.client as any)!).query(\`select set_config('app.tenant', \${t}, false)\`);
    const n = 10n, r = /set\\s+x/gi, o = { a: 1, ...rest }, [x = 1] = list;
    label: for (const j of (jobs satisfies Job[])) { if (j) continue label; }
    await this.client?.query<{ n: number }>('update jobs set status = $1 where id = $2', ['done', j.id]);
  }
}
/* a block comment */ export default Jobs;`,
  ],
  [
    'view.tsx',
    `export const View = ({ pool }: { pool: Pool }) => <div onClick={() => pool.query("select set_config('app.tenant', '1', false)")}>{/* c */}x &amp; y</div>;`,
  ],
  [
    'legacy.js',
    `var pg = require('pg'); with (pg) { var pool = new Pool(); }
pool.query("select set_config('app.tenant', $1, false)", [t], function (err) { return 0x10; });
const el = <span>{x}</span>;`,
  ],
  ['worker.mjs', `import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query("SET app.tenant = '1'");\n`],
  ['worker.cjs', `const { Pool } = require('pg');\nmodule.exports = async (t) => { const c = await new Pool().connect(); await c.query('BEGIN'); c.release(); };\n`],
];

test('syntax the fixtures may not show (decorators, JSX, bigint, regex, sloppy scripts, parameter properties): the same FileModel', { timeout: 60_000 }, () => {
  for (const [file, text] of SNIPPETS) {
    const adapted = modelWith(oxcTree, text, file);
    assert.ok(adapted.sites.length > 0, `${file} has SQL sites to compare`);
    assert.deepStrictEqual(adapted, modelWith(parseWithTypeScriptEstree, text, file), file);
  }
});

test('a file that does not parse: one parse error from oxc, where typescript-estree rejects it too', { timeout: 60_000 }, () => {
  for (const [file, text] of [
    ['broken.ts', 'const x = ;\nawait pool.query("select 1")'],
    ['broken.tsx', 'export const A = () => <div>;'],
    ['cast.ts', 'const x = <T>y; const z = (a: number => a);'],
  ]) {
    assert.equal(parseWithOxc(text, file), undefined, `oxc rejects ${file}`);
    assert.throws(() => parseWithTypeScriptEstree(text, file), `typescript-estree rejects ${file} too`);
    const model = typescriptFrontEnd.parse(text, file, {});
    assert.match(model.fatal?.message ?? '', /^Parsing error: \S/, file);
    assert.ok(model.fatal!.span.start >= 0 && model.fatal!.span.start <= text.length, `${file}: the error is placed in the file`);
    assert.deepEqual(model.sites, []);
  }
});

test('nesting deep enough to overflow oxc is left to typescript-estree: one parse error, never a crashed process', { timeout: 120_000 }, () => {
  const forms: Record<string, (n: number) => string> = {
    parentheses: (n) => `x = ${'('.repeat(n)}1${')'.repeat(n)};`,
    conditionals: (n) => `x = ${'a ? b : '.repeat(n)}c;`,
    'else-if chain': (n) => `${'if (a) x(); else '.repeat(n)}y();`,
    arrows: (n) => `x = ${'a => '.repeat(n)}1;`,
    negations: (n) => `x = ${'!'.repeat(n)}y;`,
    'type arguments': (n) => `type T = ${'A<'.repeat(n)}B${'>'.repeat(n)};`,
  };
  for (const [name, make] of Object.entries(forms)) {
    // Past every measured crash depth of oxc (3,000-30,000 levels in a worker thread).
    const text = `await pool.query("select set_config('app.tenant', $1, false)", [t]);\n${make(40_000)}\n`;
    assert.ok(tooDeepForOxc(text), `${name}: recognised as too deep for oxc`);
    const model = typescriptFrontEnd.parse(text, 'deep.ts', {});
    assert.ok(model.fatal || model.sites.length > 0, `${name}: a model or a parse error`);
  }
  // A text of up to 1,000 characters is not weighed: no character weighs more than an open bracket's 30 of the 30,000.
  const heaviest: Record<string, (n: number) => string> = {
    ...forms,
    brackets: (n) => '(['.repeat(n),
    angles: (n) => 'A<'.repeat(n),
    'chains in brackets': (n) => '?('.repeat(n),
    'unary in brackets': (n) => '!('.repeat(n),
    'else in brackets': (n) => 'else('.repeat(n),
  };
  for (const [name, make] of Object.entries(heaviest)) {
    for (let n = 1; make(n).length <= 1_100; n++) {
      const text = make(n);
      assert.equal(tooDeepForOxc(text), text.length > 1_000 && weighsTooDeep(text), `${name} x${n}`);
      if (text.length <= 1_000) assert.equal(weighsTooDeep(text), false, `${name} x${n}: ${text.length} characters weigh too little`);
    }
  }
  assert.equal(weighsTooDeep('('.repeat(1_000)), false, 'the heaviest 1,000 characters are not too deep');
  assert.equal(weighsTooDeep('('.repeat(1_001)), true, 'one more is');
  // Depth is measured, not counted: a bundle-sized file full of ?, =>, else, if and unary operators at shallow depth goes to oxc.
  const shallow = Array.from({ length: 20_000 }, (_, i) => `const notify${i} = (a) => a ? !a.ok && -a.n < +b : typeof a?.x ?? "(("; if (i < 2) f(/[(]/); else if (a) g(); else h(a => a);`).join('\n');
  assert.ok(shallow.length > 2_000_000);
  assert.equal(tooDeepForOxc(shallow), false, 'a long file of shallow code');
  // Ordinary code is not mistaken for it: every fixture and this repository's sources go to oxc.
  for (const file of ['fixtures', 'src', 'test'].flatMap((dir) => sourceFiles(join(root, dir)))) {
    assert.equal(tooDeepForOxc(readFileSync(file, 'utf8')), false, file);
  }
});
