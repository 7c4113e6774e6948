// The project's own modules a TS/JS file imports: where a specifier leads
// (relative paths, tsconfig/jsconfig `paths`), bounded to the importing file's
// project unit (the folder of its nearest package.json) and never into
// node_modules. The front end reads what such a module exports (a pool made
// in `db/pool.ts`, `export const db = drizzle(pool)`) by analysing it the same
// way; each module is read and parsed once per process while its size and
// time stay the same, whatever the depth it is imported at, and walked only
// when a file asks what one of its names holds (flow/file.ts): once for all
// the depths from its freeDepth on, where the depth left no longer cuts any
// chain of its imports. While a scan runs (beginScan), the stats and the
// resolutions it makes are kept, and go with the scan. The ESLint plugin,
// which is given one file and runs as long as the editor, resolves the same
// way with nothing kept but the cache checked against each file's stat.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { existsSync, statSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import { decodeText, readConfigText, readRegularFile } from '../../../read-file.ts';
import { stringValue, unwrap, type Node } from '../syntax.ts';
import { scanGeneration } from '../../../scan-generation.ts';

/** How deep a chain of imports is followed (worker -> db/index -> db/pool -> ...). */
export const MAX_IMPORT_DEPTH = 4;
/** Modules larger than this are not read for their exports. */
export const MAX_MODULE_BYTES = 256 * 1024;
/** At most this many modules are read for one file's model. */
export const MAX_MODULES_PER_FILE = 24;

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** TypeScript's ESM convention: `import './pool.js'` names the source `pool.ts`. */
const SOURCE_FOR: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };

/** A regular file's size and time, as one stat gave them. */
interface FileStat {
  size: number;
  mtimeMs: number;
}

/**
 * While a scan runs (beginScan), what each stat said, by path (null: no regular file there): the
 * scan asks about the same candidates of the same specifiers from every file, and about each
 * imported module each time a file reads it. Outside a scan (the ESLint plugin, which lives as
 * long as the editor), every question is a stat.
 */
let scanStats: Map<string, FileStat | null> | undefined;
/** While a scan runs, where each specifier leads from each folder (null: to no project module). */
let scanResolutions: Map<string, string | null> | undefined;
/** While a scan runs, whether each path is there (the Python front end's module candidates: pathExists). */
let scanExists: Map<string, boolean> | undefined;
let openScans = 0;

/**
 * Opens a scan's scope (stats and resolutions memoised) and returns its end. Scans that overlap share one scope, ended with the last of them.
 */
export function beginScan(): () => void {
  if (openScans++ === 0) {
    scanStats = new Map();
    scanResolutions = new Map();
    scanExists = new Map();
  }
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    if (--openScans > 0) return;
    scanStats = undefined;
    scanResolutions = undefined;
    scanExists = undefined;
  };
}

/**
 * Whether anything is at `path` (existsSync), asked once per scan: the Python front end looks for the
 * same candidates of the same modules from every file that imports them. Outside a scan, every time.
 */
export function pathExists(path: string): boolean {
  let found = scanExists?.get(path);
  if (found === undefined) {
    found = existsSync(path);
    scanExists?.set(path, found);
  }
  return found;
}

/** A regular file's size and time (undefined: none there), stat'ed once per scan (see fileStat). */
export function regularFileStat(path: string): Readonly<FileStat> | undefined {
  return fileStat(path);
}

/** Without an error for a missing file: most candidates of a specifier are missing, and an error costs ten times the stat. */
function fileStat(path: string): FileStat | undefined {
  const memo = scanStats?.get(path);
  if (memo !== undefined) return memo ?? undefined;
  let found: FileStat | null = null;
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats?.isFile()) found = { size: stats.size, mtimeMs: stats.mtimeMs };
  } catch {
    found = null;
  }
  scanStats?.set(path, found);
  return found ?? undefined;
}

function isFile(path: string): boolean {
  return fileStat(path) !== undefined;
}

const unitRoots = new Map<string, string>();

/** The folder of the nearest package.json above `file` (the project unit), or the filesystem root. */
export function unitRoot(file: string): string {
  const start = dirname(resolve(file));
  const cached = unitRoots.get(start);
  if (cached !== undefined) return cached;
  let dir = start;
  let root = dir;
  for (let depth = 0; depth < 32; depth++) {
    if (isFile(join(dir, 'package.json'))) {
      root = dir;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      root = dir;
      break;
    }
    dir = parent;
  }
  unitRoots.set(start, root);
  return root;
}

