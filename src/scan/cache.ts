// --cache: a file's analysis, keyed by the hash of its bytes, under a key of
// the tool (version and the fingerprint of its own code) and the config (rules,
// severities, options, query functions, front ends, triggers). Every file
// also gets its stat (size, mtime, inode): while that is unchanged the
// file is not read again at all, and a file the prefilter let through keeps
// its analysis, one it did not keeps that verdict. A file modified less than
// two seconds before the scan gets no stat (a second write in the same tick
// could keep size and mtime): it is read and hashed until it is older.
//
// What is cached is the per-file part: findings of per-file rules, the facts
// cross-file rules collected, and suppression comments. Cross-file rules run
// over cached and fresh facts alike, so a project-wide finding is right when
// only some files changed; only a pass over exactly the facts of the last one
// is taken from the cache (scan.ts, projectPassKey). Suppressions apply on
// every scan.
import { isAscii } from 'node:buffer';
import { nodeCrypto } from '../node-crypto.ts';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isJsonObject } from '../config/json.ts';
import { packageRoot } from '../package-root.ts';
import { VERSION } from '../version.ts';
import type { ProjectFindings } from '../engine/project-pass.ts';
import type { AnalysisConfig, FileAnalysis } from './analysis.ts';
import { readRegularFile } from '../read-file.ts';

/** Bumped when the cache file's shape changes: a file of another format is ignored and rewritten. */
const FORMAT = 8;
/** A file modified more recently than this before it is stat'ed is not trusted by its stat. */
const RACY_MS = 2000;
export const CACHE_FILE = 'cache.json';

interface CacheFile {
  format: number;
  /**
   * What the entries were made under (format, tool fingerprint, config), as the text itself rather than
   * a hash of it: a few kilobytes compared as a string, where hashing needed node:crypto, whose loading
   * was 5 % of a cached scan that otherwise hashes nothing.
   */
  key: string;
  /**
   * Each file an analysis read besides its own, as it was when read, once for all the entries that
   * read it (most files of a monorepo import the same few modules): `path\tcontent hash`, then a
   * space and its stat when that could be trusted. Entries name them by index.
   */
  dependencies: string[];
  /** Files the prefilter let through: their analysis. */
  entries: Record<string, CacheEntry>;
  /**
   * Files the prefilter did not let through (nothing to report, no facts), by their stat: most files
   * of a codebase, so one string each rather than an object.
   */
  skipped: Record<string, string>;
  /** The findings of the last project pass, and the key of what it decided over (its text: see scan.ts, projectPassKey). */
  project?: { key: string; findings: ProjectFindings };
  /** What ContextHasher hashed, to take again while unchanged (see Contexts). */
  contexts?: Contexts;
}

/**
 * The context files' content hashes by path (`stat\thash`, while that stat holds the file is not read
 * again), and the hash each set of them makes (by the text hashed): a cached scan of Python files
 * takes their keys' context without hashing, so without loading node:crypto.
 */
interface Contexts {
  files: Record<string, string>;
  sets: Record<string, string>;
}

interface CacheEntry {
  /** size:mtimeMs:inode when the file was last read, if it was old enough to trust. */
  stat?: string;
  /** The content hash (+ context). */
  hash: string;
  analysis: StoredAnalysis;
  /**
   * The other files the analysis read (FileAnalysis.dependencies), when it read any: indices into the
   * file's `dependencies`, each the file's hash and, when it could be trusted, its stat: while the stat
   * is the same the file is not read again.
   */
  dependencies?: number[];
}

/**
 * An analysis as stored: facts that are one object for several rules (the four queue rules share
 * one reading of the file) are written once, under the first rule; `sameFacts` names it for the others.
 * Its `dependencies` are left out when they are the paths of the entry's `dependencies`, in order
 * (they always are, but for a path listed twice): a third of a monorepo's cache file was that copy.
 */
interface StoredAnalysis extends FileAnalysis {
  sameFacts?: Record<string, string>;
}

function packAnalysis(analysis: FileAnalysis): StoredAnalysis {
  if (!analysis.facts) return analysis;
  const owners = new Map<unknown, string>();
  const facts: Record<string, unknown> = {};
  let sameFacts: Record<string, string> | undefined;
  for (const [rule, value] of Object.entries(analysis.facts)) {
    const owner = owners.get(value);
    if (owner === undefined) {
      owners.set(value, rule);
      facts[rule] = value;
    } else (sameFacts ??= {})[rule] = owner;
  }
  return sameFacts ? { ...analysis, facts, sameFacts } : analysis;
}

