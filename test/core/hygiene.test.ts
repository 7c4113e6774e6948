// The test suite's own rules: no test is skipped or left to do, every test and
// hook has a timeout (test/setup/test-timeout.mjs), and the fixture folders
// the fixture tests iterate over are not empty, so no test passes by having
// nothing to check.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import fg from 'fast-glob';
import { rules } from '../../rules/index.ts';
import { CHILD_TIMEOUT_MS, repoRoot } from '../helpers/cli.ts';

const testSources = fg.sync(['test/**/*.{ts,mjs}'], { cwd: repoRoot, ignore: ['**/node_modules/**'] }).sort();

test('the test sources are found', () => {
  assert.ok(testSources.length > 50, `${testSources.length} files`);
  assert.ok(testSources.includes('test/core/hygiene.test.ts'));
});

test('no test is skipped or left to do: a skipped test hides the regression it was written for', () => {
  const offenders: string[] = [];
  for (const file of testSources) {
    readFileSync(join(repoRoot, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // The skip or todo option, test.skip(), t.skip(), test.todo(); comments aside.
        if (!/^\s*(\/\/|\*)/.test(line) && /[{,]\s*(skip|todo)\s*:|\.(skip|todo)\s*\(/.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(offenders, []);
});

test("node:test is imported by name: its default export cannot be given the default timeout", () => {
  const offenders = testSources.filter((file) => /^import\s+\w+\s*(,\s*\{[^}]*\}\s*)?from\s*['"]node:test['"]/m.test(readFileSync(join(repoRoot, file), 'utf8')));
  assert.deepEqual(offenders, []);
});

test('every test and hook gets the default timeout unless it names its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-timeouts-'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  const forever = 'await new Promise(() => setInterval(() => {}, 1000));';
  const sleep = 'await new Promise((resolve) => setTimeout(resolve, 600));';
  writeFileSync(
    join(dir, 'probe.test.ts'),
    [
      "import { describe, it, test } from 'node:test';",
      `test('hangs', async () => { ${forever} });`,
      `test('names its own timeout', { timeout: 60_000 }, async () => { ${sleep} });`,
      `describe('a suite', () => { it('hangs too', async () => { ${forever} }); });`,
      `test({ name: 'options first' }, async () => { ${forever} });`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'hook.test.ts'), [`import { before, test } from 'node:test';`, `before(async () => { ${forever} });`, `test('after a hung hook', () => {});`, ''].join('\n'));
  const env: NodeJS.ProcessEnv = { ...process.env, PGQ_TEST_TIMEOUT_MS: '300' };
  delete env.NODE_TEST_CONTEXT; // a test run of its own, not a child of this one
  const run = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--import', join(repoRoot, 'test/setup/test-timeout.mjs'), '--test', '--test-reporter=tap', '--test-timeout=20000', 'probe.test.ts', 'hook.test.ts'],
    { cwd: dir, env, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS },
  );
  assert.equal(run.error, undefined);
  const out = run.stdout;
  for (const name of ['hangs', 'hangs too', 'options first']) assert.match(out, new RegExp(`not ok \\d+ - ${name}\\n[\\s\\S]*?test timed out after 300ms`), `${name}\n${out}`);
  assert.match(out, /^\s*ok \d+ - names its own timeout$/m, out);
  assert.match(out, /not ok \d+ - after a hung hook\n[\s\S]*?failureType: 'hookFailed'/, out);
  // The hung tests fail on their own bound first; what they leave running (the interval) is ended by the file's.
  assert.equal(run.status, 1);
});

const fixtures = join(repoRoot, 'fixtures');
const ruleIds = new Set(rules.map((r) => r.id));

for (const language of ['sql', 'typescript', 'python', 'queue']) {
  test(`fixtures/${language}: every rule folder has a bad and a good fixture`, () => {
    const folders = readdirSync(join(fixtures, language), { withFileTypes: true }).filter((e) => e.isDirectory() && ruleIds.has(e.name));
    assert.ok(folders.length > 0, 'the fixture tests have rule folders to iterate over');
    for (const folder of folders) {
      const names = fg.sync('**/*', { cwd: join(fixtures, language, folder.name) }).map((f) => f.split('/').pop()!);
      const where = relative(repoRoot, join(fixtures, language, folder.name));
      assert.ok(names.some((n) => n.startsWith('bad')), `${where} has no bad fixture`);
      assert.ok(names.some((n) => n.startsWith('good')), `${where} has no good fixture`);
    }
  });
}

test('fixtures/sql and fixtures/typescript hold only rule folders of rules that read the language', () => {
  for (const [language, folder] of [['sql', 'sql'], ['typescript', 'typescript']] as const) {
    for (const name of readdirSync(join(fixtures, folder))) {
      const rule = rules.find((r) => r.id === name);
      assert.ok(rule, `fixtures/${folder}/${name} is not a rule id: its fixture test would name no rule`);
      assert.ok(rule.languages.includes(language), `${rule.id} does not read ${language}`);
    }
  }
});
