// The shape the code keeps (issue #24): the TS/JS front end's flow engine
// names no driver, each driver is a module of its own under
// src/languages/typescript/drivers/, imports go one way (no cycles in the
// front ends' shared code and the TS front end; no upward imports from the
// model or the front ends), and no source file grows past 700 lines.
// The Python front end has the same shape; test/python/driver-registry.test.ts
// checks its flow engine names no driver.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import fg from 'fast-glob';
import ts from 'typescript';
import { DRIVERS } from '../../src/languages/typescript/drivers/index.ts';
import { repoRoot } from '../helpers/cli.ts';

const MAX_LINES = 700;
const TS_FRONT_END = 'src/languages/typescript/';

const sources = fg.sync(['src/**/*.ts', 'rules/**/*.ts'], { cwd: repoRoot }).sort();
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/** The project files a source imports (type-only imports too: they tie modules together as much for a reader). */
function importsOf(file: string): string[] {
  const out = new Set<string>();
  for (const m of read(file).matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
    out.add(relative(repoRoot, resolve(dirname(join(repoRoot, file)), m[1] ?? m[2])));
  }
  return [...out];
}

/** Groups of files that import each other, directly or not (Tarjan's strongly connected components). */
function cycles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((d) => files.includes(d))]));
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

test('the sources are found', () => {
  assert.ok(sources.includes('src/languages/typescript/flow/walk.ts'));
  assert.ok(sources.some((f) => f.startsWith('rules/')));
});

test(`no file in src/ or rules/ is over ${MAX_LINES} lines`, () => {
  const long = sources.map((f) => `${f}: ${read(f).split('\n').length} lines`).filter((s) => Number(s.split(': ')[1].split(' ')[0]) > MAX_LINES);
  assert.deepEqual(long, []);
});

test('no import cycles in the front ends and the model', () => {
  const files = sources.filter((f) => f.startsWith('src/languages/') || f.startsWith('src/model/'));
  assert.deepEqual(cycles(files), []);
});

test('imports go down: the model imports no engine, front end or rule; a front end imports no engine, scan or rule', () => {
  const upward: string[] = [];
  for (const file of sources) {
    const layer = file.startsWith('src/model/') ? 'model' : file.startsWith('src/languages/') ? 'languages' : undefined;
    if (!layer) continue;
    for (const dep of importsOf(file)) {
      const above = layer === 'model' ? /^(src\/(engine|languages|scan|cli|report|eslint|config)\/|rules\/)/ : /^(src\/(engine|scan|cli|report|eslint)\/|rules\/)/;
      if (above.test(dep)) upward.push(`${file} -> ${dep}`);
    }
  }
  assert.deepEqual(upward, []);
});

test('the TS flow engine names no driver: no string of its code is a driver name, and it imports no driver module but the registry type', () => {
  const driverNames = new Set<string>(DRIVERS.map((d) => d.driver));
  const offenders: string[] = [];
  for (const file of sources.filter((f) => f.startsWith(`${TS_FRONT_END}flow/`))) {
    const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && driverNames.has(node.text) && !ts.isImportDeclaration(node.parent)) {
        offenders.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: '${node.text}'`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    // The engine is given the registry (drivers/index.ts) and hands drivers a context (drivers/model.ts): it may name their types, no more.
    for (const m of read(file).matchAll(/^(import|export)\b[^;]*?from '(\.\.\/drivers\/[^']+)'/gm)) {
      if (!/^import type\b/.test(m[0]) || !/\/(index|model)\.ts$/.test(m[2])) offenders.push(`${file}: ${m[0].split('\n')[0]}`);
    }
  }
  assert.deepEqual(offenders, []);
});

test('every driver the TS front end reads is a module of its own, named after it, in the registry', () => {
  const modules = fg.sync(['*.ts'], { cwd: join(repoRoot, TS_FRONT_END, 'drivers') }).map((f) => f.replace(/\.ts$/, ''));
  // The list; postgres.js and Bun's SQL share postgres.ts.
  for (const name of ['pg', 'postgres', 'kysely', 'knex', 'drizzle', 'slonik', 'pg-promise', 'typeorm', 'prisma', 'sequelize', 'neon', 'vercel-postgres', 'supabase']) {
    assert.ok(modules.includes(name), `drivers/${name}.ts`);
  }
  const moduleOf: Record<string, string> = { 'postgres.js': 'postgres', bun: 'postgres' };
  for (const { driver } of DRIVERS) {
    const file = `${TS_FRONT_END}drivers/${moduleOf[driver] ?? driver}.ts`;
    assert.match(read(file), new RegExp(`\\bdriver: '${driver.replace('.', '\\.')}',`), `${driver} is declared in ${file}`);
  }
  assert.equal(new Set(DRIVERS.map((d) => d.driver)).size, DRIVERS.length, 'one model per driver');
});

test("docs/architecture.md's worked example is drivers/typeorm.ts as it is", () => {
  const source = read(`${TS_FRONT_END}drivers/typeorm.ts`);
  const model = source.slice(source.indexOf('export const typeorm'), source.lastIndexOf('};') + 2);
  assert.ok(model.length > 100);
  assert.ok(read('docs/architecture.md').includes(model), 'the docs quote drivers/typeorm.ts');
});
