// A clock and a lease length a claim helper gets from its callers in other
// modules of the project (flow/project-callers.ts): read where every call of
// the unit passes a value the reader can follow, unknown otherwise.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { parameters, type Parameter } from '../../src/languages/python/flow/defs.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { clearProjectCallers } from '../../src/languages/python/flow/project-callers.ts';
import { clearProjectPools } from '../../src/languages/python/flow/project-pools.ts';
import { parsePython } from '../../src/languages/python/syntax.ts';
import { scan } from '../../src/scan/scan.ts';

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-callers-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  clearProjectPools();
  clearProjectCallers();
  return root;
}

// A lease claim and an unfenced finish: reported only when the lease length is known.
const queue = [
  'from datetime import timedelta',
  'import psycopg',
  '',
  'def claim(conn: psycopg.Connection, *, now, lease):',
  '    with conn.transaction():',
  '        return conn.execute(',
  '            "UPDATE tasks SET state = \'busy\', tries = tries + 1, until = %s WHERE id = (SELECT id FROM tasks WHERE (state = \'new\' OR (state = \'busy\' AND until < %s)) AND tries < 5 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",',
  '            (now + timedelta(seconds=lease), now),',
  '        ).fetchone()',
  '',
  'def done(conn: psycopg.Connection, task_id):',
  '    with conn.transaction():',
  '        conn.execute("UPDATE tasks SET state = \'done\' WHERE id = %s", (task_id,))',
  '',
  'def keep(conn: psycopg.Connection, task_id, tries, now):',
  '    with conn.transaction():',
  '        conn.execute("UPDATE tasks SET until = %s WHERE id = %s AND tries = %s", (now, task_id, tries))',
  '',
  'def bury(conn: psycopg.Connection, now):',
  '    with conn.transaction():',
  '        conn.execute("UPDATE tasks SET state = \'dead\' WHERE state = \'busy\' AND until < %s AND tries >= 5", (now,))',
].join('\n');

async function fencedFinishes(files: Record<string, string>): Promise<number> {
  const root = project({ 'pyproject.toml': '[project]\nname = "shop"\n', 'shop/__init__.py': '', 'shop/queue.py': queue, ...files });
  const { results } = await scan({ paths: [join(root, 'shop/queue.py')] });
  return results[0].messages.filter((m) => m.ruleId === 'require-fenced-finish').length;
}

describe('values the callers of other modules pass', () => {
  test('the clock and a settings default every caller passes make the lease known', async () => {
    const settings = ['from pydantic_settings import BaseSettings', 'class Conf(BaseSettings):', '    lease_seconds: int = 40', 'def conf():', '    return Conf()'].join('\n');
    const loop = [
      'from datetime import datetime, timezone',
      'import psycopg',
      'from shop.queue import claim',
      'from shop.settings import conf',
      'def turn(conn: psycopg.Connection, lease=None):',
      '    c = conf()',
      '    if lease is None:',
      '        lease = c.lease_seconds',
      '    return claim(conn, now=datetime.now(timezone.utc), lease=lease)',
    ].join('\n');
    assert.equal(await fencedFinishes({ 'shop/settings.py': settings, 'shop/loop.py': loop }), 1);
  });

  test('a constant of the calling module, passed by two callers that agree', async () => {
    const a = ['from datetime import datetime', 'from shop.queue import claim', 'LEASE = 2 * 30', 'def a(conn):', '    now = datetime.now()', '    claim(conn, now=now, lease=LEASE)'].join('\n');
    const b = ['from datetime import datetime', 'from shop.queue import claim as take', 'def b(conn):', '    take(conn, now=datetime.now(), lease=60)'].join('\n');
    assert.equal(await fencedFinishes({ 'shop/a.py': a, 'shop/b.py': b }), 1);
  });

  test('callers that disagree, or pass what the reader cannot follow, leave the lease unknown', async () => {
    const a = ['from datetime import datetime', 'from shop.queue import claim', 'def a(conn):', '    claim(conn, now=datetime.now(), lease=30)'].join('\n');
    const b = ['from datetime import datetime', 'from shop.queue import claim', 'def b(conn):', '    claim(conn, now=datetime.now(), lease=45)'].join('\n');
    assert.equal(await fencedFinishes({ 'shop/a.py': a, 'shop/b.py': b }), 0);
    const argv = ['import sys', 'from datetime import datetime', 'from shop.queue import claim', 'def a(conn):', '    claim(conn, now=datetime.now(), lease=int(sys.argv[1]))'].join('\n');
    assert.equal(await fencedFinishes({ 'shop/a.py': argv }), 0);
    const spread = ['from datetime import datetime', 'from shop.queue import claim', 'def a(conn, **kw):', '    claim(conn, now=datetime.now(), lease=30)', '    claim(conn, **kw)'].join('\n');
    assert.equal(await fencedFinishes({ 'shop/a.py': spread }), 0);
  });

  test('with --cache, a module that starts calling the helper with another value is noticed: every project file is a dependency of the answer', async () => {
    const a = ['from datetime import datetime', 'from shop.queue import claim', 'def a(conn):', '    claim(conn, now=datetime.now(), lease=30)'].join('\n');
    // The connection's type is not written, so no project-wide pool reading names the project's files either.
    const untyped = queue.replaceAll('conn: psycopg.Connection', 'conn');
    const root = project({ 'pyproject.toml': '[project]\nname = "shop"\n', 'shop/__init__.py': '', 'shop/queue.py': untyped, 'shop/a.py': a, 'shop/b.py': 'import sys\n' });
    const options = { paths: [join(root, 'shop/queue.py')], cache: true, cacheLocation: join(root, 'cache.json'), concurrency: 'off' as const };
    const finishes = async (cache: boolean) => (await scan({ ...options, cache })).results[0].messages.filter((m) => m.ruleId === 'require-fenced-finish').length;
    assert.equal(await finishes(true), 1, 'one caller, a 30 s lease');
    writeFileSync(join(root, 'shop/b.py'), ['from datetime import datetime', 'from shop.queue import claim', 'def b(conn):', '    claim(conn, now=datetime.now(), lease=45)'].join('\n'));
    assert.equal(await finishes(false), 0, 'the callers disagree');
    assert.equal(await finishes(true), 0, 'the cached answer is not served');
  });

  test("a test's call is not the application's", async () => {
    const t = ['from datetime import datetime', 'from shop.queue import claim', 'def test_claim(conn):', '    claim(conn, now=datetime.now(), lease=30)'].join('\n');
    assert.equal(await fencedFinishes({ 'tests/test_queue.py': t }), 0);
  });
});

describe('parameters()', () => {
  test('after a bare * the parameters are keyword-only, not *args', () => {
    const parsed = parsePython('def f(a, *, now, lease=3):\n    pass\ndef g(a, *rest, b):\n    pass\n');
    assert.ok(parsed.ok);
    const defs: Parameter[][] = [];
    parsed.tree.iterate({
      enter(ref) {
        if (ref.name === 'FunctionDefinition') defs.push(parameters(ref.node, parsed.text));
      },
    });
    assert.deepEqual(
      defs[0].map((p) => [p.name, p.kind, p.keywordOnly ?? false]),
      [
        ['a', 'normal', false],
        ['now', 'normal', true],
        ['lease', 'normal', true],
      ],
    );
    assert.deepEqual(
      defs[1].map((p) => [p.name, p.kind, p.keywordOnly ?? false]),
      [
        ['a', 'normal', false],
        ['rest', 'star', false],
        ['b', 'normal', true],
      ],
    );
  });
});
