// A lease length a claim helper gets from its callers in other modules of the
// project (flow/project-callers.ts): read where every call of the unit passes
// one number the reader can follow, unknown otherwise.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { clearProjectCallers } from '../../src/languages/typescript/flow/project-callers.ts';
import { scan } from '../../src/scan/scan.ts';
import { actualOf, expectationsOf } from '../helpers/expectations.ts';

const fixtures = join(import.meta.dirname, '../../fixtures/typescript/require-fenced-finish/caller-lease-project/src');

describe('the caller-lease fixture project', () => {
  for (const name of ['bad-reports.ts', 'good-invoices.ts']) {
    test(name, async () => {
      clearProjectCallers();
      const file = join(fixtures, name);
      const { results } = await scan({ paths: [file], concurrency: 'off' });
      assert.deepEqual(actualOf(results[0]), expectationsOf(readFileSync(file, 'utf8')));
    });
  }
});

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-ts-callers-'));
  for (const [name, text] of Object.entries({ 'package.json': '{ "name": "shop", "type": "module" }', ...files })) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCallers();
  return root;
}

// A claim helper, a finish by id and a sweep; `length` is how the claim reads its lease length.
const queue = (signature: string, length: string, ending = `new Date(Date.now() + ${length}).toISOString()`) => `
import pg from 'pg';
const pool = new pg.Pool();
export async function take(${signature}) {
  const until = ${ending};
  return pool.query(\`update tasks set state = 'busy', locked_by = $1, locked_until = $2, tries = tries + 1
    where id = (select id from tasks where state = 'new' and tries < 5 order by id for update skip locked limit 1) returning id\`, ['w', until]);
}
export async function done(id: number) {
  await pool.query(\`update tasks set state = 'done', locked_by = null where id = $1\`, [id]);
}
export async function requeue() {
  await pool.query(\`update tasks set state = 'new', locked_by = null where state = 'busy' and locked_until < now() and tries < 5\`);
}
export async function bury() {
  await pool.query(\`update tasks set state = 'dead' where state = 'busy' and locked_until < now() and tries >= 5\`);
}`;

async function rulesOn(files: Record<string, string>): Promise<string[]> {
  const root = project(files);
  const { results } = await scan({ paths: [join(root, 'src/queue.ts')], concurrency: 'off' });
  return results[0].messages.map((m) => m.ruleId!).sort();
}

const judged = ['require-fenced-finish', 'require-lease-heartbeat'];

