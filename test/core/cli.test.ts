// `pgq-audit scan` as users and CI run it: exit codes, stylish and JSON output,
// bad input that costs one diagnostic and nothing else.
import assert from 'node:assert/strict';
import { mkdtempSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot, runCli } from '../helpers/cli.ts';

const bad = 'fixtures/sql/no-session-tenant-setting/bad.sql';
const good = 'fixtures/sql/no-session-tenant-setting/good.sql';

test('stylish output groups findings by file and exits 1 on errors', () => {
  const run = runCli(['scan', 'fixtures/sql']);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stdout, /^fixtures\/sql\/no-session-tenant-setting\/bad\.sql$/m);
  assert.match(run.stdout, /^ {2}5:1 +error +Session-level write of 'app\.tenant' outlives the job.*pgq\/no-session-tenant-setting$/m);
  assert.match(run.stdout, /^✖ \d+ problems \(\d+ errors, 0 warnings\)$/m);
  assert.doesNotMatch(run.stdout, /good\.sql/);
});

test('JSON output has exactly the shape of ESLint’s JSON formatter', () => {
  const run = runCli(['scan', bad, good, '--format', 'json']);
  assert.equal(run.code, 1);
  const results = JSON.parse(run.stdout);
  assert.equal(results.length, 2);
  const [badResult, goodResult] = results;
  assert.equal(badResult.filePath, join(repoRoot, bad));
  assert.deepEqual(goodResult.messages, []);
  assert.equal(goodResult.errorCount, 0);
  for (const key of ['filePath', 'messages', 'errorCount', 'warningCount', 'fatalErrorCount', 'fixableErrorCount', 'fixableWarningCount']) {
    assert.ok(key in badResult, `result has ${key}`);
  }
  assert.equal(badResult.errorCount, badResult.messages.length);
  const first = badResult.messages[0];
  assert.deepEqual(
    { ruleId: first.ruleId, severity: first.severity, line: first.line, column: first.column, endLine: first.endLine, endColumn: first.endColumn },
    { ruleId: 'pgq/no-session-tenant-setting', severity: 2, line: 5, column: 1, endLine: 5, endColumn: 22 },
  );
  assert.equal(typeof first.message, 'string');
});

test('a clean scan prints nothing and exits 0', () => {
  const run = runCli(['scan', good]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.equal(run.stdout, '');
});

test('--rule changes severity; warnings exit 0 unless --max-warnings is exceeded', () => {
  const warn = runCli(['scan', bad, '--rule', 'no-session-tenant-setting:warn', '--format', 'json']);
  assert.equal(warn.code, 0, warn.stderr);
  const [result] = JSON.parse(warn.stdout);
  assert.ok(result.warningCount > 0);
  assert.ok(result.messages.every((m: { severity: number }) => m.severity === 1));

  const limited = runCli(['scan', bad, '--rule', 'pgq/no-session-tenant-setting:warn', '--max-warnings', '0']);
  assert.equal(limited.code, 1);
  assert.match(limited.stderr, /too many warnings \(maximum: 0\)/);

  const off = runCli(['scan', bad, '--rule', 'no-session-tenant-setting:off']);
  assert.equal(off.code, 0);
});

test('--quiet reports errors only', () => {
  const run = runCli(['scan', bad, '--rule', 'no-session-tenant-setting:warn', '--quiet']);
  assert.equal(run.code, 0);
  assert.equal(run.stdout, '');
});

test('usage errors exit 2 and name the option and its valid values', () => {
  const missing = runCli(['scan', '/no/such/path']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /No such file or directory: \/no\/such\/path/);

  const format = runCli(['scan', good, '--format', 'xml']);
  assert.equal(format.code, 2);
  assert.match(format.stderr, /--format xml: valid formats are .*stylish.*json/);

  const rule = runCli(['scan', good, '--rule', 'no-such-rule:error']);
  assert.equal(rule.code, 2);
  assert.match(rule.stderr, /Unknown rule 'no-such-rule'\. Valid rules: .*no-session-tenant-setting/);

  const severity = runCli(['scan', good, '--rule', 'no-session-tenant-setting:fatal']);
  assert.equal(severity.code, 2);
  assert.match(severity.stderr, /severity must be one of off, warn, error/);

  const flag = runCli(['scan', '--no-such-flag']);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /Unknown option '--no-such-flag'/);
});

test('garbage .sql files cost one fatal message each and the scan goes on', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-garbage-'));
  writeFileSync(join(dir, 'binary.sql'), Buffer.from([0x00, 0xff, 0xfe, 0x01, 0x02, 0x50, 0x4b, 0x03, 0x04]));
  writeFileSync(join(dir, 'unterminated.sql'), "select 'never closed;\nselect 2;\n");
  let nonsense = '';
  // Under the 2 MB cap for .sql files (a larger one is skipped by its size, a warning: test/scan/size-cap.test.ts).
  while (nonsense.length < 1.5 * 1024 * 1024) nonsense += 'florp wibble ( ] 12 ;; zap , ';
  writeFileSync(join(dir, 'nonsense.sql'), nonsense);
  copyFileSync(join(repoRoot, bad), join(dir, 'real.sql'));

  const run = runCli(['scan', dir, '--format', 'json']);
  assert.equal(run.code, 1, run.stderr);
  const byName = new Map<string, { messages: { fatal?: boolean; ruleId: string | null }[] }>(
    JSON.parse(run.stdout).map((r: { filePath: string }) => [r.filePath.slice(dir.length + 1), r]),
  );
  for (const name of ['binary.sql', 'unterminated.sql', 'nonsense.sql']) {
    const messages = byName.get(name)!.messages;
    assert.equal(messages.length, 1, `${name}: ${JSON.stringify(messages)}`);
    assert.equal(messages[0].fatal, true);
    assert.equal(messages[0].ruleId, null);
  }
  assert.ok(byName.get('real.sql')!.messages.some((m) => m.ruleId === 'pgq/no-session-tenant-setting'));
});

test('--version and --help', () => {
  const version = runCli(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+/);
  const help = runCli(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: pgq-audit/);
});