interface PathsConfig {
  base: string;
  /** baseUrl is set: bare specifiers may name files under it. */
  explicitBase: boolean;
  paths: [pattern: string, targets: string[]][];
}

const pathsConfigs = new Map<string, PathsConfig | null>();

/** JSON with comments and trailing commas, as tsconfig.json allows. */
function parseJsonc(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 2;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
}

/** `compilerOptions.paths` of the nearest tsconfig.json / jsconfig.json between `file` and its unit root. */
function pathsConfigFor(file: string): PathsConfig | undefined {
  const root = unitRoot(file);
  let dir = dirname(resolve(file));
  for (let depth = 0; depth < 32; depth++) {
    let found = pathsConfigs.get(dir);
    if (found === undefined) {
      found = null;
      for (const name of ['tsconfig.json', 'jsconfig.json']) {
        const path = join(dir, name);
        if (!isFile(path)) continue;
        try {
          const options = (parseJsonc(readConfigText(path)) as { compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> } }).compilerOptions ?? {};
          const base = resolve(dir, options.baseUrl ?? '.');
          const paths = Object.entries(options.paths ?? {}).filter((e): e is [string, string[]] => Array.isArray(e[1]));
          found = { base, paths, explicitBase: options.baseUrl !== undefined };
        } catch {
          found = null;
        }
        break;
      }
      pathsConfigs.set(dir, found);
    }
    if (found) return found;
    if (dir === root || dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
  return undefined;
}

function withExtension(base: string): string | undefined {
  if (EXTENSIONS.includes(extname(base)) && isFile(base)) return base;
  const ext = extname(base);
  for (const source of SOURCE_FOR[ext] ?? []) {
    const candidate = base.slice(0, -ext.length) + source;
    if (isFile(candidate)) return candidate;
  }
  for (const e of EXTENSIONS) if (isFile(base + e)) return base + e;
  for (const e of EXTENSIONS) if (isFile(join(base, `index${e}`))) return join(base, `index${e}`);
  return undefined;
}

/**
 * The file a specifier of `fromFile` names, when it is a module of the same
 * project unit: `./pool`, `../db/index.js`, `@/lib/db` through the paths (or
 * the baseUrl) of the nearest tsconfig.json, `#db` through package.json
 * "imports". Undefined for packages and for anything outside the unit.
 */
export function resolveProjectModule(fromFile: string, specifier: string): string | undefined {
  if (!isAbsolute(fromFile) || specifier.startsWith('node:')) return undefined;
  // What follows reads the importing file's folder only: every file of a folder asks the same.
  const key = scanResolutions ? `${dirname(fromFile)}\u0000${specifier}` : undefined;
  const memo = key === undefined ? undefined : scanResolutions!.get(key);
  if (memo !== undefined) return memo ?? undefined;
  const found = resolveUncached(fromFile, specifier);
  if (key !== undefined) scanResolutions?.set(key, found ?? null);
  return found;
}

function resolveUncached(fromFile: string, specifier: string): string | undefined {
  const root = unitRoot(fromFile);
  let found: string | undefined;
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    found = withExtension(resolve(dirname(fromFile), specifier));
  } else if (specifier.startsWith('#')) {
    found = packageImport(root, specifier);
  } else {
    const config = pathsConfigFor(fromFile);
    for (const [pattern, targets] of config?.paths ?? []) {
      const star = pattern.indexOf('*');
      const matches = star < 0 ? specifier === pattern : specifier.startsWith(pattern.slice(0, star)) && specifier.endsWith(pattern.slice(star + 1)) && specifier.length >= pattern.length - 1;
      if (!matches) continue;
      const rest = star < 0 ? '' : specifier.slice(star, specifier.length - (pattern.length - star - 1));
      for (const target of targets) {
        found = withExtension(resolve(config!.base, target.replace('*', rest)));
        if (found) break;
      }
      if (found) break;
    }
    if (!found && config?.explicitBase) found = withExtension(resolve(config.base, specifier));
    // SvelteKit's `$lib` alias: src/lib by default, declared in a tsconfig that `svelte-kit sync` generates and projects do not commit.
    if (!found && /^\$lib(\/|$)/.test(specifier)) found = svelteLib(fromFile, root, specifier.slice(5));
  }
  if (!found) return undefined;
  const inside = found.startsWith(root.endsWith(sep) ? root : root + sep);
  if (!inside || found.split(sep).includes('node_modules') || /\.d\.[cm]?ts$/.test(found)) return undefined;
  return found;
}

