// A scan whose files all come from the cache loads no rule's code and no SQL analyzer (nor its parser): it
// decides which rules run from their metadata (rules/meta.ts), and the rules load only for an analysis
// or a project pass the cache does not hold. The built CLI, watched module by module: its bundle
// (dist/cli/pgq-audit.cjs) evaluates a module imported dynamically, and every module that one imports,
// only on that first import, each in a function named after the module's path, and V8's coverage
// (NODE_V8_COVERAGE) tells which of those functions ran. These runs compile the bundle without the CLI's
// code cache (NODE_DISABLE_COMPILE_CACHE): the cache changes how a function is compiled, not whether it
// runs, and a function V8 deserializes from it may carry no invocation count for the coverage to read
// (CI saw runs after other tests had filled the cache report no module of the bundle at all).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { BAD_SESSION_SQL, project } from './project.ts';

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

/** The modules of the bundle (their paths under dist/) one run of the CLI evaluated. */
function loadedBy(args: string[], cwd: string): string[] {
  const coverage = mkdtempSync(join(tmpdir(), 'pgq-loads-'));
  const run = runCli(args, { cwd, env: { NODE_V8_COVERAGE: coverage, NODE_DISABLE_COMPILE_CACHE: '1' } });
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  const bundle = join(repoRoot, 'dist/cli/pgq-audit.cjs');
  const found = new Set<string>();
  for (const name of readdirSync(coverage)) {
    const { result } = JSON.parse(readFileSync(join(coverage, name), 'utf8')) as Coverage;
    for (const script of result) {
      if (script.url !== bundle && script.url !== `file://${bundle}`) continue;
      for (const fn of script.functions) if (/^dist\/.+\.js$/.test(fn.functionName) && fn.ranges[0].count > 0) found.add(fn.functionName);
    }
  }
  assert.ok(found.size > 0, 'the coverage holds the bundle');
  return [...found];
}

/** The rules and the SQL analyzer (which loads libpg-query) among the modules evaluated. */
function heavy(modules: readonly string[]): string[] {
  const found = new Set<string>();
  for (const module of modules) {
    const m = /^dist\/((rules\/(?!meta\.js)[\w-]+)\.js|(src\/sql)\/[\w-]+\.js)$/.exec(module);
    if (m) found.add(m[2] ?? m[3]);
  }
  return [...found].sort();
}

test('a scan served from the cache loads no rule and no SQL analyzer; a cold one does', () => {
  const dir = project({
    'db/tenant.sql': BAD_SESSION_SQL,
    'src/jobs.ts': "import { Pool } from 'pg';\nconst pool = new Pool();\nexport const run = (t: string) => pool.query(\"select set_config('app.tenant', $1, false)\", [t]);\n",
    'src/util.ts': 'export const add = (a: number, b: number) => a + b;\n',
  });
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const name of ['db/tenant.sql', 'src/jobs.ts', 'src/util.ts']) utimesSync(join(dir, name), hourAgo, hourAgo);
  const args = ['scan', '.', '--format', 'json', '--cache', '--cache-location', join(dir, 'cache.json')];
  const cold = heavy(loadedBy(args, dir));
  assert.ok(cold.includes('src/sql') && cold.some((m) => m.startsWith('rules/')), `a cold scan analyses: ${cold.join(', ')}`);
  assert.deepEqual(heavy(loadedBy(args, dir)), [], 'the second scan takes every file from the cache');
});

/** The built-in modules one run of the CLI loaded (node:crypto is `crypto`). */
function builtinsLoadedBy(args: string[], cwd: string): string[] {
  const record = join(mkdtempSync(join(tmpdir(), 'pgq-builtins-')), 'builtins.txt');
  const hook = join(repoRoot, 'test/helpers/record-builtins.mjs');
  const run = runCli(args, { cwd, env: { NODE_OPTIONS: `--import ${hook}`, PGQ_RECORD_BUILTINS: record } });
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  return readFileSync(record, 'utf8').split('\n').filter(Boolean);
}

test('a scan without --cache loads no node:crypto (nothing hashes); one with --cache does', () => {
  const dir = project({
    'db/tenant.sql': BAD_SESSION_SQL,
    'src/jobs.ts': "import { Pool } from 'pg';\nconst pool = new Pool();\nexport const run = (t: string) => pool.query(\"select set_config('app.tenant', $1, false)\", [t]);\n",
    'app/jobs.py': "import psycopg\n\n\ndef run(conn, t):\n    conn.execute(\"select set_config('app.tenant', %s, false)\", (t,))\n",
  });
  const plain = builtinsLoadedBy(['scan', '.', '--format', 'json'], dir);
  assert.ok(plain.includes('vm'), `the record holds what the scan loaded: ${plain.join(', ')}`);
  assert.ok(!plain.includes('crypto'), 'a plain scan hashes nothing');
  const cached = builtinsLoadedBy(['scan', '.', '--format', 'json', '--cache', '--cache-location', join(dir, 'cache.json')], dir);
  assert.ok(cached.includes('crypto'), 'the cache keys files by their hash');
});

test('a scan that writes its report to a file never makes the stdout or stderr stream (a pipe loads node:net); one to stdout does', () => {
  const dir = project({ 'db/tenant.sql': BAD_SESSION_SQL });
  const toFile = builtinsLoadedBy(['scan', '.', '--format', 'json', '-o', join(dir, 'report.json')], dir);
  assert.ok(toFile.includes('vm'), `the record holds what the scan loaded: ${toFile.join(', ')}`);
  assert.ok(!toFile.includes('net'), `stdout and stderr are pipes here: asking either whether it is a terminal loads node:net (${toFile.join(', ')})`);
  assert.ok(builtinsLoadedBy(['scan', '.', '--format', 'json'], dir).includes('net'), 'a report written to stdout makes its stream');
});

/** The front ends (languages/<language>/index.ts, the module each front end is loaded by) among the modules evaluated. */
function frontEndsIn(modules: readonly string[]): string[] {
  return modules.flatMap((module) => /^dist\/src\/languages\/(sql|python|typescript)\/index\.js$/.exec(module)?.[1] ?? []).sort();
}

test('a scan loads the front ends of the languages it analyses only: migrations alone load no TypeScript or Python front end', () => {
  const sqlOnly = project({ 'db/tenant.sql': BAD_SESSION_SQL });
  assert.deepEqual(frontEndsIn(loadedBy(['scan', '.', '--format', 'json'], sqlOnly)), ['sql']);
  const python = project({ 'app/jobs.py': "import psycopg\n\n\ndef run(conn, t):\n    conn.execute(\"select set_config('app.tenant', %s, false)\", (t,))\n" });
  assert.deepEqual(frontEndsIn(loadedBy(['scan', '.', '--format', 'json'], python)), ['python']);
  const mixed = project({ 'db/tenant.sql': BAD_SESSION_SQL, 'src/jobs.ts': "import { Pool } from 'pg';\nconst pool = new Pool();\nexport const run = (t: string) => pool.query(\"select set_config('app.tenant', $1, false)\", [t]);\n" });
  assert.deepEqual(frontEndsIn(loadedBy(['scan', '.', '--format', 'json'], mixed)), ['sql', 'typescript']);
});
