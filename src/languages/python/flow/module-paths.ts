// Where a Python module of the project is: the project unit a file belongs
// to, and the file a `from <module> import ...` names. Apart from project.ts,
// which parses modules, so that the scan can follow a file's imports (its
// prefilter's second chance, src/scan/import-chance.ts) without loading the
// Python parser.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { pathExists } from '../../typescript/flow/modules.ts';

/** Files that mark the root of a Python project unit. */
export const UNIT_MARKERS = ['pyproject.toml', 'setup.cfg', 'setup.py', 'manage.py'];

const roots = new Map<string, string>();
/** Per folder: it holds a unit marker or .git (a unit's root). Asked once per folder, not once per file under it; as long-lived as `roots`. */
const marked = new Map<string, boolean>();

function isUnitRoot(dir: string): boolean {
  let known = marked.get(dir);
  if (known === undefined) {
    known = UNIT_MARKERS.some((m) => existsSync(join(dir, m))) || existsSync(join(dir, '.git'));
    marked.set(dir, known);
  }
  return known;
}

/** The project unit a file belongs to: the nearest folder with a marker, else the repository root, else the file's folder. */
export function projectRoot(file: string): string {
  return folderRoot(dirname(file));
}

/** projectRoot of a file in `start`. */
function folderRoot(start: string): string {
  const known = roots.get(start);
  if (known) return known;
  let dir = start;
  let found: string | undefined;
  for (let depth = 0; depth < 16; depth++) {
    if (isUnitRoot(dir)) {
      found = dir;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const root = found ?? start;
  roots.set(start, root);
  return root;
}

/** An absolute POSIX path with no `.`, `..` or empty segment and no trailing slash (not `/` itself): nothing for relative() to resolve. */
const PLAIN_ABSOLUTE = /^(?:\/(?!\.\.?(?:\/|$))[^/]+)+$/;

export function inside(root: string, path: string): boolean {
  if (sep === '/' && PLAIN_ABSOLUTE.test(root) && PLAIN_ABSOLUTE.test(path)) {
    // What relative() says of two such paths, without resolving each against the working folder (most of its
    // cost, asked for every candidate of every import): the rest of `path` after `root/`, else a `..` climb.
    return path.length > root.length + 1 && path[root.length] === '/' && path.startsWith(root) && !path.startsWith('..', root.length + 1);
  }
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
}

function candidates(base: string, parts: string[]): string[] {
  const path = join(base, ...parts);
  return parts.length === 0 ? [join(base, '__init__.py')] : [`${path}.py`, join(path, '__init__.py')];
}

/**
 * The file of `from <module> import ...` seen from `file`: relative imports
 * from the file's package, absolute ones from the project root, its src/
 * folder, or any folder between the file and the root.
 */
export function resolveModule(file: string, module: string, level: number): string | undefined {
  const { first, second } = candidatesFrom(dirname(file), module, level);
  const found = first.find((path) => path !== file && pathExists(path));
  if (found || !second) return found;
  return second.find((path) => path !== file && pathExists(path));
}

/**
 * Where resolveModule looks, in order, seen from a folder: `first`, the paths inside the project unit; `second`,
 * when the first find nothing, those of the folder's own top package (absolute imports only). Worked out from the
 * paths alone (and the unit's root and build config, themselves read once), so once per folder and module: every
 * file of a folder asks for the same modules. Whether each is there is asked anew (pathExists, once per scan).
 */
interface Candidates {
  first: readonly string[];
  second?: readonly string[];
}

const candidatesOf = new Map<string, Candidates>();

function candidatesFrom(folder: string, module: string, level: number): Candidates {
  const key = `${level}\0${module}\0${folder}`;
  let known = candidatesOf.get(key);
  if (known) return known;
  const root = folderRoot(folder);
  const parts = module ? module.split('.') : [];
  const tried: string[] = [];
  if (level > 0) {
    let base = folder;
    for (let k = 1; k < level; k++) base = dirname(base);
    tried.push(...candidates(base, parts));
  } else {
    for (let dir = folder; ; dir = dirname(dir)) {
      tried.push(...candidates(dir, parts));
      if (dir === root || !inside(root, dir) || dirname(dir) === dir) break;
    }
    tried.push(...candidates(join(root, 'src'), parts));
  }
  // `package-dir = {"app" = "."}`: the unit's root folder is the package `app` itself.
  const mapped = level === 0 ? packageDirs(root).get(parts[0]) : undefined;
  if (mapped !== undefined) tried.push(...candidates(join(root, mapped), parts.slice(1)));
  known = { first: tried.filter((path) => inside(root, path) || dirname(path) === root) };
  if (level === 0 && parts.length > 0) {
    // `from app.core.db import engine` in <base>/app/api/deps.py: the file's own top package, imported from
    // the folder above it (Python's path entry for it), with or without __init__.py files.
    const base = packageBase(folder, parts[0]);
    known.second = base ? candidates(base, parts).filter((path) => inside(base, path)) : [];
  }
  candidatesOf.set(key, known);
  return known;
}

const packageDirsOf = new Map<string, Map<string, string>>();

/**
 * The packages a unit's build config maps to folders of its own
 * (pyproject's `package-dir = {"app" = "."}`, setup.py's
 * `package_dir={"app": "."}`), by package name: the folder, relative to the
 * root. Only the unit's own declaration is read; no folder is guessed.
 */
function packageDirs(root: string): Map<string, string> {
  let dirs = packageDirsOf.get(root);
  if (dirs) return dirs;
  dirs = new Map();
  for (const name of ['pyproject.toml', 'setup.py', 'setup.cfg']) {
    const path = join(root, name);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    const table = /package[-_]dir\s*[=:]\s*\{([^}]*)\}/.exec(text)?.[1];
    for (const entry of table ? table.matchAll(/["']([A-Za-z_]\w*)["']\s*[=:]\s*["']([\w./-]*)["']/g) : []) {
      const dir = entry[2].replace(/^\.\/?$/, '').replace(/^\.\//, '');
      if (!dir.split('/').includes('..')) dirs.set(entry[1], dir);
    }
  }
  packageDirsOf.set(root, dirs);
  return dirs;
}

/** The folder above the folder's nearest ancestor (itself included) named `top`: where `import top.x` finds the file's own package. */
function packageBase(folder: string, top: string): string | undefined {
  let dir = folder;
  for (let depth = 0; depth < 16 && dirname(dir) !== dir; depth++, dir = dirname(dir)) {
    if (basename(dir) === top) return dirname(dir);
  }
  return undefined;
}

/** Forgets the project units found (tests that rewrite files). */
export function clearRoots(): void {
  roots.clear();
  packageDirsOf.clear();
  candidatesOf.clear();
  marked.clear();
}
