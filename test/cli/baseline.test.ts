// --write-baseline records today's findings; --baseline reports only new
// ones, says how many known ones remain and which were fixed. Entries match
// by rule, file and a fingerprint of the finding's text, so inserting lines
// above a finding does not make it new.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { findingsByFile, parseJson, project } from './project.ts';

const JOBS = ["SET app.tenant = '1';", 'select 1;', "select set_config('app.tenant', $1, false);", ''].join('\n');
const POLICY = ['alter table invoices enable row level security;', "create policy p on invoices using (tenant_id = current_setting('app.tenant')::int);", ''].join('\n');

function adopt() {
  const dir = project({ 'db/jobs.sql': JOBS, 'db/policy.sql': POLICY, 'db/clean.sql': 'select 1;\n' });
  const before = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.equal(before.code, 1);
  const written = runCli(['scan', '.', '--write-baseline', '.pgq-baseline.json'], { cwd: dir });
  return { dir, before: parseJson(before.stdout), written };
}

test('--write-baseline records every finding by rule, file and fingerprint, reports none and exits 0', () => {
  const { dir, before, written } = adopt();
  assert.equal(written.code, 0, written.stderr);
  assert.equal(written.stdout, '');
  const total = before.reduce((n, r) => n + r.messages.length, 0);
  assert.match(written.stderr, new RegExp(`wrote ${total} findings to \\.pgq-baseline\\.json`));
  const baseline = JSON.parse(readFileSync(join(dir, '.pgq-baseline.json'), 'utf8'));
  assert.equal(baseline.version, 1);
  assert.equal(baseline.findings.length, total);
  for (const entry of baseline.findings) {
    assert.deepEqual(Object.keys(entry), ['rule', 'file', 'fingerprint', 'line', 'message']);
    assert.match(entry.file, /^db\/(jobs|policy)\.sql$/, 'relative to the baseline, forward slashes');
    assert.match(entry.fingerprint, /^[0-9a-f]{16}$/);
  }
  assert.deepEqual(baseline.findings.filter((e: { file: string }) => e.file === 'db/jobs.sql').map((e: { rule: string; line: number }) => `${e.rule}@${e.line}`), [
    'no-session-tenant-setting@1',
    'no-session-tenant-setting@3',
  ]);
});

test('--baseline: nothing new exits 0 and says how many known findings remain', () => {
  const { dir, before } = adopt();
  const total = before.reduce((n, r) => n + r.messages.length, 0);
  const run = runCli(['scan', '.', '--baseline', '.pgq-baseline.json', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(parseJson(run.stdout).every((r) => r.messages.length === 0 && r.errorCount === 0));
  assert.match(run.stderr, new RegExp(`baseline \\.pgq-baseline\\.json: ${total} known findings remain, 0 fixed\\.`));
});

test('the baseline survives inserting lines above a finding; a new finding is reported alone', () => {
  const { dir } = adopt();
  const path = join(dir, 'db/jobs.sql');
  writeFileSync(path, `-- a header someone added\n-- and another line\n\n${readFileSync(path, 'utf8')}`);
  const moved = runCli(['scan', '.', '--baseline', '.pgq-baseline.json', '--format', 'json'], { cwd: dir });
  assert.equal(moved.code, 0, `moved findings are still known: ${moved.stdout}`);
  assert.match(moved.stderr, /0 fixed/);

  // A second copy of a known line is one finding more than the baseline has: new.
  writeFileSync(path, `${readFileSync(path, 'utf8')}SET app.tenant = '1';\nSET app.current_tenant_id = '9';\n`);
  const added = runCli(['scan', '.', '--baseline', '.pgq-baseline.json', '--format', 'json'], { cwd: dir });
  assert.equal(added.code, 1);
  assert.deepEqual(findingsByFile(parseJson(added.stdout), dir)['db/jobs.sql'], ['pgq/no-session-tenant-setting@7', 'pgq/no-session-tenant-setting@8']);

  // Stylish shows the same two, and the counts go to stderr.
  const stylish = runCli(['scan', '.', '--baseline', '.pgq-baseline.json'], { cwd: dir });
  assert.equal(stylish.code, 1);
  assert.match(stylish.stdout, /✖ 2 problems \(2 errors, 0 warnings\)/);
  assert.match(stylish.stderr, /known findings remain, 0 fixed/);
});

test('fixed findings are listed, with the way to drop them from the baseline', () => {
  const { dir } = adopt();
  writeFileSync(join(dir, 'db/jobs.sql'), ["SET app.tenant = '1';", 'select 1;', "select set_config('app.tenant', $1, true);", ''].join('\n'));
  const run = runCli(['scan', '.', '--baseline', '.pgq-baseline.json', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /1 fixed\./);
  assert.match(run.stderr, /fixed: db\/jobs\.sql:3 {2}pgq\/no-session-tenant-setting {2}Session-level write of 'app\.tenant'/);
  assert.match(run.stderr, /pgq-audit scan --write-baseline \.pgq-baseline\.json/);
});

test('a narrower scan does not call the findings of unread files fixed', () => {
  const { dir } = adopt();
  const run = runCli(['scan', 'db/jobs.sql', '--baseline', '.pgq-baseline.json'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /2 known findings remain, 0 fixed\.\n {2}\d+ more known findings? in files this scan did not read/);
});

test('baseline usage errors exit 2', () => {
  const { dir } = adopt();
  const missing = runCli(['scan', '.', '--baseline', 'nope.json'], { cwd: dir });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--baseline nope\.json: no such file \(write one with --write-baseline nope\.json\)/);
  writeFileSync(join(dir, 'other.json'), '{"findings": 3}');
  const foreign = runCli(['scan', '.', '--baseline', 'other.json'], { cwd: dir });
  assert.equal(foreign.code, 2);
  assert.match(foreign.stderr, /not a pgq-audit baseline/);
  const both = runCli(['scan', '.', '--baseline', 'a.json', '--write-baseline', 'b.json'], { cwd: dir });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--write-baseline and --baseline: use one/);
  const partial = runCli(['scan', '.', '--write-baseline', 'b.json', '--shard', '1/2'], { cwd: dir });
  assert.equal(partial.code, 2);
  assert.match(partial.stderr, /--write-baseline records the findings of the whole project: drop --changed-since and --shard/);
});