/**
 * Whether a stored entry has the shape this version writes. The cache file is the user's (or a
 * checked-in tree's) to edit: an entry of another shape is read again, never trusted.
 */
function isCacheEntry(value: unknown, dependencyCount: number): value is CacheEntry {
  if (!isJsonObject(value) || typeof value.hash !== 'string' || (value.stat !== undefined && typeof value.stat !== 'string')) return false;
  if (value.dependencies !== undefined && !(Array.isArray(value.dependencies) && value.dependencies.every((i) => Number.isInteger(i) && i >= 0 && i < dependencyCount))) return false;
  const analysis = value.analysis;
  if (!isJsonObject(analysis) || !Array.isArray(analysis.messages) || !analysis.messages.every(isFinding)) return false;
  if (analysis.facts !== undefined && !isJsonObject(analysis.facts)) return false;
  if (analysis.directives !== undefined && !(isJsonObject(analysis.directives) && Array.isArray(analysis.directives.directives))) return false;
  if (analysis.dependencies !== undefined && !(Array.isArray(analysis.dependencies) && analysis.dependencies.every((d) => typeof d === 'string'))) return false;
  const same = analysis.sameFacts;
  if (same !== undefined && !(isStringRecord(same) && isJsonObject(analysis.facts) && Object.values(same).every((owner) => Object.hasOwn(analysis.facts as object, owner)))) return false;
  return true;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isJsonObject(value) && Object.values(value).every((v) => typeof v === 'string');
}

const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;

/** A finding as reports read it: the fields they print and sort by, of the right types. */
function isFinding(value: unknown): value is import('../engine/findings.ts').Finding {
  if (!isJsonObject(value)) return false;
  const { ruleId, severity, message, span } = value;
  return (
    (ruleId === null || typeof ruleId === 'string') &&
    (severity === 1 || severity === 2) &&
    typeof message === 'string' &&
    isJsonObject(span) &&
    isCount(span.start) &&
    isCount(span.end) &&
    isCount(value.line) &&
    isCount(value.column) &&
    isCount(value.endLine) &&
    isCount(value.endColumn) &&
    (value.messageId === undefined || typeof value.messageId === 'string')
  );
}

function isProjectFindings(value: unknown): value is ProjectFindings {
  return isJsonObject(value) && Object.values(value).every((list) => Array.isArray(list) && list.every(isFinding));
}

/**
 * An entry's dependency indices as written: a run a, a+1, ..., a+k (k >= 2) is `a, -k`. An answer read
 * from a whole project names every project file, in order; without this a Python app's cache file
 * held 600 numbers in each of 80 entries. A reader of the format before takes a negative for a
 * broken entry and analyses the file again.
 */
export function packRuns(list: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < list.length; ) {
    let j = i;
    while (j + 1 < list.length && list[j + 1] === list[j] + 1) j++;
    if (j - i >= 2) out.push(list[i], -(j - i));
    else for (let k = i; k <= j; k++) out.push(list[k]);
    i = j + 1;
  }
  return out;
}

/** packRuns undone; undefined (a broken entry) when a run has no start or a value is no integer. */
export function unpackRuns(list: readonly unknown[]): number[] | undefined {
  const out: number[] = [];
  for (const n of list) {
    if (typeof n !== 'number' || !Number.isInteger(n)) return undefined;
    if (n >= 0) {
      out.push(n);
      continue;
    }
    const start = out.at(-1);
    if (start === undefined) return undefined;
    for (let k = 1; k <= -n; k++) out.push(start + k);
  }
  return out;
}

/** A stored dependency `path\trecord` (see CacheFile.dependencies): its path, and its hash and stat. */
function splitDependency(line: string): [path: string, record: string] {
  const tab = line.lastIndexOf('\t');
  return [line.slice(0, tab), line.slice(tab + 1)];
}

