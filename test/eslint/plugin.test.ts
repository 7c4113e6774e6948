// The ESLint plugin's own contract: a front-end failure on a file is one
// message (not silence, not a crash, not one per rule), a rule says it has
// suggestions only if it makes them, and a file's imported pool module is read
// from disk as the scan reads it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Linter } from 'eslint';
import tsParser from '@typescript-eslint/parser';
import { rules } from '../../rules/index.ts';
import plugin from '../../src/eslint/index.ts';
import { builtFor, takeError } from '../../src/eslint/model.ts';
import { INTERNAL_ERROR } from '../../src/eslint/rules.ts';

const allRules = Object.fromEntries(Object.keys(plugin.rules).map((id) => [`pgq/${id}`, 'error' as const]));

test('a front-end error on a file is one message from the first pgq rule, then nothing', () => {
  // A parser whose tree our walk cannot read (ESLint itself does not traverse it: no visitor keys for the body).
  const broken = {
    meta: { name: 'broken-tree' },
    parseForESLint(code: string, options: unknown) {
      const result = tsParser.parseForESLint(code, options as never);
      (result.ast as { body: unknown[] }).body = [{ type: 'VariableDeclaration', declarations: null, range: [0, 0] }];
      return { ...result, visitorKeys: { ...result.visitorKeys, Program: [] } };
    },
  };
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify("await pool.query(\"select set_config('app.tenant', $1, false)\", [t]);\n", [
    { files: ['**/*.ts'], plugins: { pgq: plugin as never }, languageOptions: { parser: broken as never }, rules: allRules },
  ], 'job.ts');
  assert.equal(messages.length, 1, JSON.stringify(messages));
  assert.equal(messages[0].messageId, INTERNAL_ERROR);
  assert.match(messages[0].message, /^pgq-audit could not analyse this file, so no pgq rule checked it: /);
  assert.equal(messages[0].line, 1);
});

test('builtFor keeps the error with the file; takeError gives it once', () => {
  const sourceCode = { text: 'x', ast: { type: 'Program' } };
  const built = builtFor(sourceCode, 'x.ts');
  assert.ok(built.error);
  assert.deepEqual(built.model.sites, []);
  assert.equal(takeError(built), built.error);
  assert.equal(takeError(builtFor(sourceCode, 'x.ts')), undefined);
});

test('hasSuggestions only on the rules that make suggestions', () => {
  for (const rule of rules.filter((r) => r.languages.includes('typescript'))) {
    assert.equal(plugin.rules[rule.id].meta.hasSuggestions === true, rule.hasSuggestions === true, rule.id);
  }
  assert.equal(plugin.rules['no-session-tenant-setting'].meta.hasSuggestions, true);
  assert.equal(plugin.rules['no-release-in-open-transaction'].meta.hasSuggestions, undefined);
});

test('ESLint, given one file, reads the pool from the project module it imports, as the scan does', async () => {
  const { ESLint } = await import('eslint');
  const { join } = await import('node:path');
  const { scan } = await import('../../src/scan/scan.ts');
  const { repoRoot } = await import('../helpers/cli.ts');
  const project = join(repoRoot, 'fixtures/projects/ts-pool-module-bad');
  const eslint = new ESLint({ cwd: repoRoot, overrideConfigFile: true, overrideConfig: [...plugin.configs.recommended] as never, ignore: false });
  const linted = await eslint.lintFiles([project]);
  const fromEslint = linted.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId?.replace(/^pgq\//, '')}`)).sort();
  const { results } = await scan({ paths: [project], cwd: repoRoot, concurrency: 'off' });
  const fromScan = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId}`)).sort();
  assert.equal(fromEslint.length, 3, fromEslint.join('\n'));
  assert.deepEqual(fromEslint, fromScan);
});
