// Times the host code reads from the clock and binds to a placeholder: the
// model's `clock` HostParam (seconds from now), as the TS front end gives it.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { HostParam } from '../../src/model/index.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

/** The params of the file's site whose text holds `needle`. */
function paramsAt(lines: string[], needle: string): HostParam[] | undefined {
  const model = pythonFrontEnd.parse(lines.join('\n') + '\n', '/virtual/worker.py', {});
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(needle));
  assert.ok(site, `no site with ${needle}`);
  return site.params;
}

const header = ['import time', 'from datetime import datetime, timedelta, timezone', 'import psycopg', 'LEASE = 120', 'conn = psycopg.connect("dbname=app")'];

describe('clock values bound to placeholders', () => {
  test('now() plus or minus a timedelta of literals or constants, through a name', () => {
    const params = paramsAt(
      [...header, 'def claim():', '    now = datetime.now(timezone.utc)', '    cutoff = now - timedelta(minutes=5)', '    conn.execute("UPDATE jobs SET locked_until = %s WHERE locked_at < %s", (now + timedelta(seconds=LEASE), cutoff))'],
      'locked_until',
    );
    assert.deepEqual(params, [
      { kind: 'clock', seconds: 120 },
      { kind: 'clock', seconds: -300 },
    ]);
  });

  test('a parameter is the clock the call this walk stands for passes', () => {
    const lines = [...header, 'def claim(c, now):', '    c.execute("UPDATE jobs SET locked_until = %s WHERE id = 1", (now + timedelta(seconds=30),))', 'def turn():', '    claim(conn, datetime.now(timezone.utc))'];
    assert.deepEqual(paramsAt(lines, 'locked_until'), [{ kind: 'clock', seconds: 30 }]);
  });

  test('a parameter its caller fills with something else, and epoch seconds, stay unknown', () => {
    const lines = [...header, 'def claim(c, until):', '    c.execute("UPDATE jobs SET locked_until = %s, touched = %s WHERE id = 1", (until, time.time() + 30))', 'def turn(deadline):', '    claim(conn, deadline)'];
    const params = paramsAt(lines, 'locked_until');
    assert.notEqual(params?.[0]?.kind, 'clock');
    assert.equal(params?.[1]?.kind, 'unknown');
  });
});