/** `$lib/<rest>`: src/lib of the nearest folder above the importing file that has one, up to the unit root. */
function svelteLib(fromFile: string, root: string, rest: string): string | undefined {
  let dir = dirname(resolve(fromFile));
  for (let depth = 0; depth < 32; depth++) {
    const found = withExtension(join(dir, 'src', 'lib', rest));
    if (found || dir === root || dirname(dir) === dir) return found;
    dir = dirname(dir);
  }
  return undefined;
}

/** package.json "imports" of the unit: `"#db": "./src/db.js"`, `"#lib/*": "./src/lib/*.js"` (string targets, or their "default"). */
function packageImport(root: string, specifier: string): string | undefined {
  let imports: Record<string, unknown> | undefined;
  try {
    imports = (JSON.parse(readConfigText(join(root, 'package.json'))) as { imports?: Record<string, unknown> }).imports;
  } catch {
    return undefined;
  }
  for (const [pattern, raw] of Object.entries(imports ?? {})) {
    const target = typeof raw === 'string' ? raw : typeof (raw as { default?: unknown })?.default === 'string' ? (raw as { default: string }).default : undefined;
    if (!target) continue;
    const star = pattern.indexOf('*');
    if (star < 0 ? pattern !== specifier : !(specifier.startsWith(pattern.slice(0, star)) && specifier.endsWith(pattern.slice(star + 1)))) continue;
    const rest = star < 0 ? '' : specifier.slice(star, specifier.length - (pattern.length - star - 1));
    return withExtension(resolve(root, target.replace('*', rest)));
  }
  return undefined;
}

/**
 * How many imported modules this process parsed for what they export, and how many files it
 * analysed on the parse of an import instead of parsing them again (the bench reads both); how
 * many times a module's reading made at one depth served another (freeDepth), walked once; how
 * many readings of imported modules were walked (a reading asked only what its syntax says is not).
 */
export const moduleParses = { count: 0, reused: 0, shared: 0, walks: 0 };

interface CacheEntry<T> {
  size: number;
  mtimeMs: number;
  value: T | undefined;
  /**
   * The scan it was read in (scan-generation.ts): a reading also rests on other files than its own (the
   * values every caller in the project passes), so a later scan in the same process reads it again.
   * An ESLint session runs no scan: there it stays 0.
   */
  generation: number;
}

/**
 * A per-process cache of each imported module (its parse), keyed by path and
 * checked against the file's size and time. `build` runs at most once per
 * version of a file.
 */
export class ModuleCache<T> {
  private readonly entries = new Map<string, CacheEntry<T>>();
  private readonly building = new Set<string>();

  /** What `get` would give without building: the entry of the file as it is now, if there is one. */
  peek(path: string): T | undefined {
    return this.known(path)?.value;
  }

  /** The entry of the file as it is now (its value undefined where it did not parse or is too large), or undefined if it was not read. */
  known(path: string): { value: T | undefined } | undefined {
    const cached = this.entries.get(path);
    if (!cached) return undefined;
    const stats = fileStat(path);
    return stats && cached.generation === scanGeneration() && cached.size === stats.size && cached.mtimeMs === stats.mtimeMs ? cached : undefined;
  }

  /**
   * Enters a value built elsewhere (a scanned file's own parse and reading) for the file as it is
   * now, where none is cached yet and the file is small enough that `get` would read it; says
   * whether it did. Only while a scan runs: outside one, nothing is kept for later files.
   */
  offer(path: string, value: T): boolean {
    if (!scanStats || this.entries.has(path)) return false;
    const stats = fileStat(path);
    if (!stats || stats.size > MAX_MODULE_BYTES) return false;
    this.entries.set(path, { size: stats.size, mtimeMs: stats.mtimeMs, value, generation: scanGeneration() });
    return true;
  }

  /** Drops what `offer` entered for `path`, if it is still that value: the file is read again when asked. */
  withdraw(path: string, value: T): void {
    if (this.entries.get(path)?.value === value) this.entries.delete(path);
  }

