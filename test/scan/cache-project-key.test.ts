// --cache's project pass is taken from the cache when its key, the text of what the pass decides
// over, is the stored one. The key is compared as text, not hashed (so a cached scan loads no
// node:crypto), and names each module the files read once, by number: a changed module must still
// change it though no importer's stat did, and a key that differs anywhere is not taken.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { FileResult } from '../../src/engine/findings.ts';
import { scan, type ScanOptions } from '../../src/scan/scan.ts';
import { injectRules, projectPassCounter } from '../helpers/inject-rules.ts';

const shape = (results: readonly FileResult[]) => results.map((r) => [r.filePath, r.messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`)]);

const pool = (max: number) => `import { Pool } from 'pg';\nexport const pool = new Pool({ max: ${max} });\n`;
const job = (n: number, from: string) => `import { pool } from '${from}';\nexport async function run${n}(t: string) {\n  await pool.query("select set_config('app.tenant', $1, false)", [t]);\n}\n`;

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-cache-key-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** Every file written a while ago (a later age each call): its stat is trusted (cache.ts's statKey). */
function age(dir: string, names: readonly string[], seconds: number): void {
  const at = new Date(Date.now() - seconds * 1000);
  for (const name of names) utimesSync(join(dir, name), at, at);
}

test('a module the importers read changes while no importer\'s stat does: the pass runs again and reports what a cold scan does', async (t) => {
  const counter = projectPassCounter('test-counts-keyed-passes');
  injectRules(t, counter.rule);
  // Two modules, outside the scanned folder (no entries of their own): a.ts and b.ts read db.ts, c.ts reads other.ts.
  const names = ['lib/db.ts', 'lib/other.ts', 'jobs/a.ts', 'jobs/b.ts', 'jobs/c.ts'];
  const dir = tree({ 'lib/db.ts': pool(5), 'lib/other.ts': pool(6), 'jobs/a.ts': job(1, '../lib/db.ts'), 'jobs/b.ts': job(2, '../lib/db.ts'), 'jobs/c.ts': job(3, '../lib/other.ts') });
  age(dir, names, 3600);
  const location = join(dir, 'cache.json');
  const options: ScanOptions = { paths: [join(dir, 'jobs')], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  const cold = await scan(options);
  assert.equal(counter.passes, 1);
  const stored = JSON.parse(readFileSync(location, 'latin1'));
  assert.ok(!/^[0-9a-f]{40}$/.test(stored.key) && !/^[0-9a-f]{40}$/.test(stored.project.key), 'keys are kept as text');
  assert.equal(stored.project.key.split(`${join(dir, 'lib/db.ts')}\t`).length - 1, 1, 'the module two files read is listed once in the pass key');

  const cached = await scan(options);
  assert.equal(counter.passes, 1, 'nothing changed: the pass is taken from the cache');
  assert.equal(cached.stats.cached, 3);
  assert.deepEqual(shape(cached.results), shape(cold.results));

  // other.ts changes; the jobs keep their stats, and db.ts its own.
  writeFileSync(join(dir, 'lib/other.ts'), pool(60));
  age(dir, ['lib/other.ts'], 7200);
  const changed = await scan(options);
  assert.equal(counter.passes, 2, 'a module c.ts read changed: the pass runs again');
  assert.equal(changed.stats.cached, 2, 'a.ts and b.ts from the cache, c.ts analysed again');
  assert.deepEqual(shape(changed.results), shape((await scan({ ...options, cache: false })).results));
  const counted = counter.passes;
  await scan(options);
  assert.equal(counter.passes, counted, 'unchanged again: taken from the cache');

  // A stored pass key that differs from this scan's in any place is not taken: one digit of db.ts's stored stat.
  const file = JSON.parse(readFileSync(location, 'latin1'));
  const key: string = file.project.key;
  const at = key.lastIndexOf(':') - 1;
  file.project.key = `${key.slice(0, at)}${key[at] === '1' ? '2' : '1'}${key.slice(at + 1)}`;
  writeFileSync(location, JSON.stringify(file));
  await scan(options);
  assert.equal(counter.passes, counted + 1, 'another key: the pass runs');
});

test('a Python file\'s context (its psycopg pin) is taken by the pin file\'s stat: changed with a trusted stat, the file is analysed again', async () => {
  const worker = ['from psycopg_pool import ConnectionPool', '', 'pool = ConnectionPool("dbname=app", reset=lambda conn: conn.execute("DISCARD ALL"))', ''].join('\n');
  const dir = tree({ 'app/worker.py': worker, 'app/requirements.txt': 'psycopg==3.3.6\n' });
  const names = ['app/worker.py', 'app/requirements.txt'];
  age(dir, names, 3600);
  const location = join(dir, 'cache.json');
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, cacheLocation: location, concurrency: 'off' };
  const first = await scan(options);
  assert.equal(first.stats.parsed, 1);
  const stored = JSON.parse(readFileSync(location, 'latin1'));
  assert.match(stored.contexts.files[join(dir, 'app/requirements.txt')], /^\d+:\d+(\.\d+)?:\d+\t[0-9a-f]{40}$/, 'the pin file kept by its stat');
  const cached = await scan(options);
  assert.equal(cached.stats.cached, 1);
  assert.deepEqual(shape(cached.results), shape(first.results));
  // Another pin of the same length, written a while ago: the stat differs in its time only.
  writeFileSync(join(dir, 'app/requirements.txt'), 'psycopg==3.1.7\n');
  age(dir, ['app/requirements.txt'], 7200);
  const changed = await scan(options);
  assert.equal(changed.stats.cached, 0, 'the pin changed, so the analysis is redone');
  assert.deepEqual(shape(changed.results), shape((await scan({ ...options, cache: false })).results));
  assert.equal((await scan(options)).stats.cached, 1, 'then cached again');
  // Changed back within the last two seconds: its stat is not trusted, its bytes are read and hashed.
  writeFileSync(join(dir, 'app/requirements.txt'), 'psycopg==3.3.6\n');
  const racy = await scan(options);
  assert.equal(racy.stats.cached, 0);
  assert.deepEqual(shape(racy.results), shape(first.results));
});
