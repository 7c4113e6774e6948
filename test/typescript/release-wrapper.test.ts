// A release in a pool wrapper that hands its client to a callback, joined to
// what the callback does on the client (no-release-in-open-transaction): the
// wrapper, the BEGIN helper and the job in three modules. Flagged at the
// wrapper's release when the helper's catch does not roll back; quiet when it
// does; quiet for the wrapper alone (its callbacks are not seen).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { expectationsOf } from '../helpers/expectations.ts';

const projects = join(import.meta.dirname, '../../fixtures/projects');

for (const name of ['ts-release-wrapper-bad', 'ts-release-wrapper-good']) {
  test(`fixtures/projects/${name} is flagged on its expect: lines only`, async () => {
    const { results } = await scan({ paths: [join(projects, name)], concurrency: 'off' });
    assert.equal(results.length, 3);
    for (const result of results) {
      const expected = expectationsOf(readFileSync(result.filePath, 'utf8'));
      const actual = result.messages.map((m) => ({ line: m.line, ruleId: m.ruleId! }));
      assert.deepEqual(actual, expected, `${result.filePath}: ${result.messages.map((m) => `${m.line} ${m.message}`).join('\n')}`);
    }
    if (name.endsWith('-bad')) {
      const found = results.flatMap((r) => r.messages).find((m) => m.ruleId === 'pgq/no-release-in-open-transaction' || m.ruleId === 'no-release-in-open-transaction');
      assert.match(found?.message ?? '', /src\/db\/transaction\.ts:6/, 'the message names the helper\'s BEGIN in its module');
    }
  });
}

test('the wrapper alone is quiet: the callbacks its callers hand it are not in the scan', async () => {
  const { results } = await scan({ paths: [join(projects, 'ts-release-wrapper-bad/src/db/client.ts')], concurrency: 'off' });
  assert.deepEqual(results[0].messages, []);
});
