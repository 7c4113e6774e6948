// The prefilter's second chance (src/scan/import-chance.ts): a file with no
// trigger whose SQL is a constant it imports from a project module is analysed
// as it is with the prefilter off, the same in every run, and the cache drops
// its verdict when the imported module changes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { FileResult } from '../../src/engine/findings.ts';
import { scan, type ScanOptions } from '../../src/scan/scan.ts';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-chance-'));
  for (const [name, text] of Object.entries(files)) write(dir, name, text);
  return dir;
}

/** Writes a file dated a minute ago: old enough for the cache to trust its stat. */
function write(dir: string, name: string, text: string, secondsAgo = 60): void {
  mkdirSync(join(dir, name, '..'), { recursive: true });
  writeFileSync(join(dir, name), text);
  const then = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(join(dir, name), then, then);
}

const findings = (results: readonly FileResult[], dir: string) => results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line}:${m.column} ${m.ruleId}`)).sort();

const PY_QUERIES = 'SET_TENANT = "SELECT set_config(\'app.tenant\', %s, false)"\n';
const PY_WORKER = [
  'import psycopg_pool',
  'from app.queries import SET_TENANT',
  '',
  'pool = psycopg_pool.ConnectionPool("postgresql://app@db/app")',
  '',
  'def handle(tenant):',
  '    with pool.connection() as conn:',
  '        conn.execute(SET_TENANT, (tenant,))',
  '',
].join('\n');
const TS_QUERIES = 'export const SET_TENANT = "SELECT set_config(\'app.tenant\', $1, false)";\n';
const TS_WORKER = [
  "import pg from 'pg';",
  "import { SET_TENANT } from './queries.js';",
  'const pool = new pg.Pool();',
  'export const handle = (tenant: string) => pool.query(SET_TENANT, [tenant]);',
  '',
].join('\n');

const project = () =>
  tree({
    'py/pyproject.toml': '[project]\nname = "w"\n',
    'py/app/__init__.py': '',
    'py/app/queries.py': PY_QUERIES,
    'py/app/worker.py': PY_WORKER,
    'ts/package.json': '{ "name": "w", "private": true }\n',
    'ts/src/queries.ts': TS_QUERIES,
    'ts/src/worker.ts': TS_WORKER,
  });

const EXPECTED = ['py/app/worker.py:8:22 no-session-tenant-setting', 'ts/src/worker.ts:4:54 no-session-tenant-setting'];

test('a file whose only SQL is a constant imported from a project module is analysed, as with the prefilter off', async () => {
  const dir = project();
  const options: ScanOptions = { paths: [dir], cwd: dir, concurrency: 'off' };
  const off = await scan({ ...options, prefilter: false });
  const on = await scan(options);
  assert.deepEqual(findings(off.results, dir), EXPECTED);
  assert.deepEqual(findings(on.results, dir), EXPECTED);
  // Only the workers got the second chance: __init__.py, package.json and the rest stay unparsed.
  assert.equal(on.stats.parsed, 4);
});

test('a module re-exporting the constant (from ... import, export { } from, export * from) is followed', async () => {
  const dir = tree({
    'py/pyproject.toml': '[project]\nname = "w"\n',
    'py/app/__init__.py': '',
    'py/app/queries.py': PY_QUERIES,
    'py/app/sql.py': 'from app.queries import SET_TENANT  # noqa: F401\n',
    'py/app/worker.py': PY_WORKER.replace('from app.queries import', 'from app.sql import'),
    'ts/package.json': '{ "name": "w", "private": true }\n',
    'ts/src/queries.ts': TS_QUERIES,
    'ts/src/sql.ts': "export { SET_TENANT } from './queries.js';\n",
    'ts/src/index.ts': "export * from './sql.js';\n",
    'ts/src/worker.ts': TS_WORKER.replace('./queries.js', './index.js'),
  });
  const on = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.deepEqual(findings(on.results, dir), EXPECTED);
  assert.deepEqual(findings((await scan({ paths: [dir], cwd: dir, concurrency: 'off', prefilter: false })).results, dir), EXPECTED);
});

test('no second chance for a name the file only calls or reads a member of, or for a constant of a module with no trigger', async () => {
  const dir = tree({
    'package.json': '{ "name": "w", "private": true }\n',
    'src/repo.ts': "import pg from 'pg';\nconst pool = new pg.Pool();\nexport async function findJob(id: number) {\n  return pool.query('select * from jobs where id = $1 for update', [id]);\n}\n",
    'src/plain.ts': "export const GREETING = 'hello';\n",
    'src/service.ts': "import { findJob } from './repo.js';\nimport { GREETING } from './plain.js';\nexport const run = async (id: number) => [GREETING, await findJob(id)];\n",
  });
  const on = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.equal(on.stats.parsed, 1, 'repo.ts only');
});

test('the same report in every run, whatever the order files are read in or the threads', async () => {
  const dir = project();
  // More files than a scan analyses in-process, so workers take part.
  for (let i = 0; i < 40; i++) write(dir, `ts/src/w${i}.ts`, TS_WORKER);
  const reports = new Set<string>();
  for (const concurrency of ['off', 2, 1] as const) {
    const result = await scan({ paths: [dir], cwd: dir, concurrency, inProcessFiles: 4 });
    reports.add(JSON.stringify(result.results));
    assert.equal(findings(result.results, dir).length, 42);
  }
  assert.equal(reports.size, 1);
});

test('with --cache, editing the imported module between runs makes the finding appear and disappear', async () => {
  const dir = project();
  write(dir, 'py/app/queries.py', 'SET_TENANT = "SELECT 1"\n');
  write(dir, 'ts/src/queries.ts', 'export const SET_TENANT = "SELECT 1";\n');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  const fresh = async () => findings((await scan({ ...options, cache: false })).results, dir);
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  const quiet = await scan(options);
  assert.deepEqual(findings(quiet.results, dir), []);
  assert.equal(quiet.stats.parsed, 0, 'the workers stay skipped by their stat while the modules they import are unchanged');

  write(dir, 'py/app/queries.py', PY_QUERIES, 30);
  write(dir, 'ts/src/queries.ts', TS_QUERIES, 30);
  assert.deepEqual(findings((await scan(options)).results, dir), EXPECTED);
  const again = await scan(options);
  assert.deepEqual(findings(again.results, dir), EXPECTED);
  assert.equal(again.stats.cached, 4, 'then served from the cache');
  assert.deepEqual(await fresh(), EXPECTED);

  write(dir, 'py/app/queries.py', 'SET_TENANT = "SELECT 1"\n', 20);
  write(dir, 'ts/src/queries.ts', 'export const SET_TENANT = "SELECT 1";\n', 20);
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  assert.deepEqual(await fresh(), []);
});

test('the imported module need not be among the files scanned, nor read this run: it is read for its verdict', async () => {
  const dir = project();
  const worker = (await scan({ paths: [join(dir, 'py/app/worker.py'), join(dir, 'ts/src/worker.ts')], cwd: dir, concurrency: 'off' })).results;
  assert.deepEqual(findings(worker, dir), EXPECTED);
  // Cached: the modules are served by their stat; a changed worker is decided on them all the same.
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  await scan(options);
  write(dir, 'py/app/worker.py', `# changed\n${PY_WORKER}`, 30);
  write(dir, 'ts/src/worker.ts', `// changed\n${TS_WORKER}`, 30);
  const changed = await scan(options);
  assert.deepEqual(findings(changed.results, dir), ['py/app/worker.py:9:22 no-session-tenant-setting', 'ts/src/worker.ts:5:54 no-session-tenant-setting']);
  assert.equal(changed.stats.cached, 2, 'the modules, from the cache');
});

