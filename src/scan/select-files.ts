// Which of the discovered files a scan reports on: config `ignores` drop
// files from the project; --changed-since and --shard narrow the files that
// are reported, while every file of the project still lends its facts to
// cross-file rules (so a changed file is judged against the whole project).
import type * as ChildProcess from 'node:child_process';
import { nodeCrypto } from '../node-crypto.ts';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { globProblem } from '../config/globs.ts';
import { UsageError } from './discover.ts';

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

export interface FileSelection {
  /** Report only files changed since this git ref: since its merge base with HEAD, plus uncommitted and untracked files. */
  changedSince?: string;
  /** Report only the files of this shard, picked by a hash of the repository-relative path. */
  shard?: Shard;
  /** Globs of files to leave out of the project (config `ignores`), relative to `base`. */
  ignores?: { base: string; globs: readonly string[] };
}

export interface SelectedFiles {
  /** Files to analyse and report. */
  files: string[];
  /** Every file of the project after `ignores`: the ones cross-file rules read facts from. */
  all: string[];
}

export function selectFiles(discovered: readonly string[], selection: FileSelection = {}, cwd = process.cwd()): SelectedFiles {
  let all = [...discovered];
  if (selection.ignores && selection.ignores.globs.length > 0) {
    const { base, globs } = selection.ignores;
    for (const glob of globs) {
      const problem = globProblem(glob);
      if (problem) throw new UsageError(`ignores: ${problem}`);
    }
    const ignored = picomatch([...globs], { dot: true });
    all = all.filter((file) => {
      const rel = toPosix(relative(base, file));
      return rel.startsWith('../') || !ignored(rel);
    });
  }
  let files = all;
  if (selection.changedSince !== undefined || selection.shard) {
    const root = repositoryRoot(cwd);
    if (selection.changedSince !== undefined) {
      const changed = changedFiles(selection.changedSince, root ?? cwd);
      files = files.filter((file) => changed.has(real(file)));
    }
    const shard = selection.shard;
    if (shard) files = files.filter((file) => shardOf(toPosix(relative(root ?? real(cwd), real(file))), shard.count) === shard.index);
  }
  return { files, all };
}

/** `i/n` with 1 <= i <= n. */
export function parseShard(text: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count) {
    throw new UsageError(`--shard ${text}: expected <index>/<count> with 1 <= index <= count, e.g. --shard 1/4`);
  }
  return { index, count };
}

/**
 * The shard (1-based) of a repository-relative path: a hash, so a file stays
 * in its shard when others are added or removed (and code scanning alerts of
 * one shard's category do not move to another).
 */
export function shardOf(path: string, count: number): number {
  return (nodeCrypto().createHash('sha1').update(path).digest().readUInt32BE(0) % count) + 1;
}

/** The top folder of the git work tree holding `dir`, or undefined outside one (or without git). */
export function repositoryRoot(dir: string): string | undefined {
  try {
    return resolve(git(['rev-parse', '--show-toplevel'], dir).trim());
  } catch {
    return undefined;
  }
}

/** Absolute paths of files changed since `ref`'s merge base with HEAD, staged, unstaged or untracked. */
export function changedFiles(ref: string, cwd: string): Set<string> {
  const root = repositoryRoot(cwd);
  if (!root) throw new UsageError(`--changed-since ${ref}: ${cwd} is not inside a git work tree (or git is not installed)`);
  try {
    git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], root);
  } catch {
    throw new UsageError(`--changed-since ${ref}: git knows no commit '${ref}'. Name a branch, tag or commit (in CI, fetch it: actions/checkout with fetch-depth: 0)`);
  }
  let base: string;
  try {
    base = git(['merge-base', ref, 'HEAD'], root).trim();
  } catch {
    throw new UsageError(`--changed-since ${ref}: '${ref}' and HEAD have no common history here; in a shallow clone fetch more (actions/checkout with fetch-depth: 0)`);
  }
  const names = [
    ...git(['diff', '--name-only', '--no-renames', '-z', base], root).split('\0'),
    ...git(['ls-files', '--others', '--exclude-standard', '-z'], root).split('\0'),
  ];
  const changed = new Set<string>();
  for (const name of names) {
    if (!name) continue;
    const absolute = resolve(root, name);
    if (existsSync(absolute)) changed.add(real(absolute));
  }
  return changed;
}

// Loaded when git is first run: most scans never run it, and the module costs 3 ms to load.
let childProcess: typeof ChildProcess | undefined;

function git(args: string[], cwd: string): string {
  childProcess ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcess;
  return childProcess.execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
}

/** git reports real paths; a scan may have reached the file through a symlinked folder. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}
