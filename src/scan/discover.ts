// Which files a scan reads: the given files, and under the given folders the
// files of a supported language that .gitignore does not exclude.
import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

export const ALWAYS_IGNORED = ['**/node_modules/**', '**/dist/**', '**/build/**', '**/out/**', '**/coverage/**', '**/.git/**'];
const ALWAYS_IGNORED_NAMES = new Set(['node_modules', 'dist', 'build', 'out', 'coverage', '.git']);

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface DiscoverOptions {
  extensions: readonly string[];
  /** Extra ignore globs (config `ignores`), relative to each scanned folder. */
  ignores?: readonly string[];
  cwd?: string;
}

export async function discoverFiles(paths: readonly string[], options: DiscoverOptions): Promise<string[]> {
  const cwd = options.cwd ?? process.cwd();
  const files = new Set<string>();
  const extensions = new Set(options.extensions.map((e) => e.toLowerCase()));
  const extra = options.ignores && options.ignores.length > 0 ? picomatch([...options.ignores], { dot: true }) : undefined;
  for (const input of paths) {
    const absolute = resolve(cwd, input);
    if (!existsSync(absolute)) throw new UsageError(`No such file or directory: ${input}`);
    const stats = statSync(absolute);
    if (stats.isFile()) {
      files.add(absolute); // named on the command line: scanned even if ignored, as ESLint does
      continue;
    }
    if (!stats.isDirectory()) continue; // a FIFO or a device named on the command line: nothing to read
    const above = ancestorGitignores(absolute).map((file) => ({ rules: loadGitignore(file), prefix: `${toPosix(relative(dirname(file), absolute))}/` }));
    walk(absolute, '', above.filter((g): g is Level => g.rules !== undefined), { extensions, extra, files });
  }
  return [...files].sort();
}

interface Level {
  rules: Ignore;
  /** Path from this .gitignore's folder to the folder being read, with a trailing slash ('' for its own). */
  prefix: string;
}

interface WalkState {
  extensions: ReadonlySet<string>;
  extra?: (path: string) => boolean;
  files: Set<string>;
}

/**
 * One synchronous pass over the tree (the fastest way Node lists many folders): skips
 * node_modules, dist, build, out, coverage and .git, symbolic links (a loop must not stall the scan), unreadable
 * folders, and what the .gitignore files of the folder and the folders above exclude. An
 * ignored folder is not entered (git does not look inside one either).
 */
function walk(dir: string, rel: string, levels: readonly Level[], state: WalkState): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable folders are skipped, not fatal
  }
  let here = levels;
  if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
    const rules = loadGitignore(join(dir, '.gitignore'));
    if (rules) here = [...levels, { rules, prefix: '' }];
  }
  const ignored = (name: string, directory: boolean) => {
    for (const level of here) {
      try {
        if (level.rules.ignores(`${level.prefix}${name}${directory ? '/' : ''}`)) return true;
      } catch {
        // a name the ignore package refuses as a relative path ('...'): not ignored
      }
    }
    return false;
  };
  for (const entry of entries) {
    const name = entry.name;
    if (entry.isDirectory()) {
      if (ALWAYS_IGNORED_NAMES.has(name) || ignored(name, true)) continue;
      walk(join(dir, name), `${rel}${name}/`, here.map((l) => ({ rules: l.rules, prefix: `${l.prefix}${name}/` })), state);
    } else if (entry.isFile()) {
      const dot = name.lastIndexOf('.');
      if (dot < 0 || !state.extensions.has(name.slice(dot).toLowerCase())) continue;
      if (ignored(name, false)) continue;
      if (state.extra?.(`${rel}${name}`)) continue;
      state.files.add(join(dir, name));
    }
  }
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

function loadGitignore(path: string): Ignore | undefined {
  try {
    return ignore().add(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** .gitignore files above `folder` up to the repository root. */
function ancestorGitignores(folder: string): string[] {
  const found: string[] = [];
  // A folder that is a repository root of its own is not ruled by the .gitignore files above it.
  if (existsSync(join(folder, '.git'))) return found;
  let dir = dirname(folder);
  for (;;) {
    const candidate = join(dir, '.gitignore');
    if (existsSync(candidate)) found.push(candidate);
    if (existsSync(join(dir, '.git')) || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  return found;
}