  get(path: string, build: (text: string) => T | undefined): T | undefined {
    const stats = fileStat(path);
    if (!stats) return undefined;
    const { size, mtimeMs } = stats;
    const id = path;
    const cached = this.entries.get(id);
    if (cached && cached.generation === scanGeneration() && cached.size === size && cached.mtimeMs === mtimeMs) return cached.value;
    if (size > MAX_MODULE_BYTES) {
      this.entries.set(id, { size, mtimeMs, value: undefined, generation: scanGeneration() });
      return undefined;
    }
    if (this.building.has(id)) return undefined;
    this.building.add(id);
    let value: T | undefined;
    moduleParses.count++;
    try {
      value = build(decodeText(readRegularFile(path, MAX_MODULE_BYTES)));
    } catch {
      value = undefined;
    } finally {
      this.building.delete(id);
    }
    this.entries.set(id, { size, mtimeMs, value, generation: scanGeneration() });
    return value;
  }
}

/** Past any depth a file is read at: a module that reaches a cycle of imports, or reads more modules than one file may. */
export const NEVER_FREE = Number.POSITIVE_INFINITY;

/**
 * Every specifier a module's reading may follow (flow/file.ts `module`, flow/exports.ts): its
 * imports and `import x = require()`, top-level `require()` declarations, and the sources of its
 * re-exports. A superset does no harm (a package resolves to no project module).
 */
export function moduleSpecifiers(program: TSESTree.Program): string[] {
  const out: string[] = [];
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration' || ((statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportAllDeclaration') && statement.source)) {
      out.push(String(statement.source!.value));
    } else if (statement.type === 'TSImportEqualsDeclaration' && statement.moduleReference.type === 'TSExternalModuleReference') {
      out.push(String((statement.moduleReference.expression as TSESTree.StringLiteral).value));
    } else if (statement.type === 'VariableDeclaration') {
      // As readImports reads them (flow/imports.ts).
      for (const d of statement.declarations) {
        const init = unwrap(d.init);
        if (init?.type !== 'CallExpression' || init.callee.type !== 'Identifier' || init.callee.name !== 'require') continue;
        const specifier = stringValue(init.arguments[0] as Node);
        if (specifier) out.push(specifier);
      }
    }
  }
  return out;
}

/** Where each specifier of a module leads (undefined: to no project module). */
export type Resolutions = Map<string, string | undefined>;

/** resolveProjectModule, once per specifier of the module `fromFile` as `resolved` holds it. */
export function resolveFrom(fromFile: string, specifier: string, resolved: Resolutions): string | undefined {
  let path = resolved.get(specifier);
  if (path === undefined && !resolved.has(specifier)) {
    path = resolveProjectModule(fromFile, specifier);
    resolved.set(specifier, path);
  }
  return path;
}

export interface DepthFree {
  program: TSESTree.Program;
  resolved: Resolutions;
  /** The project modules its specifiers lead to, once read. */
  targets?: string[];
  /** freeDepth, once known. */
  free?: number;
}

/**
 * The least import depth from which a module reads the same whatever the depth: 0 when no
 * specifier of it leads to a project module, else one more than the most of the modules it
 * leads to (NEVER_FREE through a cycle or past MAX_MODULES_PER_FILE modules). A module read at
 * that depth or deeper follows every import to its end, so one reading of it serves them all.
 * Undefined while a module it leads to has not been read yet (nothing is parsed to find out).
 */
export function freeDepth<T extends DepthFree>(cache: ModuleCache<T>, path: string, module: T, visiting = new Set<string>()): number | undefined {
  if (module.free !== undefined) return module.free;
  if (visiting.has(path)) return NEVER_FREE;
  if (!module.targets) {
    const targets = new Set<string>();
    for (const specifier of moduleSpecifiers(module.program)) {
      const target = resolveFrom(path, specifier, module.resolved);
      if (target && target !== path) targets.add(target);
    }
    module.targets = [...targets];
  }
  const targets = module.targets;
  if (targets.length > MAX_MODULES_PER_FILE) return (module.free = NEVER_FREE);
  visiting.add(path);
  let free = 0;
  for (const target of targets) {
    const entry = cache.known(target);
    const below = entry === undefined ? undefined : entry.value === undefined ? 0 : freeDepth(cache, target, entry.value, visiting);
    if (below === undefined) {
      visiting.delete(path);
      return undefined;
    }
    free = Math.max(free, below + 1);
  }
  visiting.delete(path);
  module.free = free;
  return free;
}