// The constant read through the module or object it is imported with (#25): the front ends read it there, and
// the file whose only SQL arrives this way gets its second chance.
const pyWorker = (line: string, use: string) => PY_WORKER.replace('from app.queries import SET_TENANT', line).replace('conn.execute(SET_TENANT', `conn.execute(${use}`);
const tsWorker = (line: string, use: string) => TS_WORKER.replace("import { SET_TENANT } from './queries.js';", line).replace('pool.query(SET_TENANT', `pool.query(${use}`);

test('a constant read through its module, a default export, an exported object, require() or a class of constants is analysed', async () => {
  const dir = tree({
    'py/pyproject.toml': '[project]\nname = "w"\n',
    'py/app/__init__.py': '',
    'py/app/queries.py': PY_QUERIES,
    'py/app/sql.py': 'class Q:\n    SET_TENANT = "SELECT set_config(\'app.tenant\', %s, false)"\n',
    'py/app/w_package.py': pyWorker('from app import queries', 'queries.SET_TENANT'),
    'py/app/w_alias.py': pyWorker('import app.queries as q', 'q.SET_TENANT'),
    'py/app/w_path.py': pyWorker('import app.queries', 'app.queries.SET_TENANT'),
    'py/app/w_class.py': pyWorker('from app.sql import Q', 'Q.SET_TENANT'),
    'ts/package.json': '{ "name": "w", "private": true }\n',
    'ts/src/queries.ts': `${TS_QUERIES}export const Q = { setTenant: SET_TENANT } as const;\nexport default { setTenant: SET_TENANT };\n`,
    'ts/src/legacy.js': 'module.exports = { SET_TENANT: "SELECT set_config(\'app.tenant\', $1, false)" };\n',
    'ts/src/w_ns.ts': tsWorker("import * as q from './queries.js';", 'q.SET_TENANT'),
    'ts/src/w_obj.ts': tsWorker("import { Q } from './queries.js';", 'Q.setTenant'),
    'ts/src/w_default.ts': tsWorker("import queries from './queries.js';", 'queries.setTenant'),
    'ts/src/w_require.ts': tsWorker("const q = require('./legacy.js');", 'q.SET_TENANT'),
  });
  const expected = [
    'py/app/w_alias.py:8:22 no-session-tenant-setting',
    'py/app/w_class.py:8:22 no-session-tenant-setting',
    'py/app/w_package.py:8:22 no-session-tenant-setting',
    'py/app/w_path.py:8:22 no-session-tenant-setting',
    'ts/src/w_default.ts:4:54 no-session-tenant-setting',
    'ts/src/w_ns.ts:4:54 no-session-tenant-setting',
    'ts/src/w_obj.ts:4:54 no-session-tenant-setting',
    'ts/src/w_require.ts:4:54 no-session-tenant-setting',
  ];
  const options: ScanOptions = { paths: [dir], cwd: dir, concurrency: 'off' };
  assert.deepEqual(findings((await scan({ ...options, prefilter: false })).results, dir), expected);
  const on = await scan(options);
  assert.deepEqual(findings(on.results, dir), expected);
  assert.equal(on.stats.parsed, 12, 'the eight workers and the four modules with SQL (not app/__init__.py)');
});

