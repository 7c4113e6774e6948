// The README's ESLint configs, pasted as they are into fresh projects of each
// module kind (what `npm init -y` writes is CommonJS), find a bug through the
// built package: ESLint loads a CommonJS config with require(), an ES module
// one with import, and the plugin must serve both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CHILD_TIMEOUT_MS, repoRoot } from '../helpers/cli.ts';

const eslintBin = join(repoRoot, 'node_modules/eslint/bin/eslint.js');
const badJob = join(repoRoot, 'fixtures/typescript/no-session-tenant-setting/bad.ts');
const projects: string[] = [];
after(() => {
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});

/** The README's js block whose first line names `file`. */
function readmeConfig(file: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const found = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((code) => code.startsWith(`// ${file}\n`));
  assert.ok(found, `README has a js block for ${file}`);
  return found;
}

/** A project as `npm init -y` leaves it, with pgq-audit installed (this checkout, linked) and one job with a bug. */
function freshProject(type: 'commonjs' | 'module'): string {
  const dir = mkdtempSync(join(tmpdir(), `pgq-eslint-${type}-`));
  projects.push(dir);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', main: 'index.js', type }, null, 2)}\n`);
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(repoRoot, join(dir, 'node_modules/pgq-audit'), 'dir');
  copyFileSync(badJob, join(dir, 'job.ts'));
  return dir;
}

function eslint(dir: string, args: string[]) {
  const run = spawnSync(process.execPath, [eslintBin, '-f', 'json', ...args], { cwd: dir, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  assert.equal(run.status, 1, `exit ${run.status}\n${run.stderr}\n${run.stdout}`);
  const [result] = JSON.parse(run.stdout) as { filePath: string; messages: { ruleId: string | null; message: string; line: number }[] }[];
  return result.messages;
}

function assertFindsTheLeak(messages: { ruleId: string | null; message: string; line: number }[]) {
  assert.ok(!messages.some((m) => m.message.includes('could not analyse')), JSON.stringify(messages));
  const leaks = messages.filter((m) => m.ruleId === 'pgq/no-session-tenant-setting');
  assert.ok(leaks.length > 0, JSON.stringify(messages));
  assert.match(leaks[0].message, /outlives the job/);
}

const cases = [
  { type: 'commonjs', block: 'eslint.config.cjs', as: 'eslint.config.js' },
  { type: 'commonjs', block: 'eslint.config.cjs', as: 'eslint.config.cjs' },
  { type: 'commonjs', block: 'eslint.config.mjs', as: 'eslint.config.mjs' },
  { type: 'module', block: 'eslint.config.mjs', as: 'eslint.config.js' },
] as const;

for (const { type, block, as } of cases) {
  test(`a "type": "${type}" project: the README's ${block} block as ${as} finds the leak`, () => {
    const dir = freshProject(type);
    writeFileSync(join(dir, as), readmeConfig(block));
    assertFindsTheLeak(eslint(dir, ['job.ts']));
  });
}

test('require() then ESLint#lintText at once: the parser is ready when the first file is linted', () => {
  // No await between loading the plugin and linting: the parser's load must need no more than ESLint's own awaits.
  const dir = freshProject('commonjs');
  writeFileSync(
    join(dir, 'lint.js'),
    `const pgq = require('pgq-audit/eslint');
const { ESLint } = require(${JSON.stringify(join(repoRoot, 'node_modules/eslint'))});
new ESLint({ overrideConfigFile: true, overrideConfig: [...pgq.configs.recommended] })
  .lintText(require('node:fs').readFileSync('job.ts', 'utf8'), { filePath: 'job.ts' })
  .then(([result]) => console.log(JSON.stringify(result.messages)));
`,
  );
  const run = spawnSync(process.execPath, ['lint.js'], { cwd: dir, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  assert.equal(run.status, 0, run.stderr);
  assertFindsTheLeak(JSON.parse(run.stdout));
});

test('require() and import give the same plugin object', () => {
  const dir = freshProject('module');
  writeFileSync(
    join(dir, 'same.js'),
    `import { createRequire } from 'node:module';
import pgq from 'pgq-audit/eslint';
const required = createRequire(import.meta.url)('pgq-audit/eslint');
console.log(JSON.stringify({ same: required === pgq, name: required.meta.name, rules: Object.keys(required.rules).length }));
`,
  );
  const run = spawnSync(process.execPath, ['same.js'], { cwd: dir, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  assert.equal(run.status, 0, run.stderr);
  const seen = JSON.parse(run.stdout);
  assert.equal(seen.same, true);
  assert.equal(seen.name, 'pgq-audit');
  assert.ok(seen.rules > 0);
});

test("Linter#verify in the same tick as require(): one message saying how to wait; after loadSqlParser(), the finding", () => {
  const dir = freshProject('commonjs');
  writeFileSync(
    join(dir, 'verify.js'),
    `const pgq = require('pgq-audit/eslint');
const { Linter } = require(${JSON.stringify(join(repoRoot, 'node_modules/eslint'))});
const code = require('node:fs').readFileSync('job.ts', 'utf8');
const verify = () => new Linter().verify(code, [...pgq.configs.recommended], 'job.ts');
const early = verify();
require('pgq-audit').loadSqlParser().then(() => console.log(JSON.stringify({ early, late: verify() })));
`,
  );
  const run = spawnSync(process.execPath, ['verify.js'], { cwd: dir, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS });
  assert.equal(run.status, 0, run.stderr);
  const { early, late } = JSON.parse(run.stdout);
  assert.equal(early.length, 1, JSON.stringify(early));
  assert.match(early[0].message, /the SQL parser \(wasm\) has not finished loading: `await require\('pgq-audit'\)\.loadSqlParser\(\)` before linting/);
  assertFindsTheLeak(late);
});
