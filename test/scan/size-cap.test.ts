// The report of a scan is a function of its input files and options: a file
// is skipped by its size (per language, --max-file-size), decided before any
// parse, never by how long its analysis took on this machine; the skip is the
// same warning in every format and is cached with the file's entry, so a
// second run is identical and reads nothing.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { runCli } from '../helpers/cli.ts';
import type { FileResult } from '../../src/engine/findings.ts';
import { formatGithub } from '../../src/report/github.ts';
import { formatJson } from '../../src/report/json.ts';
import { formatSarif } from '../../src/report/sarif.ts';
import { formatStylish } from '../../src/report/stylish.ts';
import { scan, type ScanOptions } from '../../src/scan/scan.ts';
import { DEFAULT_MAX_FILE_SIZE, parseMaxFileSize as parseCaps } from '../../src/config/file-size.ts';
import { overSizeCap } from '../../src/scan/skips.ts';

const parseMaxFileSize = (value: string) => parseCaps(value, '--max-file-size', (message) => new Error(message));

const sqlLeak = "select set_config('app.tenant', $1, false);\n";
const tsLeak = "await pool.query(\"select set_config('app.tenant', $1, false)\", [tenant]);\n";
const pyLeak = 'cur.execute("select set_config(\'app.tenant\', %s, false)", (tenant,))\n';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-size-cap-'));
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
    // Old enough for the cache to trust its stat.
    utimesSync(join(dir, name), hourAgo, hourAgo);
  }
  return dir;
}

/** `text` padded with comment lines to exactly `bytes` bytes (ASCII). */
function padded(text: string, bytes: number, comment: string): string {
  let out = text;
  while (out.length + comment.length + 1 <= bytes) out += `${comment}\n`;
  return out + ' '.repeat(bytes - out.length);
}

const shape = (results: readonly FileResult[], dir: string) =>
  results.map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => [m.ruleId, m.messageId ?? null, m.severity, m.line, m.message])]);

test('the cap boundary, per language: a file of exactly the cap is analysed, one byte more is skipped with a warning naming its size and the cap', async () => {
  const cap = 4096;
  const files: Record<string, string> = {};
  for (const [ext, leak, comment] of [
    ['sql', sqlLeak, '-- padding'],
    ['ts', tsLeak, '// padding'],
    ['py', pyLeak, '# padding'],
  ] as const) {
    files[`at/job.${ext}`] = padded(leak, cap, comment);
    files[`over/job.${ext}`] = padded(leak, cap + 1, comment);
  }
  const dir = tree(files);
  const { results, stats } = await scan({ paths: [dir], cwd: dir, concurrency: 'off', maxFileSize: { sql: cap, python: cap, typescript: cap } });
  for (const result of results) {
    const name = result.filePath.slice(dir.length + 1);
    if (name.startsWith('at/')) {
      assert.deepEqual(
        result.messages.map((m) => m.ruleId),
        ['no-session-tenant-setting'],
        name,
      );
    } else {
      assert.equal(result.messages.length, 1, name);
      const [skip] = result.messages;
      assert.equal(skip.ruleId, null);
      assert.equal(skip.messageId, 'skipped');
      assert.equal(skip.severity, 1);
      assert.match(skip.message, /^File skipped: it is 4 KB, over the 4 KB cap for (SQL|TS\/JS|Python) files \(decided by its size, the same on every run\)/, name);
    }
  }
  assert.equal(stats.skipped, 3);
  // Bytes, not characters: é is two.
  assert.equal(overSizeCap(cap, 'sql', { ...DEFAULT_MAX_FILE_SIZE, sql: cap }), undefined);
  assert.ok(overSizeCap(cap + 1, 'sql', { ...DEFAULT_MAX_FILE_SIZE, sql: cap }));
  assert.equal(overSizeCap(10 ** 9, 'sql', { ...DEFAULT_MAX_FILE_SIZE, sql: 0 }), undefined, '0 is no cap');
});