test('CommonJS: a worker with no import statement requiring a module that exports a const object by its name (frozen or not), or constants by shorthand, is analysed', async () => {
  const CHOOSE = "\"SELECT set_config('app.tenant', $1, false)\"";
  const worker = (line: string, use: string) => `const { Pool } = require('pg');\n${line}\nconst pool = new Pool();\nexports.handle = (tenant) => pool.query(${use}, [tenant]);\n`;
  const dir = tree({
    'package.json': '{ "name": "w", "private": true }\n',
    'named.js': `const statements = {\n  chooseTenant: ${CHOOSE},\n};\nmodule.exports = statements;\n`,
    'frozen.js': `const statements = { 'chooseTenant': ${CHOOSE} };\nmodule.exports = Object.freeze(statements);\n`,
    'short.js': `const chooseTenant = ${CHOOSE};\nmodule.exports = { chooseTenant };\n`,
    'plain.js': "const statements = { chooseTenant: 'hello' };\nmodule.exports = statements;\n",
    'w_named.js': worker("const q = require('./named');", 'q.chooseTenant'),
    'w_frozen.js': worker("const q = require('./frozen');", 'q.chooseTenant'),
    'w_short.js': worker("const q = require('./short');", 'q.chooseTenant'),
    'w_destructured.js': worker("const { chooseTenant: choose } = require('./named');", 'choose'),
    'w_plain.js': worker("const q = require('./plain');", 'q.chooseTenant'),
  });
  const expected = ['w_destructured.js:4:41 no-session-tenant-setting', 'w_frozen.js:4:41 no-session-tenant-setting', 'w_named.js:4:41 no-session-tenant-setting', 'w_short.js:4:41 no-session-tenant-setting'];
  const options: ScanOptions = { paths: [dir], cwd: dir, concurrency: 'off' };
  assert.deepEqual(findings((await scan({ ...options, prefilter: false })).results, dir), expected);
  const on = await scan(options);
  assert.deepEqual(findings(on.results, dir), expected);
  assert.equal(on.stats.parsed, 7, 'the four workers and the three modules with SQL (not plain.js, nor the worker whose module has none)');
});

