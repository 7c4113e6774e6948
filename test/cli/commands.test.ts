// pgq-audit rules, pgq-audit explain, --output-file, usage errors, and the
// progress line a person sees on a terminal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { rules } from '../../rules/index.ts';
import { createProgress } from '../../src/cli/progress.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { analysisConfig, type FileAnalysis } from '../../src/scan/analysis.ts';
import type { WorkerTask } from '../../src/scan/worker.ts';
import { CHILD_TIMEOUT_MS, repoRoot, runCli } from '../helpers/cli.ts';
import { parseJson, project } from './project.ts';

test('rules lists every rule with its severity and one line', () => {
  const run = runCli(['rules'], { cwd: project({}) });
  assert.equal(run.code, 0, run.stderr);
  for (const rule of rules) {
    assert.match(run.stdout, new RegExp(`^pgq/${rule.id} +${rule.defaultSeverity} +${rule.description.replace(/[().]/g, '\\$&')}$`, 'm'));
  }
  assert.match(run.stdout, /^pgq\/invalid-suppression +error +Require a known rule id/m);
  assert.match(run.stdout, /^pgq\/unused-suppression +warn +/m);
  assert.match(run.stdout, /no config file found/);
});

test('rules shows the severities of the config; --format json for scripts', () => {
  const dir = project({ 'pgq-audit.config.json': JSON.stringify({ rules: { 'no-session-tenant-setting': 'off' }, reportUnusedSuppressions: 'error' }) });
  const text = runCli(['rules'], { cwd: dir });
  assert.match(text.stdout, /^pgq\/no-session-tenant-setting +off +/m);
  assert.match(text.stdout, /^pgq\/unused-suppression +error +/m);
  assert.match(text.stdout, /Severities: defaults and .*pgq-audit\.config\.json/);
  const json = runCli(['rules', '--format', 'json'], { cwd: dir });
  assert.equal(json.code, 0);
  const rows = JSON.parse(json.stdout);
  assert.deepEqual(rows.map((r: { id: string }) => r.id).slice(0, rules.length), rules.map((r) => `pgq/${r.id}`));
  const session = rows.find((r: { id: string }) => r.id === 'pgq/no-session-tenant-setting');
  assert.deepEqual([session.severity, session.defaultSeverity], ['off', 'error']);
  assert.match(session.docs, /docs\/rules\/no-session-tenant-setting\.md$/);
});

test('explain prints the doc page shipped in the package', () => {
  for (const id of [...rules.map((r) => r.id), 'invalid-suppression', 'unused-suppression']) {
    const run = runCli(['explain', id], { cwd: project({}) });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, readFileSync(join(repoRoot, 'docs/rules', `${id}.md`), 'utf8'));
  }
  const prefixed = runCli(['explain', 'pgq/no-tenant-policy-on-queue']);
  assert.match(prefixed.stdout, /^# pgq\/no-tenant-policy-on-queue\n/);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.ok(pkg.files.includes('docs'), 'docs/ is in the published files');
});

test('explain names an unknown rule and lists the valid ones', () => {
  const unknown = runCli(['explain', 'no-such-rule']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown rule 'no-such-rule'\. Valid rules: no-session-tenant-setting, .*unused-suppression/);
  const none = runCli(['explain']);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /explain takes one rule id/);
});

test('--output-file writes any format to a file (creating its folder) and nothing to stdout', () => {
  const dir = project({ 'a.sql': "SET app.tenant = '1';\n" });
  for (const format of ['stylish', 'json', 'github']) {
    const run = runCli(['scan', '.', '--format', format, '-o', `reports/${format}.out`], { cwd: dir });
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    const text = readFileSync(join(dir, `reports/${format}.out`), 'utf8');
    if (format === 'json') assert.equal(parseJson(text)[0].errorCount, 1);
    if (format === 'stylish') assert.match(text, /1:1 +error +Session-level write/);
    if (format === 'github') assert.match(text, /^::error file=a\.sql,line=1,col=1,/);
  }
  const unwritable = runCli(['scan', '.', '--output-file', 'a.sql/x.json'], { cwd: dir });
  assert.equal(unwritable.code, 2);
  assert.match(unwritable.stderr, /--output-file a\.sql\/x\.json: cannot write it/);
});

test('usage errors name the option or command and list the valid ones', () => {
  const option = runCli(['scan', '--fromat', 'json']);
  assert.equal(option.code, 2);
  assert.match(option.stderr, /Unknown option '--fromat'\. Valid options for scan: -f, --format, -o, --output-file, -c, --config, --rule/);
  const command = runCli(['lint']);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /Unknown command 'lint'\. Valid commands: scan, rules, explain/);
  const format = runCli(['scan', 'fixtures', '--format', 'xml']);
  assert.match(format.stderr, /--format xml: valid formats are stylish, json, sarif, github/);
  const help = runCli(['scan', '--help']);
  assert.equal(help.code, 0);
  for (const flag of ['--output-file', '--config', '--baseline', '--write-baseline', '--changed-since', '--shard', '--no-code-frame']) assert.ok(help.stdout.includes(flag), flag);
});

