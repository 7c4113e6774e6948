// Every SQL fixture: bad files are flagged exactly on their `-- expect:` lines
// (by any rule), good files have no finding at all.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { actualOf, expectationsOf } from '../helpers/expectations.ts';

const root = join(import.meta.dirname, '../../fixtures/sql');

for (const ruleId of readdirSync(root)) {
  for (const name of readdirSync(join(root, ruleId)).filter((f) => f.endsWith('.sql'))) {
    const file = join(root, ruleId, name);
    test(`fixtures/sql/${ruleId}/${name}`, async () => {
      const expected = expectationsOf(readFileSync(file, 'utf8'));
      if (name.startsWith('bad')) {
        assert.ok(expected.some((e) => e.ruleId === ruleId), `${name} must expect at least one ${ruleId} finding`);
      } else {
        assert.deepEqual(expected, [], 'good fixtures expect nothing');
      }
      const { results } = await scan({ paths: [file] });
      assert.equal(results.length, 1);
      assert.deepEqual(actualOf(results[0]), expected, results[0].messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`).join('\n'));
    });
  }
}
