// Project units: the files a cross-file rule judges together. A claim in one
// service and a heartbeat in another are facts about two different queues,
// so the project pass runs once per unit (src/engine/project-pass.ts).
//
// A file's unit depends on the file and the folders above it only, never on
// which paths a scan was given: scanning a parent folder gives each unit
// exactly the findings it gets alone.
//
// 1. The config that governs the file (--config, else the nearest
//    pgq-audit.config.json or package.json "pgqAudit" at or above it) may list
//    `units`: the first entry that matches decides — the outermost matching
//    folder, or, for `each: "file"` entries, the file itself.
// 2. Otherwise the unit is the nearest folder at or above the file that has a
//    package.json, a pyproject.toml or a pgq-audit config: the usual root of a
//    service in a monorepo. A package.json that only sets "type" (or
//    "sideEffects") marks a module format, not a project, and is passed over.
// 3. With none up to the file system root, every such file is in one unit.
import { statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { DEFAULT_SCHEMA } from '../model/tables.ts';
import { readConfigText } from '../read-file.ts';
import { isJsonObject } from './json.ts';
import { readConfigFile, type LoadedConfig } from './load.ts';
import { CONFIG_FILE, PACKAGE_JSON_KEY } from './schema.ts';
import type { UnitEntry } from './validate.ts';

export interface ProjectUnit {
  /** The unit's folder, or the file itself for a file that is a unit of its own. */
  root: string;
  /** The schema unqualified table names are in. */
  defaultSchema: string;
}

/** A config's folder and content: `units` are relative to the folder. */
type UnitConfig = Pick<LoadedConfig, 'base' | 'config'>;

interface Folder {
  /** A pgq-audit config lives here. */
  config?: LoadedConfig;
  /** A project root: package.json, pyproject.toml or a pgq-audit config. */
  isRoot: boolean;
}

/** Keys of a package.json that only marks the module format of a folder. */
const MODULE_FORMAT_KEYS = new Set(['type', 'sideEffects']);

export class UnitResolver {
  private readonly folders = new Map<string, Folder>();
  private readonly matchers = new WeakMap<UnitEntry, (path: string) => boolean>();
  /** Per folder of a file: the config that governs it, and the unit its files are in unless `units` says. */
  private readonly byFolder = new Map<string, { governing: UnitConfig | undefined; unit?: ProjectUnit }>();

  /**
   * `config`: the one config that governs every file (--config); otherwise each file's nearest.
   * `listed`: folders whose entries the scan's walk listed, each with those of UNIT_MARKERS it
   * holds (discover.ts): a marker a listed folder lacks is not looked for again.
   */
  constructor(private readonly options: { config?: UnitConfig; cwd?: string; listed?: ReadonlyMap<string, readonly string[]> } = {}) {}

  unitOf(file: string): ProjectUnit {
    const path = resolve(file);
    const parent = dirname(path);
    // What the folder decides, once per folder: a scan asks for every file with facts, and the walks up
    // to the root were most of a cached scan's project pass.
    let known = this.byFolder.get(parent);
    if (!known) {
      known = { governing: this.options.config ?? this.nearestConfig(parent) };
      this.byFolder.set(parent, known);
    }
    const { governing } = known;
    if (governing?.config.units) {
      const declared = this.declaredUnit(path, governing);
      if (declared) return declared;
    }
    known.unit ??= this.nearestRoot(parent, governing?.config.defaultSchema ?? DEFAULT_SCHEMA);
    // A copy: the unit is the caller's.
    return { ...known.unit };
  }

  private nearestRoot(start: string, defaultSchema: string): ProjectUnit {
    for (let dir = start; ; dir = dirname(dir)) {
      if (this.folder(dir).isRoot) return { root: dir, defaultSchema };
      if (dirname(dir) === dir) return { root: dir, defaultSchema };
    }
  }

  /**
   * The folders of the units the given files and folders are in, to read a unit whole: a unit
   * that holds `cwd` is read from `cwd` down (not from a folder above the project, nor from the
   * file system root when no folder marks a unit).
   */
  foldersOf(paths: readonly string[], cwd: string): string[] {
    const folders = new Set<string>();
    for (const path of paths) {
      // A folder's unit is the one a file directly in it would be in.
      const { root } = this.unitOf(isDirectory(path) ? join(path, '_') : path);
      const above = relative(root, resolve(cwd));
      folders.add(above === '' || (!above.startsWith('..') && !isAbsolute(above)) ? resolve(cwd) : root);
    }
    return [...folders];
  }

  private declaredUnit(path: string, governing: UnitConfig): ProjectUnit | undefined {
    const rel = toPosix(relative(governing.base, path));
    if (rel === '' || rel === '..' || rel.startsWith('../')) return undefined; // outside the config's folder
    const segments = rel.split('/');
    for (const entry of governing.config.units ?? []) {
      const matches = this.matcher(entry);
      const defaultSchema = entry.defaultSchema ?? governing.config.defaultSchema ?? DEFAULT_SCHEMA;
      if (entry.each === 'file') {
        if (matches(rel)) return { root: path, defaultSchema };
        continue;
      }
      // The outermost folder that matches: "services/*" makes services/billing one unit, however deep its files.
      for (let depth = 0; depth < segments.length; depth++) {
        const folder = segments.slice(0, depth).join('/');
        if (matches(folder === '' ? '.' : folder)) return { root: depth === 0 ? governing.base : join(governing.base, ...segments.slice(0, depth)), defaultSchema };
      }
    }
    return undefined;
  }

  private matcher(entry: UnitEntry): (path: string) => boolean {
    let matcher = this.matchers.get(entry);
    if (!matcher) {
      const glob = entry.path.replace(/^\.\/+/, '').replace(/\/+$/, '') || '.';
      const match = picomatch(glob, { dot: true });
      matcher = glob === '.' ? (path) => path === '.' : (path) => path !== '.' && match(path);
      this.matchers.set(entry, matcher);
    }
    return matcher;
  }

  private nearestConfig(start: string): UnitConfig | undefined {
    for (let dir = start; ; dir = dirname(dir)) {
      const config = this.folder(dir).config;
      if (config) return config;
      if (dirname(dir) === dir) return undefined;
    }
  }

  private folder(dir: string): Folder {
    let folder = this.folders.get(dir);
    if (folder) return folder;
    folder = { isRoot: false };
    const cwd = this.options.cwd ?? process.cwd();
    // One stat per marker the folder's listing has (it may be a link, or a folder), or three for a folder not listed.
    const listed = this.options.listed?.get(dir);
    const isFile = (name: string) => (listed === undefined || listed.includes(name)) && isRegularFile(join(dir, name));
    if (isFile(CONFIG_FILE)) {
      folder.config = readConfigFile(join(dir, CONFIG_FILE), cwd);
      folder.isRoot = true;
    }
    const pkgPath = join(dir, 'package.json');
    if (isFile('package.json')) {
      const pkg = readPackageJson(pkgPath);
      if (!folder.config && pkg && PACKAGE_JSON_KEY in pkg) folder.config = readConfigFile(pkgPath, cwd);
      // One that does not parse is still a project's package.json.
      if (!pkg || Object.keys(pkg).some((key) => !MODULE_FORMAT_KEYS.has(key))) folder.isRoot = true;
    }
    if (isFile('pyproject.toml')) folder.isRoot = true;
    this.folders.set(dir, folder);
    return folder;
  }
}

function readPackageJson(path: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readConfigText(path));
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The names that make a folder a unit's root (or hold its config): what UnitResolver looks for in each folder. */
export const UNIT_MARKERS: ReadonlySet<string> = new Set([CONFIG_FILE, 'package.json', 'pyproject.toml']);

function isRegularFile(path: string): boolean {
  try {
    // One stat, not an existsSync before it: every folder above a file with facts asks three times.
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}