test('the progress line: drawn after the delay, throttled, cleared at the end', () => {
  let clock = 0;
  const writes: string[] = [];
  const progress = createProgress({ write: (t) => writes.push(t), cwd: '/repo', columns: 40, delayMs: 2000, now: () => clock });
  progress.update({ done: 1, total: 3, file: '/repo/db/a.sql' });
  assert.deepEqual(writes, [], 'nothing in the first 2 s');
  clock = 2500;
  progress.update({ done: 2, total: 3, file: '/repo/db/very/deep/folder/name/b.sql' });
  clock = 2550;
  progress.update({ done: 2, total: 3, file: '/repo/db/c.sql' });
  clock = 2560;
  progress.update({ done: 3, total: 3, file: '/repo/db/c.sql' });
  progress.finish();
  assert.deepEqual(writes, [
    '\r\u001b[2Kpgq-audit: 2/3 files  db/very/deep/fol…', // 39 columns
    '\r\u001b[2Kpgq-audit: 3/3 files  db',
    '\r\u001b[2K',
  ]);
  const quiet: string[] = [];
  const fast = createProgress({ write: (t) => quiet.push(t), cwd: '/', now: () => 0 });
  fast.update({ done: 1, total: 1, file: '/a.sql' });
  fast.finish();
  assert.deepEqual(quiet, [], 'a fast scan draws and clears nothing');
});

/** Runs the CLI on a pseudo-terminal (util-linux `script`): stdout and stderr both reach it. */
function onTerminal(args: string[], cwd: string): string {
  const command = [process.execPath, join(repoRoot, 'bin/pgq-audit.js'), ...args].map((a) => `'${a}'`).join(' ');
  const result = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', PGQ_AUDIT_PROGRESS_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: CHILD_TIMEOUT_MS,
  });
  // util-linux `script` is part of every Debian system (bsdutils is essential): its absence is a failure, not a skip.
  assert.equal(result.error, undefined, `script -qec failed: ${result.error?.message}`);
  return result.stdout;
}

test('on a terminal, stylish scans show the progress line on stderr; json, sarif and github never do', () => {
  const dir = project({ 'db/a.sql': "SET app.tenant = '1';\n", 'db/b.sql': 'select 1;\n' });
  const stylish = onTerminal(['scan', '.'], dir);
  assert.match(stylish, /\r\u001b\[2Kpgq-audit: 1\/2 files {2}db/);
  assert.match(stylish, /pgq-audit: 2\/2 files {2}db\r\u001b\[2K/, 'cleared before the report');
  assert.match(stylish, /Session-level write/);
  for (const format of ['json', 'sarif', 'github']) {
    const out = onTerminal(['scan', '.', '--format', format], dir);
    assert.doesNotMatch(out, /files {2}db|\u001b\[2K/, format);
    assert.match(out, /Session-level write/, `${format} output is there`);
  }
  assert.match(stylish, /> 1 \| SET app\.tenant = '1';/, 'a code frame under the finding');
  const frameless = onTerminal(['scan', '.', '--no-code-frame'], dir);
  assert.match(frameless, /Session-level write/);
  assert.doesNotMatch(frameless, /\| SET app\.tenant/, '--no-code-frame draws none');
  // Not a terminal: nothing on stderr.
  const piped = runCli(['scan', '.'], { cwd: dir, env: { PGQ_AUDIT_PROGRESS_DELAY_MS: '0' } });
  assert.equal(piped.stderr, '');
  assert.ok(existsSync(join(dir, 'db/a.sql')));
});

test('the bundled CLI carries its worker next to the code that starts it, and that worker analyses a batch', async () => {
  // The pool starts new URL('./worker.js', <its own module>): in the bundle, every chunk is in dist/cli.
  const bundle = join(repoRoot, 'dist/cli');
  const pool = readdirSync(bundle).filter((name) => readFileSync(join(bundle, name), 'utf8').includes('"./worker.js"'));
  assert.ok(pool.length > 0, 'a chunk of dist/cli starts ./worker.js');
  const { default: runTask } = (await import(pathToFileURL(join(bundle, 'worker.js')).href)) as { default: (task: WorkerTask) => FileAnalysis[] };
  const config = analysisConfig(activeRules(), rules);
  const [analysis] = runTask({ kind: 'analyze', files: [{ file: '/tmp/leak.sql', text: "select set_config('app.tenant', $1, false);\n" }], config });
  assert.deepEqual(analysis.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
});