test('a worker whose only SQL runs in a function of a project module it calls with its connection is analysed', async () => {
  const dir = tree({
    'pyproject.toml': '[project]\nname = "w"\n',
    'app/__init__.py': '',
    'app/chores.py': [
      'import asyncpg',
      '',
      'async def take(db: asyncpg.Connection, kinds):',
      '    return await db.fetchrow("select id from chores where kind = any($1) for update skip locked limit 1", kinds)',
      '',
      'async def finish(db: asyncpg.Connection, chore_id):',
      '    await db.execute("delete from chores where id = $1", chore_id)',
      '',
    ].join('\n'),
    'app/worker.py': [
      'import asyncpg',
      'from app import chores',
      'from app.chores import take',
      '',
      'async def once(pool: asyncpg.Pool, handle):',
      '    async with pool.acquire() as conn:',
      '        async with conn.transaction():',
      '            chore = await take(conn, list(handle.kinds))',
      '            await handle(chore)',
      '            await chores.finish(conn, chore["id"])',
      '',
    ].join('\n'),
    'app/other.py': 'from app.chores import take\nprint(take(1, [2]))\n',
  });
  const on = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.deepEqual(findings(on.results, dir), ['app/worker.py:8:27 no-attempts-in-rollback-scope']);
  assert.equal(on.stats.parsed, 2, 'app/chores.py and app/worker.py; not app/other.py, which hands take() no name');
});

test('a Django worker whose only SQL runs in a function or a classmethod of a project module it calls with no argument is analysed', async () => {
  const dir = tree({
    'pyproject.toml': '[project]\nname = "w"\n',
    'app/__init__.py': '',
    'app/store.py': [
      'from django.db import connection, models',
      '',
      'class Parcel(models.Model):',
      '    @classmethod',
      '    def pick(cls):',
      '        with connection.cursor() as cur:',
      '            cur.execute("delete from parcels where id = (select id from parcels order by id for update skip locked limit 1) returning id")',
      '            return cur.fetchone()',
      '',
      'def pick_next():',
      '    with connection.cursor() as cur:',
      '        cur.execute("delete from parcels where id = (select id from parcels order by id for update skip locked limit 1) returning id")',
      '        return cur.fetchone()',
      '',
    ].join('\n'),
    'app/by_function.py': [
      'from django.db import transaction',
      'from app.store import pick_next',
      '',
      'def once(handle):',
      '    with transaction.atomic():',
      '        parcel = pick_next()',
      '        handle(parcel)',
      '',
    ].join('\n'),
    'app/by_class.py': [
      'from django.db import transaction',
      'from app.store import Parcel',
      '',
      'def once(handle):',
      '    with transaction.atomic():',
      '        parcel = Parcel.pick()',
      '        handle(parcel)',
      '',
    ].join('\n'),
    'app/other.py': 'from app.store import Parcel, pick_next\nprint(pick_next(1), Parcel.objects)\n',
  });
  const on = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.deepEqual(findings(on.results, dir), ['app/by_class.py:6:18 no-attempts-in-rollback-scope', 'app/by_function.py:6:18 no-attempts-in-rollback-scope']);
  assert.equal(on.stats.parsed, 3, 'app/store.py and the two workers; not app/other.py, which hands pick_next() a literal and calls no function of Parcel');
});