function unpackAnalysis(entry: CacheEntry, dependencies: readonly string[]): FileAnalysis {
  const stored = entry.analysis;
  const listed = stored.dependencies === undefined && entry.dependencies !== undefined;
  if (!stored.sameFacts && !listed) return stored;
  // Copied key by key (a rest pattern takes V8's slow path: 9 ms of a cached monorepo scan).
  const analysis = {} as Record<string, unknown>;
  for (const key in stored) if (key !== 'sameFacts') analysis[key] = stored[key as keyof StoredAnalysis];
  if (listed) analysis.dependencies = entry.dependencies!.map((i) => splitDependency(dependencies[i])[0]);
  if (stored.sameFacts) {
    const facts = { ...stored.facts };
    for (const rule in stored.sameFacts) facts[rule] = facts[stored.sameFacts[rule]];
    analysis.facts = facts;
  }
  return analysis as unknown as FileAnalysis;
}

/** The analysis without the copy of its dependencies the entry's `dependencies` hold (see StoredAnalysis). */
function withoutDependencyList(stored: StoredAnalysis, paths: readonly string[]): StoredAnalysis {
  const list = stored.dependencies!;
  if (paths.length !== list.length || paths.some((path, i) => path !== list[i])) return stored;
  const { dependencies: _, ...rest } = stored;
  return rest;
}

/**
 * What a file's stat says, when it can be trusted to stand for its bytes; undefined when it cannot.
 * The mtime in ms as a double (sub-microsecond steps at today's dates), not in ns as a bigint: the
 * bigint stat was 15 % of a cached monorepo scan, and a write within the same microsecond is within
 * RACY_MS anyway.
 */
export function statKey(file: string, now = Date.now()): string | undefined {
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (stats === undefined || now - stats.mtimeMs < RACY_MS) return undefined;
    return `${stats.size}:${stats.mtimeMs}:${stats.ino}`;
  } catch {
    return undefined;
  }
}

/** The default location: node_modules/.cache/pgq-audit/ of the folder the scan runs in. */
export function defaultCacheLocation(cwd: string): string {
  return join(cwd, 'node_modules', '.cache', 'pgq-audit');
}

/** A folder (existing, or named with a trailing slash) holds cache.json; anything else is the file itself. */
export function cacheFilePath(location: string, cwd: string): string {
  const absolute = resolve(cwd, location);
  if (/[\\/]$/.test(location)) return join(absolute, CACHE_FILE);
  try {
    if (statSync(absolute).isDirectory()) return join(absolute, CACHE_FILE);
  } catch {
    // not there yet: a file path unless it has no extension
  }
  return /\.[^\\/]+$/.test(absolute) ? absolute : join(absolute, CACHE_FILE);
}

export function contentHash(bytes: Uint8Array): string {
  return nodeCrypto().hash('sha1', bytes);
}

let fingerprint: string | undefined;

/**
 * The tool's version plus the sizes and times of its own modules, so a rebuilt pgq-audit never reads a
 * stale cache. The text itself (a line per module), part of the cache's key, which is compared as text.
 */
export function toolFingerprint(): string {
  if (fingerprint) return fingerprint;
  const root = packageRoot();
  // The code this process runs: the sources under tsx, the CLI's bundle (dist/cli, built from
  // dist/src and holding all of it the CLI runs), or the compiled modules the library API loads.
  const here = fileURLToPath(import.meta.url);
  const folders = here.endsWith('.ts') ? ['src', 'rules'] : here.startsWith(join(root, 'dist', 'cli')) ? ['dist/cli'] : ['dist/src', 'dist/rules'];
  const parts: string[] = [VERSION];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const stats = statSync(path);
      if (stats.isDirectory()) walk(path);
      else if (/\.(ts|js|json)$/.test(name) && !name.endsWith('.d.ts')) parts.push(`${path.slice(root.length)}:${stats.size}:${stats.mtimeMs}`);
    }
  };
  for (const folder of folders) walk(join(root, folder));
  fingerprint = parts.join('\n');
  return fingerprint;
}

/**
 * JSON with every non-ASCII character escaped (é as \u00e9): the same value, in a file that reads
 * back as latin1, a plain copy, where decoding UTF-8 took 10 ms of a cached scan at 20,000 files.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function readAsciiOrUtf8(file: string): string {
  const bytes = readRegularFile(file);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** What byStat answers for an unchanged file the prefilter left out. */
export const SKIPPED: unique symbol = Symbol('skipped');

