// Every TS/JS fixture through the CLI's scan(): a bad file is flagged exactly
// on its `// expect: <rule-id>` lines, by the rules they name and no other; a
// good file has no finding from any rule.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { expectationsOf } from '../helpers/expectations.ts';

const root = join(import.meta.dirname, '../../fixtures/typescript');
const show = (messages: { line: number; column: number; ruleId: string | null; message: string }[]) =>
  messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`).join('\n');

for (const ruleId of readdirSync(root)) {
  for (const name of readdirSync(join(root, ruleId)).filter((f) => /\.[cm]?[jt]sx?$/.test(f))) {
    const file = join(root, ruleId, name);
    test(`fixtures/typescript/${ruleId}/${name}`, async () => {
      const text = readFileSync(file, 'utf8');
      const expected = expectationsOf(text);
      const { results } = await scan({ paths: [file], concurrency: 'off' });
      assert.equal(results.length, 1);
      const messages = results[0].messages;
      assert.ok(!messages.some((m) => m.fatal), show(messages));
      if (name.startsWith('good')) {
        assert.deepEqual(expected, [], 'good fixtures expect nothing');
        assert.deepEqual(messages, [], show(messages));
        return;
      }
      assert.ok(expected.some((e) => e.ruleId === ruleId), `${name} must expect at least one ${ruleId} finding`);
      // Every finding of every rule is held to the markers: a finding of another rule on a bad fixture is a false positive too.
      const actual = messages.map((m) => ({ line: m.line, ruleId: m.ruleId! }));
      assert.deepEqual(actual.sort((a, b) => a.line - b.line || a.ruleId.localeCompare(b.ruleId)), expected, show(messages));
      // The finding starts on the code of its line, not at column 1 (the span is the SQL or the call, not the line).
      for (const m of messages.filter((m) => m.ruleId === ruleId)) {
        const line = text.split('\n')[m.line - 1];
        assert.ok(m.column > line.search(/\S/), `${m.line}:${m.column} points before the code`);
      }
    });
  }
}