test('the default caps: a 2 MB + 1 byte .sql file is skipped by its size without being parsed; a file that lacks the trigger words is not reported at all', async () => {
  const big = padded(sqlLeak, DEFAULT_MAX_FILE_SIZE.sql + 1, '-- a migration line that pads the file');
  const quiet = padded('export const a = 1;\n', DEFAULT_MAX_FILE_SIZE.typescript + 1, '// nothing here');
  const dir = tree({ 'big.sql': big, 'quiet.ts': quiet });
  const started = performance.now();
  const { results } = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  assert.deepEqual(
    results.map((r) => r.messages.map((m) => m.messageId)),
    [['skipped'], []],
  );
  // Not a timed test: a parse of 2 MB of SQL takes seconds, a read of it milliseconds; the bound is loose.
  assert.ok(performance.now() - started < 30_000);
});

/** Busy threads: the machine is slow for whatever runs beside them. */
function burnCpu(threads: number): () => Promise<void> {
  const workers = Array.from({ length: threads }, () => new Worker('for (;;) {}', { eval: true }));
  return async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
}

test('the same input gives the same report on a slow machine: the skip is decided by size, not by the wall clock', { timeout: 120_000 }, async () => {
  const dir = tree({
    'big.sql': padded(sqlLeak, 64 * 1024, '-- padding line of a long migration'),
    'job.ts': tsLeak,
    'job.py': `import psycopg\n${pyLeak}`,
    'job.sql': sqlLeak,
  });
  const options: ScanOptions = { paths: [dir], cwd: dir, concurrency: 'off', maxFileSize: { sql: 32 * 1024 } };
  const idle = await scan(options);
  assert.deepEqual(
    idle.results.map((r) => r.messages.map((m) => m.ruleId ?? m.messageId)),
    [['skipped'], ['no-session-tenant-setting'], ['no-session-tenant-setting'], ['no-session-tenant-setting']],
  );
  // Three threads spinning on a machine of two cores or more: each analysis takes longer.
  const stop = burnCpu(3);
  let loaded;
  try {
    loaded = await scan(options);
  } finally {
    await stop();
  }
  assert.equal(formatJson(loaded.results), formatJson(idle.results));
  // A machine so slow that every analysis overruns a 1 ms wall budget: the files the budget stops
  // differ, but the file over the size cap is skipped before the wall clock has a say, with the same message.
  const hurried = await scan({ ...options, timeBudget: 1 });
  assert.deepEqual(shape(hurried.results, dir)[0], shape(idle.results, dir)[0]);
});

test('a file skipped by its size is cached with its entry: the second run reads nothing and gives the same report; other caps analyse it', async () => {
  const dir = tree({ 'big.sql': padded(sqlLeak, 8192, '-- padding'), 'job.sql': sqlLeak });
  const options: ScanOptions = { paths: [dir], cwd: dir, cache: true, concurrency: 'off', maxFileSize: { sql: 4096 } };
  const first = await scan(options);
  assert.deepEqual(first.results[0].messages.map((m) => m.messageId), ['skipped']);
  const second = await scan(options);
  assert.deepEqual(shape(second.results, dir), shape(first.results, dir));
  assert.equal(second.stats.bytes, 0, 'nothing read: both served by their stat');
  assert.equal(second.stats.cached, 2);
  assert.equal(second.stats.skipped, 1, 'a skip from the cache is still counted');
  const larger = await scan({ ...options, maxFileSize: { sql: 0 } });
  assert.deepEqual(
    larger.results[0].messages.map((m) => m.ruleId),
    ['no-session-tenant-setting'],
    'a run with another cap is a cache of its own',
  );
  assert.equal(larger.stats.cached, 0);
});

test('a skip is the same warning in every format: stylish, json, sarif (a result and a notification), github', async () => {
  const dir = tree({ 'big.sql': padded(sqlLeak, 8192, '-- padding') });
  const { results } = await scan({ paths: [dir], cwd: dir, concurrency: 'off', maxFileSize: { sql: 4096 } });
  const message = results[0].messages[0].message;
  assert.match(formatStylish(results, { color: false, codeFrames: false, cwd: dir }), /warning\s+File skipped: it is 8 KB/);
  const json = JSON.parse(formatJson(results)) as { messages: { severity: number; messageId: string; ruleId: null }[] }[];
  assert.deepEqual(json[0].messages.map((m) => [m.ruleId, m.severity, m.messageId]), [[null, 1, 'skipped']]);
  const sarif = JSON.parse(formatSarif(results, { root: dir })) as {
    runs: { results: { ruleId: string; level: string; message: { text: string } }[]; invocations: { toolExecutionNotifications: { level: string }[] }[] }[];
  };
  assert.deepEqual(
    sarif.runs[0].results.map((r) => [r.ruleId, r.level, r.message.text]),
    [['pgq-audit/file-skipped', 'warning', message]],
  );
  assert.deepEqual(
    sarif.runs[0].invocations[0].toolExecutionNotifications.map((n) => n.level),
    ['warning'],
  );
  assert.match(formatGithub(results, { root: dir }), /^::warning file=big\.sql,.*::File skipped: it is 8 KB/);
});

