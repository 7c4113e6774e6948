// --changed-since <git-ref> and --shard i/n: which files a scan reports.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { selectFiles, shardOf } from '../../src/scan/select-files.ts';
import { runCli } from '../helpers/cli.ts';
import { git, parseJson, project, writeFiles } from './project.ts';

const LEAK = "SET app.tenant = '1';\n";

function repository() {
  const dir = project({ 'db/a.sql': LEAK, 'db/b.sql': LEAK, 'db/c.sql': 'select 1;\n', 'db/gone.sql': LEAK, 'notes.txt': 'x\n' });
  git(dir, 'init', '-q');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'base');
  git(dir, 'checkout', '-q', '-b', 'feature');
  return dir;
}

const reported = (stdout: string, dir: string) => parseJson(stdout).map((r) => r.filePath.slice(dir.length + 1));

test('--changed-since reports only files changed since the merge base: committed, staged, unstaged and untracked', () => {
  const dir = repository();
  writeFiles(dir, { 'db/b.sql': `${LEAK}select 2;\n` });
  git(dir, 'commit', '-q', '-am', 'change b');
  writeFiles(dir, { 'db/c.sql': LEAK, 'db/new.sql': LEAK, 'db/staged.sql': LEAK });
  git(dir, 'add', 'db/staged.sql');
  rmSync(join(dir, 'db/gone.sql'));
  // A commit on main after the branch point is not this branch's change.
  git(dir, 'checkout', '-q', 'main');
  git(dir, 'stash', '-q', '-u');
  writeFiles(dir, { 'db/a.sql': `${LEAK}select 3;\n` });
  git(dir, 'commit', '-q', '-am', 'main moves on');
  git(dir, 'checkout', '-q', 'feature');
  git(dir, 'stash', 'pop', '-q');

  const run = runCli(['scan', '.', '--changed-since', 'main', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  assert.deepEqual(reported(run.stdout, dir), ['db/b.sql', 'db/c.sql', 'db/new.sql', 'db/staged.sql']);

  const sub = runCli(['scan', '.', '--changed-since', 'main', '--format', 'json'], { cwd: join(dir, 'db') });
  assert.deepEqual(reported(sub.stdout, dir), ['db/b.sql', 'db/c.sql', 'db/new.sql', 'db/staged.sql'], 'from a subfolder too');
});

test('--changed-since with nothing changed reports nothing and exits 0', () => {
  const dir = repository();
  const run = runCli(['scan', '.', '--changed-since', 'main', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), []);
  assert.match(run.stderr, /no files to scan changed since main/);
});

test('--changed-since names a bad ref, or a folder outside git', () => {
  const dir = repository();
  const bad = runCli(['scan', '.', '--changed-since', 'no-such-branch'], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--changed-since no-such-branch: git knows no commit 'no-such-branch'.*fetch-depth: 0/);
  const outside = project({ 'a.sql': LEAK });
  const none = runCli(['scan', '.', '--changed-since', 'main'], { cwd: outside });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--changed-since main: .* is not inside a git work tree/);
});

test('--shard i/n splits the files into disjoint shards by path, the same on every run', () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 24; i++) files[`db/f${String(i).padStart(2, '0')}.sql`] = LEAK;
  const dir = project(files);
  git(dir, 'init', '-q');
  const shards = [1, 2, 3].map((i) => {
    const run = runCli(['scan', '.', '--shard', `${i}/3`, '--format', 'json'], { cwd: dir });
    assert.ok(run.code === 0 || run.code === 1, run.stderr);
    return reported(run.stdout, dir);
  });
  const all = shards.flat();
  assert.deepEqual([...all].sort(), Object.keys(files).sort(), 'every file in exactly one shard');
  assert.equal(new Set(all).size, all.length);
  assert.ok(shards.every((s) => s.length > 0), `no empty shard among ${shards.map((s) => s.length)}`);
  for (const [i, shard] of shards.entries()) for (const file of shard) assert.equal(shardOf(file, 3), i + 1);
  // Run from a subfolder: the shard of a file is still decided by its repository path.
  const again = runCli(['scan', '.', '--shard', '2/3', '--format', 'json'], { cwd: join(dir, 'db') });
  assert.deepEqual(reported(again.stdout, dir), shards[1]);
  // Adding a file moves no other file to another shard.
  writeFileSync(join(dir, 'db/zz-new.sql'), LEAK);
  const after = runCli(['scan', '.', '--shard', '2/3', '--format', 'json'], { cwd: dir });
  assert.deepEqual(reported(after.stdout, dir).filter((f) => f !== 'db/zz-new.sql'), shards[1]);
});

test('--shard names what it expects', () => {
  const dir = project({ 'a.sql': LEAK });
  for (const value of ['0/3', '4/3', '1', 'a/b', '1/0']) {
    const run = runCli(['scan', '.', '--shard', value], { cwd: dir });
    assert.equal(run.code, 2, value);
    assert.match(run.stderr, new RegExp(`--shard ${value}: expected <index>/<count> with 1 <= index <= count`));
  }
});

test('the selection narrows what is reported; every file of the project stays available for cross-file facts', () => {
  const dir = repository();
  const files = ['db/a.sql', 'db/b.sql', 'db/c.sql'].map((f) => join(dir, f));
  const selected = selectFiles(files, { shard: { index: 1, count: 2 } }, dir);
  assert.deepEqual(selected.all, files);
  assert.ok(selected.files.every((f) => files.includes(f)));
  const ignored = selectFiles(files, { ignores: { base: join(dir, 'db'), globs: ['b.sql'] } }, dir);
  assert.deepEqual(ignored.all, [files[0], files[2]], 'ignored files leave the project entirely');
});
