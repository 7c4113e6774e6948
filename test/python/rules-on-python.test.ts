// Fixtures of rules whose `languages` do not list Python yet, run with
// Python added: the model the Python front end fills is what they read
// (no-attempts-in-rollback-scope reads jobTransactions and site scopes).
// Once a rule lists Python, test/python/fixtures.test.ts runs them through
// scan() instead, and this test checks that it does.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { rules } from '../../rules/index.ts';
import { expectationsOf } from './expectations.ts';

before(async () => {
  await loadSqlParser();
});

const root = join(import.meta.dirname, '../../fixtures/python');

for (const ruleId of ['no-attempts-in-rollback-scope']) {
  const rule = rules.find((r) => r.id === ruleId);
  const dir = join(root, ruleId);
  test(`${ruleId} on Python fixtures`, () => {
    assert.ok(rule, `${ruleId} is not registered in rules/index.ts`);
    if (rule.languages.includes('python')) {
      // Covered by fixtures.test.ts through scan(); nothing to force here.
      return;
    }
    const forced = activeRules({ [ruleId]: 'error' })
      .filter((a) => a.rule.id === ruleId)
      .map((a) => ({ ...a, rule: { ...a.rule, languages: [...a.rule.languages, 'python' as const] } }));
    assert.ok(existsSync(dir));
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.py'))) {
      const text = readFileSync(join(dir, name), 'utf8');
      const model = pythonFrontEnd.parse(text, join(dir, name), {});
      const found = runRules(model, forced).map((f) => `${f.line}:${f.column} ${f.ruleId}`);
      const expected = expectationsOf(text).map((e) => `${e.line}:${e.column} ${e.ruleId}`);
      assert.deepEqual(found.sort(), expected.sort(), name);
      if (name.startsWith('bad')) assert.ok(expected.length > 0);
    }
  });
}