export class AnalysisCache {
  private entries: Record<string, CacheEntry> = {};
  /** CacheFile.dependencies; `dependencyIndex` finds a line in it, once something is stored. */
  private dependencies: string[] = [];
  private dependencyIndex?: Map<string, number>;
  /** Whether each stored dependency is as it was, once asked in this scan (by index). */
  private readonly dependencyHolds: (boolean | undefined)[] = [];
  private skipped: Record<string, string> = {};
  private project: CacheFile['project'];
  /** The stored Contexts, and those this scan used (written instead, when there are any). */
  private contexts: Contexts = { files: {}, sets: {} };
  private readonly usedContexts: Contexts = { files: {}, sets: {} };
  private readonly key: string;
  private readonly seen = new Set<string>();
  private changed = false;
  /** Stored entries found to have the right shape. */
  private readonly checked = new WeakSet<object>();
  /** When the scan began, for statKey. */
  private readonly startedAt = Date.now();
  /** Why the stored cache was not used, when it was not. */
  readonly discarded?: string;

  constructor(
    readonly file: string,
    config: AnalysisConfig,
    extra: unknown,
  ) {
    this.key = JSON.stringify({ format: FORMAT, tool: toolFingerprint(), config, extra });
    let stored: CacheFile | undefined;
    try {
      stored = JSON.parse(readAsciiOrUtf8(file)) as CacheFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.discarded = `unreadable (${(error as Error).message})`;
      return;
    }
    if (
      stored?.format !== FORMAT ||
      stored.key !== this.key ||
      !isJsonObject(stored.entries) ||
      !isJsonObject(stored.skipped) ||
      !Array.isArray(stored.dependencies) ||
      !stored.dependencies.every((line) => typeof line === 'string' && line.includes('\t'))
    ) {
      this.discarded = 'made by another version or config';
      this.changed = true;
      return;
    }
    this.entries = stored.entries;
    this.skipped = stored.skipped;
    this.dependencies = stored.dependencies;
    const project = stored.project;
    if (isJsonObject(project) && typeof project.key === 'string' && isProjectFindings(project.findings)) this.project = project;
    const contexts = stored.contexts;
    if (isJsonObject(contexts) && isStringRecord(contexts.files) && isStringRecord(contexts.sets)) this.contexts = contexts;
  }

  /** The entry of an unchanged file, by its stat alone (undefined: read it). */
  byStat(file: string, stat: string | undefined): typeof SKIPPED | { hash: string; analysis: FileAnalysis } | undefined {
    if (stat === undefined) return undefined;
    if (Object.hasOwn(this.skipped, file) && (this.skipped[file] === stat || this.skippedWithDependencies(this.skipped[file], stat))) {
      this.seen.add(file);
      return SKIPPED;
    }
    const entry = this.entry(file);
    if (entry?.stat !== stat || !this.dependenciesUnchanged(entry)) return undefined;
    this.seen.add(file);
    return { hash: entry.hash, analysis: unpackAnalysis(entry, this.dependencies) };
  }

  /** The stored entry of a file, if it has the right shape; one of another shape is dropped. */
  private entry(file: string): CacheEntry | undefined {
    if (!Object.hasOwn(this.entries, file)) return undefined;
    const entry: unknown = this.entries[file];
    // Checked once: a file's entry is looked up by its stat, for its facts' key and as a dependency.
    if (this.checked.has(entry as object)) return entry as CacheEntry;
    const packed = isJsonObject(entry) && Array.isArray(entry.dependencies) ? entry.dependencies : undefined;
    if (packed?.some((n) => typeof n === 'number' && n < 0)) (entry as { dependencies?: unknown }).dependencies = unpackRuns(packed);
    if (isCacheEntry(entry, this.dependencies.length)) {
      this.checked.add(entry);
      return entry;
    }
    delete this.entries[file];
    this.changed = true;
    return undefined;
  }

  get(file: string, contentHash: string, stat?: string): FileAnalysis | undefined {
    const entry = this.entry(file);
    if (entry?.hash !== contentHash || !this.dependenciesUnchanged(entry)) return undefined;
    this.seen.add(file);
    if (entry.stat !== stat) {
      if (stat === undefined) delete entry.stat;
      else entry.stat = stat;
      this.changed = true;
    }
    return unpackAnalysis(entry, this.dependencies);
  }

  set(file: string, contentHash: string, analysis: FileAnalysis, stat?: string): void {
    let stored = packAnalysis(analysis);
    const paths = analysis.dependencies ? [...new Set(analysis.dependencies)] : undefined;
    if (paths) stored = withoutDependencyList(stored, paths);
    const entry: CacheEntry = stat === undefined ? { hash: contentHash, analysis: stored } : { stat, hash: contentHash, analysis: stored };
    if (paths) entry.dependencies = paths.map((path) => this.dependencyAt(`${path}\t${this.dependencyRecord(path)}`));
    this.entries[file] = entry;
    delete this.skipped[file];
    this.seen.add(file);
    this.changed = true;
  }

