// The python/ package itself: `pip install ./python` works offline (pip and
// flit_core, the build backend, are Debian's, fetched like the drivers), the
// installed copy imports, `import pgq_audit.guard` needs nothing but the
// standard library (a driver is imported only for the pool it is given), and
// bad options fail at guard_pool() with the TypeScript guard's messages.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PACKAGE_DIR, pythonEnv, runPython } from './support.ts';

test('pip install ./python installs pgq-audit offline, and the installed copy guards a pool', { timeout: 180_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pgq-audit-pip-'));
  try {
    // A copy, so a build never leaves files in the repository.
    await cp(PACKAGE_DIR, join(dir, 'python'), { recursive: true });
    const target = join(dir, 'site');
    const install = await runPython(
      ['-m', 'pip', 'install', '--no-build-isolation', '--no-index', '--no-deps', '--disable-pip-version-check', '--root-user-action=ignore', '--target', target, './python'],
      { cwd: dir, env: pythonEnv([]), timeoutMs: 150_000 },
    );
    assert.equal(install.code, 0, install.stderr);
    assert.match(install.stdout, /Successfully installed pgq-audit-0\.1\.0/);
    const use = await runPython(
      [
        '-c',
        [
          'import json, pgq_audit.guard as g',
          'from psycopg_pool import ConnectionPool',
          'pool = g.guard_pool(ConnectionPool("", open=False), settings=["app.tenant"])',
          'print(json.dumps({"file": g.__file__, "stats": vars(g.guard_stats(pool))}))',
        ].join('\n'),
      ],
      { env: pythonEnv([target]) },
    );
    assert.equal(use.code, 0, use.stderr);
    const out = JSON.parse(use.stdout) as { file: string; stats: Record<string, number> };
    assert.ok(out.file.startsWith(target), `imported from the installed copy: ${out.file}`);
    assert.deepEqual(out.stats, { checkouts: 0, checks: 0, violations: 0, check_errors: 0, reset_violations: 0 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const OPTIONS_SCRIPT = `
import json, sys
from pgq_audit.guard import guard_pool
cases = {
    "empty settings": dict(settings=[]),
    "string settings": dict(settings="app.tenant"),
    "bad name": dict(settings=["app.tenant; drop table x"]),
    "throw": dict(settings=["app.tenant"], on_violation="throw"),
    "discard without on_report": dict(settings=["app.tenant"], on_violation="discard"),
    "sample_rate": dict(settings=["app.tenant"], sample_rate=2),
    "include_values": dict(settings=["app.tenant"], include_values="yes"),
    "not a pool": dict(settings=["app.tenant"]),
}
out = {}
for name, options in cases.items():
    try:
        guard_pool(object(), **options)
        out[name] = None
    except TypeError as error:
        out[name] = str(error)
drivers = sorted(m for m in sys.modules if m.split(".")[0] in {"psycopg", "psycopg_pool", "psycopg2", "sqlalchemy", "asyncpg"})
print(json.dumps({"errors": out, "drivers": drivers}))
`;

test('import pgq_audit.guard needs only the standard library, and bad options fail with one clear TypeError', async () => {
  // -S: no site-packages at all; PYTHONPATH=python only, as in a worker's tests.
  const run = await runPython(['-S', '-c', OPTIONS_SCRIPT], { env: { ...process.env, PYTHONPATH: PACKAGE_DIR } });
  assert.equal(run.code, 0, run.stderr);
  const { errors, drivers } = JSON.parse(run.stdout) as { errors: Record<string, string | null>; drivers: string[] };
  assert.deepEqual(drivers, [], 'no driver imported');
  assert.deepEqual(errors, {
    'empty settings': `pgq-audit guard: option "settings" must be a non-empty list of setting names such as ['app.tenant', 'search_path'] (got [])`,
    'string settings': `pgq-audit guard: option "settings" must be a non-empty list of setting names such as ['app.tenant', 'search_path'] (got "app.tenant")`,
    'bad name': `pgq-audit guard: option "settings" must be a list of PostgreSQL setting names (identifiers joined by dots, e.g. 'app.tenant', 'search_path', 'role') (got "app.tenant; drop table x")`,
    throw: `pgq-audit guard: option "on_violation" must be 'raise', 'discard' or a function (report) -> 'raise' | 'discard' | 'keep' (got "throw")`,
    'discard without on_report': `pgq-audit guard: option "on_report" is required with on_violation="discard" (a discarded connection must be reported somewhere; valid values: a function (report, action) -> None)`,
    sample_rate: 'pgq-audit guard: option "sample_rate" must be a number from 0 to 1 (got 2)',
    include_values: 'pgq-audit guard: option "include_values" must be True or False (got "yes")',
    'not a pool': 'pgq-audit guard: guard_pool() needs a psycopg_pool ConnectionPool or AsyncConnectionPool, a SQLAlchemy Engine or AsyncEngine, or an asyncpg Pool (got builtins.object)',
  });
});

test('enabled=False returns the pool untouched; a second guard_pool() on a pool is refused', async () => {
  const run = await runPython([
    '-c',
    [
      'import json',
      'from psycopg_pool import ConnectionPool',
      'from pgq_audit.guard import guard_pool, guard_stats',
      'off = ConnectionPool("", open=False)',
      'same = guard_pool(off, settings=["app.tenant"], enabled=False)',
      'on = guard_pool(ConnectionPool("", open=False), settings=["app.tenant"])',
      'try:',
      '    guard_pool(on, settings=["app.tenant"]); twice = None',
      'except RuntimeError as error:',
      '    twice = str(error)',
      'print(json.dumps({"same": same is off, "untouched": "getconn" not in vars(off), "stats": guard_stats(off), "twice": twice}))',
    ].join('\n'),
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), {
    same: true,
    untouched: true,
    stats: null,
    twice: 'pgq-audit guard: this pool is already guarded; call guard_pool() once per pool',
  });
});
