// The pre-commit hook (.pre-commit-hooks.yaml) and the option it runs:
// pre-commit names the staged files after the entry; only they are reported,
// and the cross-file facts still come from the whole project unit.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { supportedExtensions } from '../../src/languages/extensions.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { findingsByFile, git, parseJson, project } from './project.ts';

/** The hooks file's one hook, read line by line: `key: value`, `[a, b]` lists, true/false. */
function hook(): Record<string, unknown> {
  const text = readFileSync(join(repoRoot, '.pre-commit-hooks.yaml'), 'utf8');
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
  assert.equal(lines.filter((line) => line.startsWith('- ')).length, 1, 'one hook');
  const fields: Record<string, unknown> = {};
  for (const line of lines) {
    const match = /^(?:- | {2})(\w+): (.*)$/.exec(line);
    assert.ok(match, `a key: value line of the hook: ${line}`);
    const [, key, raw] = match;
    fields[key] = raw.startsWith('[') ? raw.slice(1, -1).split(',').map((s) => s.trim()) : raw === 'true' ? true : raw;
  }
  return fields;
}

test('the hook: id pgq-audit, a node hook running the scan once over the staged TS/JS, Python and SQL files', () => {
  const fields = hook();
  assert.equal(fields.id, 'pgq-audit');
  assert.equal(fields.language, 'node');
  assert.equal(fields.entry, 'pgq-audit scan --project-facts');
  assert.equal(fields.require_serial, true);
  // `pgq-audit` is on the PATH of the environment pre-commit installs the package into.
  assert.equal(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).bin['pgq-audit'], 'bin/pgq-audit.js');
  // pre-commit matches `files` with Python's re.search; this one is plain enough for JS's.
  const files = new RegExp(String(fields.files));
  for (const extension of supportedExtensions()) assert.ok(files.test(`src/job${extension}`), extension);
  for (const other of ['README.md', 'package.json', 'src/job.ts.orig', 'schema.sqlite']) assert.ok(!files.test(other), other);
});

/** What pre-commit runs: the entry, then the staged files its `files` pattern matches. */
function runHook(dir: string, extra: string[] = []) {
  const files = new RegExp(String(hook().files));
  const staged = git(dir, 'diff', '--cached', '--name-only').split('\n').filter((name) => files.test(name));
  const [command, ...args] = String(hook().entry).split(' ');
  assert.equal(command, 'pgq-audit');
  return { staged, run: runCli([...args, ...extra, ...staged], { cwd: dir }) };
}

function repository(fixture: string): string {
  const dir = project({});
  cpSync(join(repoRoot, 'fixtures/projects', fixture), dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "name": "app", "version": "1.0.0" }\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'start');
  return dir;
}

test('a staged claim whose heartbeat and dead sweep are in files not staged: no finding', () => {
  const dir = repository('lease-mixed-good');
  writeFileSync(join(dir, 'src/queue.ts'), `${readFileSync(join(dir, 'src/queue.ts'), 'utf8')}// touched\n`);
  git(dir, 'add', 'src/queue.ts');
  const { staged, run } = runHook(dir, ['--format', 'json']);
  assert.deepEqual(staged, ['src/queue.ts']);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(findingsByFile(parseJson(run.stdout), dir), { 'src/queue.ts': [] });
  // Without the project's facts the same file looks unguarded: what the option is for.
  const alone = runCli(['scan', '--format', 'json', 'src/queue.ts'], { cwd: dir });
  assert.equal(alone.code, 1);
  assert.deepEqual(findingsByFile(parseJson(alone.stdout), dir), { 'src/queue.ts': ['pgq/require-lease-heartbeat@12', 'pgq/require-dead-sweep@18'] });
});

test('only the staged files are reported, with what the project around them shows', () => {
  const dir = repository('lease-mixed-bad');
  const whole = parseJson(runCli(['scan', '.', '--format', 'json'], { cwd: dir }).stdout);
  const everywhere = findingsByFile(whole, dir);
  assert.ok(Object.entries(everywhere).some(([file, found]) => file !== 'src/queue.ts' && found.length > 0), 'other files have findings too');
  writeFileSync(join(dir, 'src/queue.ts'), `${readFileSync(join(dir, 'src/queue.ts'), 'utf8')}// touched\n`);
  writeFileSync(join(dir, 'notes.md'), 'not scanned\n');
  git(dir, 'add', 'src/queue.ts', 'notes.md');
  const { staged, run } = runHook(dir, ['--format', 'json']);
  assert.deepEqual(staged, ['src/queue.ts']);
  assert.equal(run.code, 1, run.stderr);
  const reported = parseJson(run.stdout);
  assert.deepEqual(findingsByFile(reported, dir), { 'src/queue.ts': everywhere['src/queue.ts'] });
  assert.match(reported[0].messages[0].message, /worker\.py:11/, 'a fact from a file that is not staged');
});

test('--project-facts with --write-baseline is refused: a baseline is of the whole project', () => {
  const run = runCli(['scan', '--project-facts', '--write-baseline', 'b.json', 'x.sql'], { cwd: project({ 'x.sql': 'select 1;\n' }) });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--write-baseline records the findings of the whole project: drop --project-facts$/m);
});