  private readonly dependencyHashes = new Map<string, string>();

  /**
   * A dependency's content hash, found once per scan ('missing' when it cannot be read): by its stat
   * when the dependency has an entry of its own whose stat still holds (its key starts with the hash
   * of the same bytes), else by reading it. Most imported modules are scanned files: a cached scan of
   * a monorepo read and hashed 445 of them again.
   */
  private dependencyHash(path: string): string {
    let value = this.dependencyHashes.get(path);
    if (value === undefined) {
      // The stat first: one taken after the read could stand for bytes written since.
      const stat = this.statOf(path);
      const own = this.entry(path);
      if (own?.stat !== undefined && own.stat === stat) value = own.hash.split('+')[0];
      else {
        try {
          value = contentHash(readRegularFile(path));
        } catch {
          value = 'missing';
        }
      }
      this.dependencyHashes.set(path, value);
    }
    return value;
  }

  private readonly dependencyStats = new Map<string, string | undefined>();

  /** A context file's stored hash, while its stat is the stored one. */
  contextFile(path: string, stat: string | undefined): string | undefined {
    if (stat === undefined || !Object.hasOwn(this.contexts.files, path)) return undefined;
    const stored = this.contexts.files[path];
    if (!stored.startsWith(`${stat}\t`)) return undefined;
    this.usedContexts.files[path] = stored;
    return stored.slice(stat.length + 1);
  }

  /** A context file's hash, kept by its stat when that can be trusted. */
  rememberContextFile(path: string, stat: string | undefined, hash: string): void {
    if (stat === undefined) return;
    this.usedContexts.files[path] = `${stat}\t${hash}`;
    this.changed = true;
  }

  /** The hash of a set of context files hashed before (a pure function of the text: kept as long as used). */
  contextSet(text: string): string | undefined {
    if (!Object.hasOwn(this.contexts.sets, text)) return undefined;
    return (this.usedContexts.sets[text] = this.contexts.sets[text]);
  }

  rememberContextSet(text: string, hash: string): void {
    this.usedContexts.sets[text] = hash;
    this.changed = true;
  }

  /** A dependency's (or context file's) stat, once per scan (undefined when it cannot be trusted: see statKey). */
  statOf(path: string): string | undefined {
    if (!this.dependencyStats.has(path)) this.dependencyStats.set(path, statKey(path, this.startedAt));
    return this.dependencyStats.get(path);
  }

  /** The index of a stored dependency line, added when new. */
  private dependencyAt(line: string): number {
    this.dependencyIndex ??= new Map(this.dependencies.map((l, i) => [l, i]));
    let index = this.dependencyIndex.get(line);
    if (index === undefined) {
      index = this.dependencies.length;
      this.dependencies.push(line);
      this.dependencyIndex.set(line, index);
    }
    return index;
  }

  /** A dependency as stored: its content hash, then its stat when that can be trusted. */
  private dependencyRecord(path: string): string {
    const stat = this.statOf(path);
    const hash = this.dependencyHash(path);
    return stat === undefined ? hash : `${hash} ${stat}`;
  }

  /** A skipped file's verdict `stat\npath\tstat...`: its stat, and the modules it was decided on unchanged. */
  private skippedWithDependencies(verdict: string, stat: string): boolean {
    if (typeof verdict !== 'string' || !verdict.startsWith(`${stat}\n`)) return false;
    for (const line of verdict.slice(stat.length + 1).split('\n')) {
      const tab = line.lastIndexOf('\t');
      if (tab < 0 || this.statOf(line.slice(0, tab)) !== line.slice(tab + 1)) return false;
    }
    return true;
  }

  private dependenciesUnchanged(entry: CacheEntry): boolean {
    if (entry.dependencies === undefined) return true;
    for (const index of entry.dependencies) {
      // Many entries share a dependency: it is checked once.
      let holds = this.dependencyHolds[index];
      if (holds === undefined) {
        const [path, stored] = splitDependency(this.dependencies[index]);
        const space = stored.indexOf(' ');
        // The same stat: the same bytes, not read again.
        holds = (space >= 0 && stored.slice(space + 1) === this.statOf(path)) || this.dependencyHash(path) === (space >= 0 ? stored.slice(0, space) : stored);
        this.dependencyHolds[index] = holds;
      }
      if (!holds) return false;
    }
    return true;
  }

