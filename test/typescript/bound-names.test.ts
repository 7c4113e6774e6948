// bound-names.ts: a name the text binds to no initializer is told without the
// file's constant index; every const the tree declares must be among the names
// the text may bind, or a reader that asks (drivers/knex-builder.ts) would miss it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { parseTypeScriptProgram } from '../../src/languages/typescript/parse.ts';
import { mayBeBound } from '../../src/languages/typescript/bound-names.ts';
import { children, type Node } from '../../src/languages/typescript/syntax.ts';

const bound = (code: string, name: string) => mayBeBound(parseTypeScriptProgram(code, 'file.ts'), code, name);

test('each way a const is written binds its name', () => {
  assert.equal(bound('const db = wrap(trx);', 'db'), true);
  assert.equal(bound('const db: Knex = wrap(trx);', 'db'), true);
  assert.equal(bound('const a = 1,\n  db = wrap(trx);', 'db'), true);
  assert.equal(bound('const db /* wrapped */ = wrap(trx);', 'db'), true);
  assert.equal(bound('const db // wrapped\n  = wrap(trx);', 'db'), true);
  assert.equal(bound('export const db\n  = wrap(trx);', 'db'), true);
});

test('a name only imported, called or declared as a function is bound to no initializer', () => {
  const code = "import { wrap } from './wrap';\nfunction load(id) { return wrap(id).first(); }\nload(1);";
  assert.equal(bound(code, 'wrap'), false);
  assert.equal(bound(code, 'load'), false);
  // A name written with an escape, or of letters outside ASCII: always may be.
  assert.equal(bound('const d\\u0062 = wrap(trx);', 'other'), true);
  assert.equal(bound('const dé = wrap(trx);', 'dé'), true);
});

/** The names of the tree's `const X = init` declarators. */
function constNames(node: Node, out: string[] = []): string[] {
  if (node.type === 'VariableDeclaration' && node.kind === 'const') {
    for (const d of node.declarations) if (d.id.type === 'Identifier' && d.init) out.push(d.id.name);
  }
  for (const child of children(node)) constNames(child, out);
  return out;
}

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name)) yield path;
  }
}

test("every const of the fixtures' and the project's own TS and JS files is among the names its text may bind", () => {
  let checked = 0;
  for (const path of [...sources('fixtures'), ...sources('src')]) {
    const text = readFileSync(path, 'utf8');
    let program: TSESTree.Program;
    try {
      program = parseTypeScriptProgram(text, path);
    } catch {
      continue;
    }
    for (const name of constNames(program)) {
      assert.equal(mayBeBound(program, text, name), true, `${path}: ${name}`);
      checked++;
    }
  }
  assert.ok(checked > 5000, `only ${checked} consts checked`);
});
