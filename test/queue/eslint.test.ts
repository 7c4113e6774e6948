// ESLint sees one file at a time: with the plugin's recommended config it
// reports the single-file part of the queue rules (a claim and its unfenced
// finish in one file) and stays quiet where the finding needs another file —
// the claim of a project whose worker and migrations are elsewhere.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { Linter } from 'eslint';
import plugin from '../../src/eslint/index.ts';
import { repoRoot } from '../helpers/cli.ts';

const linter = new Linter({ configType: 'flat' });

function lint(path: string): string[] {
  const file = join(repoRoot, path);
  const messages = linter.verify(readFileSync(file, 'utf8'), plugin.configs.recommended as Linter.Config[], { filename: relative(repoRoot, file) });
  return messages.map((m) => `${m.line}:${m.column} ${m.ruleId}`);
}

test('a claim and its unfenced finish in one file: reported at the finish', () => {
  assert.deepEqual(lint('fixtures/queue/require-fenced-finish/bad.ts'), ['31:122 pgq/require-fenced-finish']);
});

test('a claim without an attempt limit: reported at the expired-lease test', () => {
  assert.deepEqual(lint('fixtures/queue/require-claim-attempt-limit/bad.ts'), ['15:40 pgq/require-claim-attempt-limit']);
});

test('a side effect inside the locking transaction', () => {
  assert.deepEqual(lint('fixtures/queue/no-side-effects-in-locking-transaction/bad.ts'), [
    '23:11 pgq/no-side-effects-in-locking-transaction',
    '24:11 pgq/no-side-effects-in-locking-transaction',
  ]);
});

test('the claim of a project whose worker and migrations are other files: quiet (the scan reports it)', () => {
  assert.deepEqual(lint('fixtures/projects/lease-mixed-bad/src/queue.ts'), []);
});

test('the good designs: quiet', () => {
  for (const design of ['lease-design', 'pg-boss', 'graphile-worker']) assert.deepEqual(lint(`fixtures/queue/good/${design}.ts`), [], design);
  assert.deepEqual(lint('fixtures/queue/no-side-effects-in-locking-transaction/good.ts'), []);
  assert.deepEqual(lint('fixtures/projects/lease-mixed-good/src/queue.ts'), []);
});
