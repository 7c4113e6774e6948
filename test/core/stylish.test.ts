// The stylish reporter as a person sees it on a terminal: a code frame under
// each finding, pointing at the flagged text.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatStylish } from '../../src/report/stylish.ts';
import { scan } from '../../src/scan/scan.ts';
import { repoRoot } from '../helpers/cli.ts';

test('code frames point at the finding; none without a terminal', async () => {
  const file = join(repoRoot, 'fixtures/sql/no-discard-all-with-prepared-statements/bad.sql');
  const { results } = await scan({ paths: [file] });
  const withFrames = formatStylish(results, { color: false, codeFrames: true, cwd: repoRoot });
  assert.match(withFrames, /> 4 \| DISCARD ALL; -- expect/);
  assert.match(withFrames, /\n\s+\| \^{11}\n/);
  const plain = formatStylish(results, { color: false, codeFrames: false, cwd: repoRoot });
  assert.doesNotMatch(plain, /\| DISCARD ALL/);
  assert.match(plain, /✖ 2 problems \(2 errors, 0 warnings\)/);
});