  /**
   * What fixes the facts of a file this scan analysed or took from the cache: its content key and the
   * hashes of the files its analysis read, these as their places in `table` (each stored dependency
   * line, numbered in the order the key first names it, listed whole once by the caller: most files
   * of a monorepo read the same few modules). Undefined for a file without an entry of this scan.
   */
  analysisKey(file: string, table: Map<string, number>): string | undefined {
    const entry = this.entry(file);
    if (!entry || !this.seen.has(file)) return undefined;
    if (!entry.dependencies) return entry.hash;
    const named = entry.dependencies.map((index) => {
      const line = this.dependencies[index];
      let at = table.get(line);
      if (at === undefined) table.set(line, (at = table.size));
      return at;
    });
    // Runs packed as in the file: this key is part of the project pass's, which the cache file stores.
    return `${entry.hash}\t${packRuns(named).join(',')}`;
  }

  /** The findings of a project pass over the facts `key` names, when the last scan made that same pass. */
  projectFindings(key: string): ProjectFindings | undefined {
    return this.project?.key === key ? this.project.findings : undefined;
  }

  rememberProject(key: string, findings: ProjectFindings): void {
    if (this.project?.key === key) return;
    this.project = { key, findings };
    this.changed = true;
  }

  /**
   * The prefilter let nothing of this file through: remembered by its stat, when there is one to trust,
   * and by the stats of the modules its imports were followed into (import-chance.ts), if any.
   */
  skip(file: string, stat: string | undefined, dependencies: readonly string[] = []): void {
    if (stat === undefined) return this.drop(file);
    let verdict = stat;
    for (const path of dependencies) {
      const known = this.statOf(path);
      if (known === undefined) return this.drop(file);
      verdict += `\n${path}\t${known}`;
    }
    this.seen.add(file);
    if (this.skipped[file] === verdict) return;
    this.skipped[file] = verdict;
    delete this.entries[file];
    this.changed = true;
  }

  /** The file was scanned and needs no entry (it no longer passes the prefilter, or could not be analysed). */
  drop(file: string): void {
    if (file in this.entries || file in this.skipped) {
      delete this.entries[file];
      delete this.skipped[file];
      this.changed = true;
    }
  }

  /**
   * Writes the cache (atomically); entries of files this scan did not see stay while the file exists.
   * Returns why it could not be written (a folder that cannot be made or written, a cache.json that
   * is a folder): the scan's report does not depend on it.
   */
  save(): string | undefined {
    try {
      this.write();
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    }
  }

  private write(): void {
    for (const entries of [this.entries, this.skipped]) {
      for (const file of Object.keys(entries)) {
        if (!this.seen.has(file) && !existsSync(file)) {
          delete entries[file];
          this.changed = true;
        }
      }
    }
    if (!this.changed) return;
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    const body: CacheFile = { format: FORMAT, key: this.key, dependencies: [], entries: {}, skipped: this.skipped };
    // Only the dependencies some entry still names are written, renumbered in the order entries name them.
    const renumbered = new Map<number, number>();
    for (const file of Object.keys(this.entries)) {
      const entry = this.entry(file);
      if (!entry) continue;
      if (entry.dependencies === undefined) {
        body.entries[file] = entry;
        continue;
      }
      const dependencies = entry.dependencies.map((index) => {
        let at = renumbered.get(index);
        if (at === undefined) {
          at = body.dependencies.length;
          body.dependencies.push(this.dependencies[index]);
          renumbered.set(index, at);
        }
        return at;
      });
      body.entries[file] = { ...entry, dependencies: packRuns(dependencies) };
    }
    if (this.project) body.project = this.project;
    // The contexts this scan used, or, when it used none (no Python file read), those stored.
    const used = Object.keys(this.usedContexts.files).length + Object.keys(this.usedContexts.sets).length > 0;
    const contexts = used ? this.usedContexts : this.contexts;
    if (Object.keys(contexts.files).length + Object.keys(contexts.sets).length > 0) body.contexts = contexts;
    writeFileSync(temporary, asciiJson(body));
    try {
      renameSync(temporary, this.file);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    this.changed = false;
  }
}
