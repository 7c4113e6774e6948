// Real ESLint (the ESLint class, a flat config of pgq.configs.recommended) on
// the TS fixtures reports what `pgq-audit scan` reports for the same files:
// same rule ids, same positions. Cross-file rules are compared on what one
// file proves (ESLint sees one file; the scan adds project-wide findings).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { rules } from '../../rules/index.ts';
import plugin from '../../src/eslint/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { CHILD_TIMEOUT_MS, repoRoot, runCli } from '../helpers/cli.ts';

const fixtures = join(repoRoot, 'fixtures/typescript');
const crossFile = new Set(rules.filter((r) => r.checkProject).map((r) => r.id));

type Key = string;
const key = (file: string, m: { ruleId: string | null; line: number; column: number; endLine?: number; endColumn?: number }): Key =>
  `${file.slice(repoRoot.length + 1)}:${m.line}:${m.column}-${m.endLine}:${m.endColumn} ${m.ruleId?.replace(/^pgq\//, '')}`;

async function eslintFindings(config: unknown[]): Promise<Key[]> {
  const eslint = new ESLint({ cwd: repoRoot, overrideConfigFile: true, overrideConfig: config as never, ignore: false });
  const results = await eslint.lintFiles([fixtures]);
  assert.ok(results.length >= 14, `ESLint linted ${results.length} files`);
  return results.flatMap((r) => r.messages.filter((m) => m.ruleId?.startsWith('pgq/') || m.fatal).map((m) => key(r.filePath, m))).sort();
}

async function scanFindings(): Promise<{ all: Key[]; perFile: Key[] }> {
  const { results } = await scan({ paths: [fixtures], cwd: repoRoot, concurrency: 'off' });
  const all = results.flatMap((r) => r.messages.map((m) => key(r.filePath, m))).sort();
  // Project-pass findings have no span; the per-file pass of a cross-file rule has one.
  const perFile = results.flatMap((r) => r.messages.filter((m) => !crossFile.has(m.ruleId ?? '') || m.span.end > 0).map((m) => key(r.filePath, m))).sort();
  return { all, perFile };
}

test('ESLint with pgq.configs.recommended reports what the scan reports, fixture by fixture', async () => {
  const [fromEslint, fromScan] = await Promise.all([eslintFindings([...plugin.configs.recommended]), scanFindings()]);
  assert.ok(fromEslint.length >= 14, fromEslint.join('\n'));
  assert.deepEqual(fromEslint, fromScan.perFile);
  // Whatever the scan adds is a cross-file rule's project-wide finding.
  for (const extra of fromScan.all.filter((k) => !fromEslint.includes(k))) assert.ok([...crossFile].some((id) => extra.endsWith(` ${id}`)), extra);
});

test("the same findings with typescript-eslint's recommended config alongside", async () => {
  const config = [...tseslint.configs.recommended, ...plugin.configs.recommended];
  const withTs = (await eslintFindings(config)).filter((k) => !k.includes(' @typescript-eslint/'));
  const alone = await eslintFindings([...plugin.configs.recommended]);
  assert.deepEqual(withTs, alone);
});

test('the plugin: flat-config shape, rule ids of the CLI, docs URLs, a model built once per file', async () => {
  assert.equal(plugin.meta.namespace, 'pgq');
  for (const [id, rule] of Object.entries(plugin.rules)) {
    assert.ok(rules.some((r) => r.id === id), id);
    assert.match(rule.meta.docs!.url!, new RegExp(`docs/rules/${id}\\.md$`));
    assert.ok(rule.meta.defaultOptions);
  }
  assert.ok(plugin.rules['no-release-in-open-transaction']);
  assert.ok(!('require-autocommit-in-reset' in plugin.rules), 'Python-only rules are not ESLint rules');
  const enabled = Object.keys(plugin.configs.recommended[0].rules ?? {});
  assert.deepEqual(enabled.sort(), Object.keys(plugin.rules).map((id) => `pgq/${id}`).sort());

  const model = await import('../../src/eslint/model.ts');
  const sourceCode = { text: "import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query('select 1');", ast: (await import('@typescript-eslint/typescript-estree')).parse("import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query('select 1');", { range: true, comment: true }) };
  const first = model.modelFor(sourceCode, 'a.ts');
  assert.equal(model.modelFor(sourceCode, 'a.ts'), first, 'one model per SourceCode');
  assert.equal(first.sites.length, 1);
});

test('the built CLI reports the same findings as json and as stylish (npm test builds first)', async () => {
  const { all } = await scanFindings();
  const json = runCli(['scan', 'fixtures/typescript', '--format', 'json']);
  assert.equal(json.code, 1, json.stderr);
  const fromJson = (JSON.parse(json.stdout) as { filePath: string; messages: { ruleId: string; line: number; column: number; endLine: number; endColumn: number }[] }[])
    .flatMap((r) => r.messages.map((m) => key(r.filePath, m)))
    .sort();
  assert.deepEqual(fromJson, all);
  const stylish = runCli(['scan', 'fixtures/typescript']);
  assert.equal(stylish.code, 1, stylish.stderr);
  for (const k of all) {
    const [, line, column, ruleId] = /:(\d+):(\d+)-\S+ (\S+)$/.exec(k)!;
    assert.match(stylish.stdout, new RegExp(`${line}:${column}\\s.*pgq/${ruleId}`), k);
  }
});

test('npx eslint with `import pgq from "pgq-audit/eslint"` flags the bad fixtures and not the good ones', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(process.execPath, [join(repoRoot, 'node_modules/eslint/bin/eslint.js'), '-c', 'test/eslint/eslint.config.mjs', '-f', 'json', 'fixtures/typescript'], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
  });
  assert.equal(run.status, 1, run.stderr);
  const results = JSON.parse(run.stdout) as { filePath: string; messages: { ruleId: string | null }[] }[];
  for (const r of results) {
    const name = r.filePath.slice(fixtures.length + 1);
    const own = name.split('/')[0];
    // A fixture project's folder holds its bad and good files beside the modules they use (runner.ts): those are not judged.
    const base = name.split('/').pop()!;
    if (base.startsWith('good')) assert.deepEqual(r.messages, [], name);
    else if (base.startsWith('bad')) assert.ok(r.messages.some((m) => m.ruleId === `pgq/${own}`), name);
  }
  assert.ok(results.length >= 14);
});
