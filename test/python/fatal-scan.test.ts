// Python files that do not parse — a binary named .py, a syntax error, bytes
// that are not UTF-8 — give one fatal message each, and the scan goes on to the
// other files. Python 2, valid in its own language, is one warning: skipped.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';

test('one fatal message per file that does not parse; the others are analysed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-py-fatal-'));
  // Every file names a setting, so no prefilter can skip it.
  const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00]), Buffer.from(' set_config reset discard '), Buffer.alloc(64, 0)]);
  writeFileSync(join(dir, 'binary.py'), elf);
  writeFileSync(join(dir, 'latin1.py'), Buffer.concat([Buffer.from('conn.execute("select set_config(\'app.tenant\', \'1\', false)")\nnom = '), Buffer.from([0xe9, 0xe8]), Buffer.from('\n')]));
  writeFileSync(join(dir, 'python2.py'), 'import psycopg2\nprint "set_config"\n');
  writeFileSync(join(dir, 'broken.py'), 'def job(conn)\n    conn.execute("select set_config(\'app.tenant\', \'1\', false)")\n');
  writeFileSync(
    join(dir, 'worker.py'),
    [
      'from psycopg_pool import ConnectionPool',
      'pool = ConnectionPool("")',
      'def job(t):',
      '    with pool.connection() as conn:',
      '        conn.execute("select set_config(\'app.tenant\', %s, false)", [t])',
      '',
    ].join('\n'),
  );
  const { results } = await scan({ paths: [dir] });
  const byFile = Object.fromEntries(results.map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => `${m.line}:${m.column} ${m.fatal ? 'fatal' : m.ruleId ?? `${m.severity === 1 ? 'warning' : 'error'} ${m.messageId}`}`)]));
  assert.deepEqual(byFile, {
    'binary.py': ['1:1 fatal'],
    'broken.py': ['1:14 fatal'],
    'latin1.py': ['2:7 fatal'],
    'python2.py': ['2:1 warning not-python3'],
    'worker.py': ['5:30 no-session-tenant-setting'],
  });
  const messages = results.flatMap((r) => r.messages.filter((m) => m.fatal).map((m) => m.message));
  assert.ok(messages.some((m) => /NUL bytes/.test(m)));
  assert.ok(messages.some((m) => /not valid UTF-8/.test(m)));
  assert.ok(!messages.some((m) => /Python 2/.test(m)));
  assert.ok(messages.some((m) => /Python syntax error/.test(m)));
});
