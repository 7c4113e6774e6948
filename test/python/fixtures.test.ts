// Every Python fixture through scan(): bad files are flagged exactly on their
// `# expect: rule-id@column` lines (rule, line and column), good files have no
// finding at all, fatal files get one fatal message, skipped files one warning.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { rules } from '../../rules/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { expectationsOf, type Expected } from './expectations.ts';

const root = join(import.meta.dirname, '../../fixtures/python');

function pythonFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return pythonFiles(path);
      return name.endsWith('.py') ? [path] : [];
    });
}

const key = (e: Expected) => `${e.line}:${e.column ?? '*'} ${e.ruleId}`;

// fixtures/python/mixed is a folder of three languages: test/python/mixed-scan.test.ts.
test('every folder of fixtures/python is a rule that reads Python (or fatal/, skipped/, mixed/)', () => {
  for (const dir of readdirSync(root).filter((d) => statSync(join(root, d)).isDirectory())) {
    if (dir === 'fatal' || dir === 'skipped' || dir === 'mixed') continue;
    const rule = rules.find((r) => r.id === dir);
    assert.ok(rule, `fixtures/python/${dir}: no rule ${dir}`);
    assert.ok(rule.languages.includes('python'), `fixtures/python/${dir}: ${dir} does not read Python, so its fixtures would test nothing`);
  }
});

for (const file of pythonFiles(root).filter((f) => !relative(root, f).startsWith('mixed/'))) {
  const name = relative(root, file);
  const base = file.slice(file.lastIndexOf('/') + 1);
  const ruleDir = name.split('/')[0];
  test(`fixtures/python/${name}`, async () => {
    const expected = expectationsOf(readFileSync(file, 'utf8'));
    if (base.startsWith('bad')) assert.ok(expected.some((e) => e.ruleId === ruleDir), `${name} must expect at least one ${ruleDir} finding`);
    else if (ruleDir === 'fatal') assert.deepEqual(expected.map((e) => e.ruleId), ['fatal'], 'a fatal fixture expects exactly one fatal message');
    else assert.deepEqual(expected, [], 'good fixtures expect nothing');
    const { results } = await scan({ paths: [file] });
    assert.equal(results.length, 1);
    if (ruleDir === 'skipped') {
      // A file in another language (Python 2): one warning that says so, no fatal message, nothing analysed.
      assert.deepEqual(results[0].messages.map((m) => [m.ruleId, m.severity, m.fatal ?? false, m.messageId]), [[null, 1, false, 'not-python3']]);
      return;
    }
    const actual = results[0].messages.map((m) => {
      const wanted = expected.find((e) => e.line === m.line && e.ruleId === (m.ruleId ?? 'fatal'));
      return { line: m.line, ...(wanted?.column !== undefined ? { column: m.column } : {}), ruleId: m.ruleId ?? 'fatal' };
    });
    assert.deepEqual(actual.map(key).sort(), expected.map(key).sort(), results[0].messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`).join('\n'));
    if (ruleDir === 'fatal') assert.equal(results[0].messages[0].fatal, true);
  });
}
