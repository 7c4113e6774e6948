// The CLI's code cache (src/cli/code-cache.ts): made by the first run in a folder of the user's own,
// read by the next ones, never the reason for a different report; off with NODE_DISABLE_COMPILE_CACHE,
// refused in a folder others can write to, made again when V8 rejects it. The built CLI, with TMPDIR
// pointing at a folder of the test's own.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { BAD_SESSION_SQL, project } from './project.ts';

const folderName = `pgq-audit-code-cache-${process.getuid?.() ?? ''}`.replace(/-$/, '');

function scanWith(temp: string, dir: string, env: NodeJS.ProcessEnv = {}): string {
  const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir, env: { TMPDIR: temp, NODE_OPTIONS: '', ...env } });
  assert.equal(run.code, 1, run.stderr);
  return run.stdout;
}

function cacheFiles(temp: string): string[] {
  const folder = join(temp, folderName);
  return existsSync(folder) ? readdirSync(folder).map((name) => join(folder, name)) : [];
}

test('the first run makes the cache in a folder of its own; the next runs read it and report the same', () => {
  const temp = mkdtempSync(join(tmpdir(), 'pgq-code-cache-'));
  const dir = project({ 'db/tenant.sql': BAD_SESSION_SQL });
  const first = scanWith(temp, dir);
  const [file] = cacheFiles(temp);
  assert.ok(file?.endsWith('.bin'), 'one cache file');
  assert.equal(statSync(join(temp, folderName)).mode & 0o777, 0o700, 'a folder only its user can enter');
  const header = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]) as { kinds: Record<string, number | null> };
  assert.deepEqual(Object.values(header.kinds), [null], 'one kind of run, none has used the cache yet');
  assert.equal(scanWith(temp, dir), first);
  const used = readFileSync(file);
  assert.equal(scanWith(temp, dir), first);
  assert.deepEqual(readFileSync(file), used, 'a run that compiled nothing new leaves the cache as it is');
  assert.deepEqual(cacheFiles(temp), [file]);
});

test('a cache V8 rejects is made again, and the report is the same', () => {
  const temp = mkdtempSync(join(tmpdir(), 'pgq-code-cache-'));
  const dir = project({ 'db/tenant.sql': BAD_SESSION_SQL });
  const first = scanWith(temp, dir);
  const [file] = cacheFiles(temp);
  const good = readFileSync(file);
  const header = good.subarray(0, good.indexOf(10) + 1);
  writeFileSync(file, Buffer.concat([header, Buffer.alloc(good.length - header.length, 7)]));
  assert.equal(scanWith(temp, dir), first);
  const remade = readFileSync(file);
  const end = remade.indexOf(10) + 1;
  assert.deepEqual(Object.values((JSON.parse(remade.subarray(0, end).toString()) as { kinds: object }).kinds), [null], 'a new cache');
  assert.notDeepEqual(remade.subarray(end, end + 64), Buffer.alloc(64, 7));
});

test('NODE_DISABLE_COMPILE_CACHE turns the cache off; a folder others can write to is not used', () => {
  const dir = project({ 'db/tenant.sql': BAD_SESSION_SQL });
  const off = mkdtempSync(join(tmpdir(), 'pgq-code-cache-'));
  const report = scanWith(off, dir, { NODE_DISABLE_COMPILE_CACHE: '1' });
  assert.deepEqual(cacheFiles(off), []);
  assert.equal(existsSync(join(off, folderName)), false);
  const shared = mkdtempSync(join(tmpdir(), 'pgq-code-cache-'));
  mkdirSync(join(shared, folderName));
  chmodSync(join(shared, folderName), 0o777);
  assert.equal(scanWith(shared, dir), report);
  assert.deepEqual(cacheFiles(shared), [], 'nothing written where another user could plant a cache');
});

test('code compiled from the cache still imports packages: db loads pg on the run that makes the cache and on the one that reads it', () => {
  const temp = mkdtempSync(join(tmpdir(), 'pgq-code-cache-'));
  for (const run of ['makes', 'reads']) {
    const result = runCli(['db', 'postgres://u:p@127.0.0.1:1/x'], { env: { TMPDIR: temp, NODE_OPTIONS: '' } });
    assert.equal(result.code, 2, run);
    assert.match(result.stderr, /cannot reach the database at 127\.0\.0\.1:1/, `${run}: ${result.stderr}`);
    assert.doesNotMatch(result.stderr, /internal error|Warning/, run);
  }
  assert.equal(cacheFiles(temp).length, 1);
});