test('--max-file-size: one size for every language, or sizes per language; anything else is a usage error naming the option and the valid values', () => {
  assert.deepEqual(parseMaxFileSize('512KB'), { sql: 512 * 1024, python: 512 * 1024, typescript: 512 * 1024 });
  assert.deepEqual(parseMaxFileSize('0'), { sql: 0, python: 0, typescript: 0 });
  assert.deepEqual(parseMaxFileSize('sql=1MB,ts=8mb'), { ...DEFAULT_MAX_FILE_SIZE, sql: 1024 * 1024, typescript: 8 * 1024 * 1024 });
  assert.deepEqual(parseMaxFileSize('py=1000'), { ...DEFAULT_MAX_FILE_SIZE, python: 1000 });
  for (const bad of ['', 'lots', '-5', '2GB', 'go=1MB', 'sql=', 'sql=1MB=2', 'sql=1MB,,']) {
    assert.throws(() => parseMaxFileSize(bad), /--max-file-size/, bad);
  }
  const unknown = runCli(['scan', 'fixtures/sql', '--max-file-size', 'go=1MB']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--max-file-size go=1MB: expected <size> or <language>=<size>\[,\.\.\.\] with a language of sql, python, typescript/);
  const size = runCli(['scan', 'fixtures/sql', '--max-file-size', 'big']);
  assert.equal(size.code, 2);
  assert.match(size.stderr, /--max-file-size big: expected a size such as 512KB, 2MB or a number of bytes \(0 for no cap\)/);
  const dir = tree({ 'big.sql': padded(sqlLeak, 2048, '-- padding'), 'job.sql': sqlLeak });
  const ok = runCli(['scan', '.', '--max-file-size', 'sql=1KB', '--format', 'json'], { cwd: dir });
  assert.equal(ok.code, 1, ok.stderr);
  assert.deepEqual(
    (JSON.parse(ok.stdout) as { messages: { ruleId: string | null; messageId?: string }[] }[]).map((r) => r.messages.map((m) => m.ruleId ?? m.messageId)),
    [['skipped'], ['pgq/no-session-tenant-setting']],
  );
});

test('the config\'s "maxFileSize" reads as --max-file-size does; the option wins; a bad value is a config error naming the key (exit 2)', () => {
  const dir = tree({ 'big.sql': padded(sqlLeak, 2048, '-- padding'), 'pgq-audit.config.json': JSON.stringify({ maxFileSize: 'sql=1KB' }) });
  const kinds = (stdout: string) => (JSON.parse(stdout) as { messages: { ruleId: string | null; messageId?: string }[] }[]).map((r) => r.messages.map((m) => m.ruleId ?? m.messageId));
  const capped = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.deepEqual(kinds(capped.stdout), [['skipped']], capped.stderr);
  const option = runCli(['scan', '.', '--format', 'json', '--max-file-size', '0'], { cwd: dir });
  assert.deepEqual(kinds(option.stdout), [['pgq/no-session-tenant-setting']], option.stderr);
  for (const [value, message] of [
    ['go=1KB', /pgq-audit\.config\.json: maxFileSize go=1KB: expected <size> or <language>=<size>\[,\.\.\.\] with a language of sql, python, typescript/],
    [2048, /pgq-audit\.config\.json: maxFileSize: expected a string such as "8MB" or "sql=1MB,ts=8MB"/],
  ] as const) {
    writeFileSync(join(dir, 'pgq-audit.config.json'), JSON.stringify({ maxFileSize: value }));
    const bad = runCli(['scan', '.'], { cwd: dir });
    assert.equal(bad.code, 2, bad.stdout);
    assert.match(bad.stderr, message);
  }
});
