// SQLAlchemy listeners a class registers (a bound method handed to event.listen
// in __init__, a listener decorated inside __init__) are hooks of the engine
// or sessionmaker, read as the module's own: their writes are judged as a
// hook's (one that can skip its write), not as a plain session write.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';

const folder = join(import.meta.dirname, '../../fixtures/python/no-session-tenant-setting');

test('hooks registered in a class: a write they can skip is reported as the hook’s skip', async () => {
  const { results } = await scan({ paths: [join(folder, 'bad-class-method-hooks.py')] });
  assert.deepEqual(
    results[0].messages.map((m) => [m.line, m.messageId]),
    [
      [26, 'skippedInHook'],
      [32, 'skippedInHook'],
    ],
  );
});