describe('numbers the callers of other modules pass', () => {
  test('an options property every call passes, through a const of the caller: the lease is known', async () => {
    const worker = `import { take } from './queue.js';\nconst MINUTES = 5;\nexport async function run() { await take({ worker: 'a', leaseMs: MINUTES * 60_000 }); }`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': queue('opts: { leaseMs: number }', 'opts.leaseMs'), 'src/worker.ts': worker }), judged);
  });

  test('a plain parameter, and the calls of two modules agreeing', async () => {
    const a = `import { take } from './queue.js';\nexport const a = () => take(300_000);`;
    const b = `import { take as claim } from './queue.js';\nexport async function b() { const ms = 5 * 60 * 1000; return claim(ms); }`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': queue('ms: number', 'ms'), 'src/a.ts': a, 'src/b.ts': b }), judged);
  });

  test('a length in the interval text that every caller passes', async () => {
    const text = queue('seconds: number', '', `new Date()`).replace('locked_until = $2', `locked_until = now() + interval '\${seconds} seconds'`).replace(", ['w', until]", ", ['w']");
    const worker = `import { take } from './queue.js';\nexport const run = () => take(300);`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': worker }), judged);
  });

  test("a destructured property's default where a call leaves it out, agreeing with the others", async () => {
    const text = queue('{ leaseMs = 300_000 }: { leaseMs?: number } = {}', 'leaseMs');
    const agree = `import { take } from './queue.js';\nexport const a = () => take();\nexport const b = () => take({ leaseMs: 5 * 60_000 });`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': agree }), judged);
    const differ = `import { take } from './queue.js';\nexport const a = () => take();\nexport const b = () => take({ leaseMs: 60_000 });`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': differ }), []);
  });

  test("a constructor's options kept on the instance, read in a method: what every `new` passes", async () => {
    const kept = (ctor: string) =>
      queue('', 'this.options.leaseMs')
        .replace('export async function take() {', `export class Tasks {\n  ${ctor}\n  async take() {`)
        .replace(/\n {2}return pool\.query\(([\s\S]*?)\);\n\}/, '\n  return pool.query($1);\n}\n}');
    const byProperty = kept('constructor(private readonly options: { leaseMs: number }) {}');
    const byAssignment = kept('private options: { leaseMs: number };\n  constructor(options: { leaseMs: number }) { this.options = options; }');
    const worker = (calls: string) => `import { Tasks } from './queue.js';\nconst LEASE = 5 * 60_000;\nexport function make(): Tasks { ${calls} }`;
    for (const text of [byProperty, byAssignment]) {
      assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': worker('return new Tasks({ leaseMs: LEASE });') }), judged, text);
      assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': worker('new Tasks({ leaseMs: 1000 }); return new Tasks({ leaseMs: LEASE });') }), [], 'disagree');
      assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': `${worker('return new Tasks({ leaseMs: LEASE });')}\nexport class Slow extends Tasks {}` }), [], 'subclass');
    }
    // The field written again elsewhere in the class: not what the constructor was handed.
    const reassigned = byAssignment.replace('async take() {', 'reset() { this.options = { leaseMs: 1 }; }\n  async take() {');
    assert.deepEqual(await rulesOn({ 'src/queue.ts': reassigned, 'src/worker.ts': worker('return new Tasks({ leaseMs: LEASE });') }), []);
  });

  test('callers that disagree, a spread, a value read at run time, a missing property or a use other than a call: unknown', async () => {
    const text = queue('opts: { leaseMs: number }', 'opts.leaseMs');
    const cases = [
      `export const a = () => take({ leaseMs: 300_000 });\nexport const b = () => take({ leaseMs: 30_000 });`,
      `const base = { leaseMs: 300_000 };\nexport const a = () => take({ ...base });`,
      `export const a = () => take({ leaseMs: Number(process.env.LEASE_MS) });`,
      `export const a = () => take({} as { leaseMs: number });`,
      `export const a = () => take({ leaseMs: 300_000 });\nexport const jobs = [take];`,
      `export const a = (ms: number) => take({ leaseMs: ms });`,
    ];
    for (const calls of cases) {
      assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': `import { take } from './queue.js';\n${calls}` }), [], calls);
    }
  });

  test('a call that may go unseen (through a barrel, require(), a renamed export): unknown', async () => {
    const text = queue('opts: { leaseMs: number }', 'opts.leaseMs');
    const agreeing = `import { take } from './queue.js';\nexport const a = () => take({ leaseMs: 300_000 });`;
    const barrel = { 'src/index.ts': `export * from './queue.js';`, 'src/far.ts': `import { take } from './index.js';\nexport const b = () => take({ leaseMs: 1_000 });` };
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': agreeing, ...barrel }), []);
    const required = `const q = require('./queue.js');\nexport const b = () => q.take({ leaseMs: 1_000 });`;
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': agreeing, 'src/far.ts': required }), []);
    assert.deepEqual(await rulesOn({ 'src/queue.ts': `${text}\nexport { take as claim };`, 'src/worker.ts': agreeing }), []);
    // The same files with the agreeing caller alone: known.
    assert.deepEqual(await rulesOn({ 'src/queue.ts': text, 'src/worker.ts': agreeing }), judged);
  });

  test('no caller at all: unknown', async () => {
    assert.deepEqual(await rulesOn({ 'src/queue.ts': queue('opts: { leaseMs: number }', 'opts.leaseMs') }), []);
  });
});

test('--cache: a caller changed in another module changes the queue module\'s findings', async () => {
  const root = project({
    'src/queue.ts': queue('opts: { leaseMs: number }', 'opts.leaseMs'),
    'src/worker.ts': `import { take } from './queue.js';\nexport const a = () => take({ leaseMs: 300_000 });`,
    'src/other.ts': `export const nothing = 1;`,
  });
  const options = { paths: [join(root, 'src')], cwd: root, cache: true, concurrency: 'off' as const };
  const rules = (r: Awaited<ReturnType<typeof scan>>) => r.results.flatMap((f) => f.messages.map((m) => m.ruleId!)).sort();
  assert.deepEqual(rules(await scan(options)), judged);
  // A call that disagrees, added to a module that had none.
  writeFileSync(join(root, 'src/other.ts'), `import { take } from './queue.js';\nexport const b = () => take({ leaseMs: 1_000 });`);
  clearProjectCallers();
  assert.deepEqual(rules(await scan(options)), []);
});
