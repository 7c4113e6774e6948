// rules/meta.ts (what a scan reads of each rule without loading its code) is its rules' own:
// every entry equals the metadata of the rule it names, in the rules' order, and the file is
// what `npm run rule-meta` writes, so neither can drift from the rules.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { rules } from '../../rules/index.ts';
import { ruleMeta } from '../../rules/meta.ts';
import { renderRuleMeta } from '../../src/docs/rule-meta.ts';
import { ruleMetaOf } from '../../src/model/rule.ts';
import { repoRoot } from '../helpers/cli.ts';

test("each metadata entry is its rule's own: id, severity, options, triggers, languages, cross-file", () => {
  assert.deepEqual(
    ruleMeta.map((m) => m.id),
    rules.map((r) => r.id),
  );
  for (const [i, rule] of rules.entries()) assert.deepStrictEqual(ruleMeta[i], ruleMetaOf(rule), `rules/meta.ts: ${rule.id} differs from its rule: npm run rule-meta`);
});

test('a cross-file rule is one that collects facts', () => {
  for (const rule of rules) assert.equal(ruleMeta.find((m) => m.id === rule.id)!.crossFile, typeof rule.collect === 'function', rule.id);
  assert.ok(ruleMeta.some((m) => m.crossFile) && ruleMeta.some((m) => !m.crossFile));
});

test('rules/meta.ts is what npm run rule-meta writes', () => {
  assert.equal(readFileSync(join(repoRoot, 'rules/meta.ts'), 'utf8'), renderRuleMeta(), 'rules/meta.ts is out of date: npm run rule-meta');
});

test('the metadata names no rule code: rules/meta.ts imports nothing but a type', () => {
  const text = readFileSync(join(repoRoot, 'rules/meta.ts'), 'utf8');
  assert.deepEqual(
    [...text.matchAll(/^import .*$/gm)].map((m) => m[0]),
    ["import type { RuleMeta } from '../src/model/rule.ts';"],
  );
});
