// Which files a scan reads: the given files, and under the given folders the
// files of a supported language that .gitignore does not exclude.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import fg from 'fast-glob';
import ignore, { type Ignore } from 'ignore';

export const ALWAYS_IGNORED = ['**/node_modules/**', '**/dist/**', '**/.git/**'];

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface DiscoverOptions {
  extensions: readonly string[];
  /** Extra ignore globs (config `ignores`), relative to `cwd`. */
  ignores?: readonly string[];
  cwd?: string;
}

export async function discoverFiles(paths: readonly string[], options: DiscoverOptions): Promise<string[]> {
  const cwd = options.cwd ?? process.cwd();
  const files = new Set<string>();
  const extensions = options.extensions.map((e) => e.slice(1));
  // A brace list of one item is literal in globs: `{sql}` matches nothing.
  const pattern = extensions.length === 1 ? `**/*.${extensions[0]}` : `**/*.{${extensions.join(',')}}`;
  for (const input of paths) {
    const absolute = resolve(cwd, input);
    if (!existsSync(absolute)) throw new UsageError(`No such file or directory: ${input}`);
    const stats = statSync(absolute);
    if (stats.isFile()) {
      files.add(absolute); // named on the command line: scanned even if ignored, as ESLint does
      continue;
    }
    // One walk finds both the files and the .gitignore files that may exclude them.
    const found = await fg([pattern, '**/.gitignore'], {
      cwd: absolute,
      absolute: true,
      dot: true,
      onlyFiles: true,
      followSymbolicLinks: false, // a symlink loop must not stall the scan
      suppressErrors: true, // unreadable folders are skipped, not fatal
      ignore: [...ALWAYS_IGNORED, ...(options.ignores ?? [])],
    });
    const gitignores = new Map<string, GitignoreFilter>();
    for (const file of ancestorGitignores(absolute)) gitignores.set(dirname(file), loadGitignore(file));
    for (const file of found) if (basename(file) === '.gitignore') gitignores.set(dirname(file), loadGitignore(file));
    for (const file of found) {
      if (basename(file) === '.gitignore') continue;
      if (!ignoredByAny(file, gitignores)) files.add(file);
    }
  }
  return [...files].sort();
}

/** Only the .gitignore files of the file's own folder and the folders above it apply to it. */
function ignoredByAny(file: string, gitignores: ReadonlyMap<string, GitignoreFilter>): boolean {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (gitignores.get(dir)?.ignores(file)) return true;
    if (dirname(dir) === dir) return false;
  }
}

interface GitignoreFilter {
  ignores(file: string): boolean;
}

function loadGitignore(path: string): GitignoreFilter {
  const base = dirname(path);
  let rules: Ignore;
  try {
    rules = ignore().add(readFileSync(path, 'utf8'));
  } catch {
    return { ignores: () => false };
  }
  return {
    ignores(file) {
      const rel = relative(base, file);
      if (rel.startsWith('..') || rel === '') return false;
      return rules.ignores(rel.split(sep).join('/'));
    },
  };
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
