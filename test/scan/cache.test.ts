// --cache: results equal to an uncached scan, unchanged files not analysed
// again, a changed config or pgq-audit starts over, and cross-file findings
// stay right when only some files changed (their facts are cached per file
// and the project pass runs every time).
import assert from 'node:assert/strict';
import { isAscii } from 'node:buffer';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { rules } from '../../rules/index.ts';
import type { FileResult } from '../../src/engine/findings.ts';
import type { RuleSettings } from '../../src/engine/rule-config.ts';
import { defineRule, statementsOf } from '../../src/model/index.ts';
import { formatStylish } from '../../src/report/stylish.ts';
import { scan, type ScanOptions } from '../../src/scan/scan.ts';
import { injectRules, projectPassCounter } from '../helpers/inject-rules.ts';

const session = "select set_config('app.tenant', $1, false);\n";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-cache-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const shape = (results: readonly FileResult[]) => results.map((r) => [r.filePath, r.messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`)]);

test('a cached scan reports what an uncached one does, without analysing unchanged files', async () => {
  const dir = tree({ 'a.sql': session, 'b.sql': 'BEGIN;\nDISCARD ALL;\nCOMMIT;\n', 'c.sql': 'select 1;\n' });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off' };
  const fresh = await scan({ ...options, cache: false });
  const first = await scan(options);
  assert.equal(first.stats.cached, 0);
  assert.ok(existsSync(join(dir, 'node_modules/.cache/pgq-audit/cache.json')), 'the default location');
  const second = await scan(options);
  assert.equal(second.stats.parsed, 3);
  assert.equal(second.stats.cached, 3);
  assert.deepEqual(shape(second.results), shape(fresh.results));
  assert.deepEqual(shape(first.results), shape(fresh.results));

  writeFileSync(join(dir, 'a.sql'), `-- changed\n${session}`);
  const third = await scan(options);
  assert.equal(third.stats.cached, 2, 'a.sql changed');
  assert.deepEqual(shape(third.results), shape((await scan({ ...options, cache: false })).results));
});

test('another config or a broken cache file starts over', async () => {
  const dir = tree({ 'a.sql': session });
  const location = join(dir, 'my-cache.json');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  await scan(options);
  assert.ok(existsSync(location), '--cache-location names the file');
  const warn = await scan({ ...options, rules: { 'no-session-tenant-setting': 'warn' } });
  assert.equal(warn.stats.cached, 0);
  assert.equal(warn.stats.cache?.discarded, 'made by another version or config');
  assert.equal(warn.results[0].messages[0].severity, 1);
  writeFileSync(location, '{ not json');
  const broken = await scan(options);
  assert.equal(broken.stats.cached, 0);
  assert.equal(broken.errorCount, 1);
  assert.equal((await scan(options)).stats.cached, 1, 'rewritten');
  JSON.parse(readFileSync(location, 'utf8'));
});

test('the Python front end’s project files are part of the key: a changed psycopg pin is not served from the cache', async () => {
  const worker = [
    'from psycopg_pool import ConnectionPool',
    '',
    'pool = ConnectionPool("dbname=app", reset=lambda conn: conn.execute("DISCARD ALL"))',
    '',
  ].join('\n');
  const dir = tree({ 'app/worker.py': worker, 'app/requirements.txt': 'psycopg==3.3.6\n' });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off' };
  const first = await scan(options);
  assert.equal(first.stats.parsed, 1);
  await scan(options);
  writeFileSync(join(dir, 'app/requirements.txt'), 'psycopg==3.1.7\n');
  const changed = await scan(options);
  assert.equal(changed.stats.cached, 0, 'the pin changed, so the analysis is redone');
});

/** Registers a rule for one test, and returns the settings that run it alone. */
function onlyRule(t: TestContext, rule: (typeof rules)[number]): RuleSettings {
  injectRules(t, rule);
  return Object.fromEntries(rules.map((r) => [r.id, r === rule ? 'error' : 'off']));
}

// A cross-file rule for this test only: a claimed table needs a policy somewhere in the project.
const crossFile = defineRule<Record<string, never>, { claims: { table: string; line: number }[]; policies: string[] }>({
  id: 'test-claimed-table-needs-policy',
  description: 'Require a policy for every claimed table (test rule)',
  messages: { noPolicy: "No file creates a policy on '{{table}}'." },
  defaultSeverity: 'error',
  recommended: false,
  languages: ['sql'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  triggers: ['skip locked', 'create policy'],
  check() {},
  collect({ file, locate }) {
    const claims: { table: string; line: number }[] = [];
    const policies: string[] = [];
    for (const { statement } of statementsOf(file)) {
      for (const read of statement.lockingReads) if (read.skipLocked) for (const table of read.tables) claims.push({ table, line: locate(read.span).line });
      for (const policy of statement.policies) policies.push(policy.table);
    }
    return claims.length || policies.length ? { claims, policies } : undefined;
  },
  checkProject({ files, report }) {
    const policies = new Set(files.flatMap((f) => f.facts.policies));
    for (const { file, facts } of files) {
      for (const claim of facts.claims) {
        if (!policies.has(claim.table)) report({ file, messageId: 'noPolicy', data: { table: claim.table }, location: { line: claim.line, column: 1, endLine: claim.line, endColumn: 2 } });
      }
    }
  },
});

test('cross-file findings stay right when only some files changed', async (t) => {
  const only = onlyRule(t, crossFile);
  const dir = tree({
    'claim.sql': 'select id from jobs where status = 1 for update skip locked limit 1;\n',
    'policy.sql': 'create policy p on jobs using (true);\n',
  });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off', rules: only };
  assert.equal((await scan(options)).errorCount, 0);
  assert.equal((await scan(options)).stats.cached, 2);
  // The policy goes: claim.sql is unchanged (and cached) but its finding appears.
  writeFileSync(join(dir, 'policy.sql'), 'select 1;\n');
  const after = await scan(options);
  assert.equal(after.stats.cached, 1);
  assert.deepEqual(after.results.map((r) => r.messages.map((m) => m.ruleId)), [['test-claimed-table-needs-policy'], []]);
  // And back.
  writeFileSync(join(dir, 'policy.sql'), 'create policy p on jobs using (true);\n');
  assert.equal((await scan(options)).errorCount, 0);
});

test('files unchanged by their stat are not read again: neither those analysed nor those the prefilter left out', async () => {
  const dir = tree({
    'bad.ts': "await client.query(\"select set_config('app.tenant', $1, false)\", [t]);\n",
    'plain.ts': 'export const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);\n',
    'racy.ts': 'export const x = 1;\n',
  });
  // Old enough to be trusted by their stat; racy.ts is left as just written.
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const name of ['bad.ts', 'plain.ts']) utimesSync(join(dir, name), hourAgo, hourAgo);
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off' };
  const first = await scan(options);
  const second = await scan(options);
  assert.deepEqual(shape(second.results), shape(first.results));
  assert.equal(second.stats.cached, 1, 'bad.ts from the cache');
  assert.equal(second.stats.bytes, readFileSync(join(dir, 'racy.ts')).length, 'only the file modified just now was read');
  assert.equal(second.results.find((r) => r.filePath.endsWith('bad.ts'))!.messages.length, 1);

  // A change that moves mtime is seen; one the stat cannot see is the documented limit.
  writeFileSync(join(dir, 'plain.ts'), "await client.query(\"select set_config('app.tenant', '1', false)\");\n");
  utimesSync(join(dir, 'plain.ts'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const third = await scan(options);
  assert.equal(third.results.find((r) => r.filePath.endsWith('plain.ts'))!.messages.length, 1, 'the changed file was read and analysed');
  assert.deepEqual(shape(third.results), shape((await scan({ ...options, cache: false })).results));
});

test('facts the queue rules share are stored once, and a project served from the cache reports what a fresh scan does', async () => {
  // The mixed project: a claim in TS, the rest in Python and SQL, decided across files.
  const dir = mkdtempSync(join(tmpdir(), 'pgq-cache-'));
  cpSync(join(import.meta.dirname, '../../fixtures/projects/lease-mixed-bad'), dir, { recursive: true });
  const location = join(dir, 'cache.json');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  const fresh = await scan({ ...options, cache: false });
  assert.ok(fresh.errorCount > 0, 'the bad project has findings');
  await scan(options);
  const stored = JSON.parse(readFileSync(location, 'utf8')) as { entries: Record<string, { analysis?: { facts?: Record<string, unknown>; sameFacts?: Record<string, string> } }> };
  const claim = stored.entries[join(dir, 'src/queue.ts')].analysis!;
  assert.deepEqual(claim.sameFacts, { 'require-dead-sweep': 'require-claim-attempt-limit', 'require-fenced-finish': 'require-claim-attempt-limit', 'require-lease-heartbeat': 'require-claim-attempt-limit' });
  assert.ok(!('require-lease-heartbeat' in claim.facts!), 'written once');
  const cached = await scan(options);
  assert.equal(cached.stats.cached, fresh.stats.parsed);
  assert.deepEqual(shape(cached.results), shape(fresh.results));
});

test('the project pass is not run again over the same facts; a changed file, or a changed module a file imports, runs it again', async (t) => {
  const counter = projectPassCounter('test-counts-project-passes');
  const only = onlyRule(t, counter.rule);
  // run.ts reads the pool module it imports from outside the scanned folder: that module is one of its dependencies.
  const dir = tree({
    'lib/db.ts': "import { Pool } from 'pg';\nexport const pool = new Pool({ max: 5 });\n",
    'jobs/run.ts': "import { pool } from '../lib/db.ts';\nexport const run = (t: string) => pool.query('select $1', [t]);\n",
  });
  const options: ScanOptions = { paths: [join(dir, 'jobs')], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off', rules: only };
  await scan(options);
  assert.equal(counter.passes, 1);
  await scan(options);
  assert.equal(counter.passes, 1, 'the same facts: the last pass is remembered');
  writeFileSync(join(dir, 'lib/db.ts'), "import { Pool } from 'pg';\nexport const pool = new Pool({ max: 9 });\n");
  await scan(options);
  assert.equal(counter.passes, 2, 'a module run.ts imports changed');
  writeFileSync(join(dir, 'jobs/run.ts'), "import { pool } from '../lib/db.ts';\nexport const run = (t: string) => pool.query('select $1, 1', [t]);\n");
  await scan(options);
  assert.equal(counter.passes, 3, 'run.ts changed');
  await scan({ ...options, paths: [join(dir, 'jobs/run.ts')] });
  assert.equal(counter.passes, 3, 'the same file named directly: the same pass');
});

test('a module a file imports that is scanned too is checked by its own entry\'s stat: changed, the file is analysed again and reports what a cold scan does', async () => {
  const db = (max: number) => `import { Pool } from 'pg';\nexport const pool = new Pool({ max: ${max} });\nexport const clear = () => pool.query("select set_config('app.tenant', '', false)");\n`;
  const job = "import { pool } from '../lib/db.ts';\nexport async function run(t: string) {\n  await pool.query(\"select set_config('app.tenant', $1, false)\", [t]);\n}\n";
  const dir = tree({ 'lib/db.ts': db(5), 'jobs/run.ts': job });
  const age = (seconds: number) => {
    const at = new Date(Date.now() - seconds * 1000);
    for (const name of ['lib/db.ts', 'jobs/run.ts']) utimesSync(join(dir, name), at, at);
  };
  age(3600);
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  const first = await scan(options);
  assert.equal(first.stats.parsed, 2);
  assert.equal((await scan(options)).stats.cached, 2, 'unchanged: both from the cache, by their stats');
  // The modules an analysis read are stored once, in the file's dependencies the entry names by index.
  const file = JSON.parse(readFileSync(join(dir, 'cache.json'), 'latin1'));
  const stored = file.entries[join(dir, 'jobs/run.ts')];
  assert.deepEqual(
    stored.dependencies.map((i: number) => file.dependencies[i].split('\t')[0]),
    [join(dir, 'lib/db.ts')],
  );
  assert.equal(stored.analysis.dependencies, undefined);
  assert.deepEqual(shape((await scan(options)).results), shape(first.results));
  // db.ts changes (another size, an old time: its stat is trusted and differs from its entry's).
  writeFileSync(join(dir, 'lib/db.ts'), db(50));
  age(7200);
  const changed = await scan(options);
  assert.equal(changed.stats.cached, 0, 'db.ts and run.ts, which imports it, are analysed again');
  assert.deepEqual(shape(changed.results), shape((await scan({ ...options, cache: false })).results));
  assert.equal((await scan(options)).stats.cached, 2);
  // Changed again within the last two seconds: its stat is not trusted, its bytes are read.
  writeFileSync(join(dir, 'lib/db.ts'), db(500));
  const racy = await scan(options);
  assert.equal(racy.stats.cached, 0);
  assert.deepEqual(shape(racy.results), shape((await scan({ ...options, cache: false })).results));
  // db.ts outside the scanned folder: no entry of its own; the stat run.ts's entry keeps of it stands for its bytes.
  const outside: ScanOptions = { ...options, paths: [join(dir, 'jobs')], cacheLocation: join(dir, 'outside.json') };
  age(3600);
  await scan(outside);
  assert.equal((await scan(outside)).stats.cached, 1);
  writeFileSync(join(dir, 'lib/db.ts'), db(7));
  age(5400);
  const moved = await scan(outside);
  assert.equal(moved.stats.cached, 0, 'its stat changed: hashed again, and its bytes changed too');
  assert.deepEqual(shape(moved.results), shape((await scan({ ...outside, cache: false })).results));
  assert.equal((await scan(outside)).stats.cached, 1);
});

test('the cache file is ASCII, and paths and messages beyond ASCII come back from it unchanged', async () => {
  const dir = tree({ 'déjà/tâche.sql': session, 'naïve.sql': 'BEGIN;\nDISCARD ALL;\nCOMMIT;\n' });
  const location = join(dir, 'cache.json');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  const fresh = await scan({ ...options, cache: false });
  await scan(options);
  assert.ok(isAscii(readFileSync(location)), 'escaped');
  assert.ok(readFileSync(location, 'latin1').includes('d\\u00e9j\\u00e0'), 'the path is escaped, not dropped');
  const cached = await scan(options);
  assert.equal(cached.stats.cached, 2);
  assert.deepEqual(shape(cached.results), shape(fresh.results));
  assert.ok(cached.results.some((r) => r.filePath.endsWith(join('déjà', 'tâche.sql')) && r.messages.length === 1));
});

test('a file served from the cache is not read for its text: a report that shows it reads it then', async () => {
  const dir = tree({ 'bad.sql': session });
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(dir, 'bad.sql'), hourAgo, hourAgo);
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off' };
  await scan(options);
  const cached = await scan(options);
  assert.equal(cached.stats.bytes, 0, 'nothing read');
  assert.equal(cached.results[0].source, undefined);
  assert.match(formatStylish(cached.results, { color: false, codeFrames: true, cwd: dir }), /> 1 \| select set_config\('app.tenant', \$1, false\);/);
});

test('a file skipped over its time budget is cached as skipped: the next run gives the same report without analysing it; a larger budget analyses it', async () => {
  // Thousands of statements: far more than 1 ms of analysis on any machine, a few seconds at most.
  const big = Array.from({ length: 4000 }, (_, i) => (i === 3999 ? session : `select a from t where id = ${i};\n`)).join('');
  const dir = tree({ 'big.sql': big });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off', timeBudget: 1 };
  const first = await scan(options);
  assert.deepEqual(first.results[0].messages.map((m) => m.messageId), ['skipped']);
  const second = await scan(options);
  assert.deepEqual(shape(second.results), shape(first.results));
  assert.equal(second.stats.cached, 1, 'served from the cache, not analysed again');
  const larger = await scan({ ...options, timeBudget: 0 });
  assert.equal(larger.stats.cached, 0, 'a run that allows more time analyses it');
  assert.deepEqual(larger.results[0].messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
});

test('a module many files import is stored once; a cache of the format before, or an entry naming no stored module, is not trusted', async () => {
  const job = (n: number) => `import { pool } from '../lib/db.ts';\nexport async function run${n}(t: string) {\n  await pool.query("select set_config('app.tenant', $1, false)", [t]);\n}\n`;
  const dir = tree({
    'lib/db.ts': "import { Pool } from 'pg';\nexport const pool = new Pool({ max: 5 });\n",
    'jobs/a.ts': job(1),
    'jobs/b.ts': job(2),
    'jobs/c.ts': job(3),
  });
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const name of ['lib/db.ts', 'jobs/a.ts', 'jobs/b.ts', 'jobs/c.ts']) utimesSync(join(dir, name), hourAgo, hourAgo);
  const location = join(dir, 'cache.json');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  const fresh = await scan({ ...options, cache: false });
  assert.ok(fresh.stats.parsed >= 3);
  await scan(options);
  const file = JSON.parse(readFileSync(location, 'latin1'));
  assert.equal(file.dependencies.filter((line: string) => line.startsWith(`${join(dir, 'lib/db.ts')}\t`)).length, 1, 'one line for db.ts');
  const named = ['a', 'b', 'c'].map((n) => file.entries[join(dir, `jobs/${n}.ts`)].dependencies);
  assert.deepEqual(named, [named[0], named[0], named[0]], 'the three entries name the same line');
  assert.equal((await scan(options)).stats.cached, fresh.stats.parsed);

  // The format before this one kept each dependency in every entry that read it: such a file is not read, and is rewritten.
  const before = { ...file, format: file.format - 1, dependencies: undefined, entries: {} as Record<string, unknown> };
  for (const [path, entry] of Object.entries(file.entries as Record<string, { dependencies?: number[] }>)) {
    before.entries[path] = entry.dependencies
      ? { ...entry, dependencies: Object.fromEntries(entry.dependencies.map((i) => file.dependencies[i].split('\t'))) }
      : entry;
  }
  writeFileSync(location, JSON.stringify(before));
  const old = await scan(options);
  assert.equal(old.stats.cached, 0);
  assert.equal(old.stats.cache?.discarded, 'made by another version or config');
  assert.deepEqual(shape(old.results), shape(fresh.results));
  assert.equal(JSON.parse(readFileSync(location, 'latin1')).format, file.format, 'rewritten');
  assert.equal((await scan(options)).stats.cached, fresh.stats.parsed);

  // An entry that names a dependency the file does not hold is analysed again, not trusted.
  const broken = JSON.parse(readFileSync(location, 'latin1'));
  broken.entries[join(dir, 'jobs/a.ts')].dependencies = [broken.dependencies.length];
  writeFileSync(location, JSON.stringify(broken));
  const again = await scan(options);
  assert.equal(again.stats.cached, fresh.stats.parsed - 1);
  assert.deepEqual(shape(again.results), shape(fresh.results));
});

test('an answer read from the whole project (every pool a Python project makes is a NullPool) is not served from the cache once another project file changes it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-cache-'));
  cpSync('fixtures/python/no-session-tenant-setting/nullpool-project', dir, { recursive: true });
  // A module the scanned helper never imports, making no engine yet.
  const reports = join(dir, 'app/db/reports.py');
  writeFileSync(reports, 'REPORTS_URL = "postgresql+asyncpg://app@localhost/app"\n');
  const options: ScanOptions = { paths: [join(dir, 'app/tenancy')], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  const before = await scan(options);
  assert.deepEqual(shape(before.results), shape((await scan({ ...options, cache: false })).results));
  assert.equal(before.results.flatMap((r) => r.messages).length, 0, 'every pool is a NullPool: quiet');
  // The project's files, in order, are stored as a run: a start and how many follow.
  const stored = JSON.parse(readFileSync(join(dir, 'cache.json'), 'utf8'));
  const named: number[] = stored.entries[join(dir, 'app/tenancy/switch.py')].dependencies;
  assert.ok(named.some((n) => n < 0), JSON.stringify(named));
  assert.equal((await scan(options)).stats.cached, 1, 'and read back: the unchanged file is served from the cache');
  // Now that module makes a pooled engine: a Session handed in may be one of its connections.
  writeFileSync(reports, 'from sqlalchemy.ext.asyncio import create_async_engine\n\nreports = create_async_engine("postgresql+asyncpg://app@localhost/app", pool_size=5)\n');
  const cold = await scan({ ...options, cache: false });
  assert.ok(cold.results.flatMap((r) => r.messages).some((m) => m.ruleId === 'no-session-tenant-setting'), 'a pooled engine in the project: reported');
  assert.deepEqual(shape((await scan(options)).results), shape(cold.results));
});

test('a value read from every call in a Python project (a claim helper\'s lease length) is not served from the cache once another project file adds a call', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-cache-'));
  cpSync('fixtures/python/require-fenced-finish/caller-lease-project', dir, { recursive: true });
  // A module that does not call the claim yet.
  const cli = join(dir, 'clinic/cli.py');
  writeFileSync(cli, 'import sys\n\n\ndef main() -> None:\n    print(sys.argv)\n');
  const options: ScanOptions = { paths: [join(dir, 'clinic/bad_visits.py')], cwd: dir, cache: true, cacheLocation: join(dir, 'cache.json'), concurrency: 'off' };
  const before = await scan(options);
  assert.ok(before.results.flatMap((r) => r.messages).some((m) => m.ruleId === 'require-fenced-finish'), 'every call passes the 45 s default: the lease is known');
  // Now it calls the claim with a hold read at run time: the calls disagree, the lease length is unknown.
  writeFileSync(cli, 'import sys\n\nfrom clinic.bad_visits import take_visits\n\n\nasync def main(session) -> None:\n    await take_visits(session, now=None, nurse="cli", batch=1, hold_seconds=int(sys.argv[1]))\n');
  const cold = await scan({ ...options, cache: false });
  assert.notDeepEqual(shape(cold.results), shape(before.results), 'the calls disagree: the finding goes');
  assert.deepEqual(shape((await scan(options)).results), shape(cold.results));
});

test('dependency indices are stored with runs packed, and read back as they were', async () => {
  const { packRuns, unpackRuns } = await import('../../src/scan/cache.ts');
  for (const list of [[], [4], [0, 1], [0, 1, 2], [3, 4, 5, 6, 9, 2, 3, 4, 8], [7, 6, 5], [0, 2, 4, 5, 6, 7]]) {
    assert.deepEqual(unpackRuns(packRuns(list)), list);
  }
  assert.deepEqual(packRuns([3, 4, 5, 6, 9]), [3, -3, 9]);
  assert.equal(unpackRuns([-2]), undefined, 'a run with no start is a broken entry');
  assert.equal(unpackRuns([1.5]), undefined);
});