test('no second chance for a method called on an imported module, a module of no project, or a module whose constant has no trigger', async () => {
  const dir = tree({
    'pyproject.toml': '[project]\nname = "w"\n',
    'app/__init__.py': '',
    'app/queries.py': PY_QUERIES + 'def build(x):\n    return x\n',
    'app/plain.py': 'GREETING = "hello"\n',
    'app/a.py': 'import os\nfrom app import queries\nprint(os.environ, queries.build(1))\n',
    'app/b.py': 'import app.plain as p\nprint(p.GREETING)\n',
  });
  const on = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.equal(on.stats.parsed, 1, 'app/queries.py only');
});

test('with --cache, a worker reading the constant through a class or a namespace follows edits of the module that holds it', async () => {
  const pyClass = (flag: string) => `class Q:\n    SET_TENANT = "SELECT set_config('app.tenant', %s, ${flag})"\n`;
  const tsQueries = (flag: string) => `export const SET_TENANT = "SELECT set_config('app.tenant', $1, ${flag})";\n`;
  const dir = tree({
    'py/pyproject.toml': '[project]\nname = "w"\n',
    'py/app/__init__.py': '',
    'py/app/sql.py': pyClass('true'),
    'py/app/worker.py': pyWorker('from app.sql import Q', 'Q.SET_TENANT'),
    'ts/package.json': '{ "name": "w", "private": true }\n',
    'ts/src/queries.ts': 'export const SET_TENANT = "SELECT 1";\n',
    'ts/src/worker.ts': tsWorker("import * as q from './queries.js';", 'q.SET_TENANT'),
  });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  write(dir, 'py/app/sql.py', pyClass('false'), 30);
  write(dir, 'ts/src/queries.ts', tsQueries('false'), 30);
  assert.deepEqual(findings((await scan(options)).results, dir), EXPECTED);
  assert.deepEqual(findings((await scan(options)).results, dir), EXPECTED);
  write(dir, 'py/app/sql.py', pyClass('true'), 20);
  write(dir, 'ts/src/queries.ts', 'export const SET_TENANT = "SELECT 1";\n', 20);
  assert.deepEqual(findings((await scan(options)).results, dir), []);
  assert.deepEqual(findings((await scan({ ...options, cache: false })).results, dir), []);
});

test('Python imports are read at the start of a line whatever ends it, a parenthesised list across lines once, and not inside one', async () => {
  const { pythonImports } = await import('../../src/scan/import-chance.ts');
  const text = [
    'import os\r  from app.queries import (SET_TENANT,',
    '    CLAIM as claim)',
    'x = 1; from app.jobs import take',
    '  fromage = 1',
    'from . import (helpers',
    'import app.db as db',
    ')',
    '\tfrom ..sql import Q  # a comment',
  ].join('\n');
  const { names, statements } = pythonImports(text);
  assert.deepEqual(
    names.map((n) => `${'.'.repeat(n.level)}${n.module}:${n.name}:${n.local}`),
    ['app.queries:SET_TENANT:SET_TENANT', 'app.queries:CLAIM:claim', '.:helpers:helpers', '..sql:Q:Q', 'os::os', 'app.db::db'],
  );
  // Each statement from its line's start: the `import` inside the open list is matched on its own too, as before.
  assert.deepEqual(
    statements.map(([start]) => text.slice(start, start + 6)),
    ['  from', 'from .', '\tfrom ', 'import', 'import'],
  );
});
