// Runs a CommonJS file with V8's code cache, kept between runs: what Node 22's compile cache
// (module.enableCompileCache) does, which Node 20 lacks. A cold scan of a small project spent
// about a fifth of its instructions parsing and compiling the CLI's own JS (1.4 MB), and V8
// compiles each function again in every process; the cache holds the bytecode of every function
// a run compiled, so the next run deserializes it instead.
//
// The cache is a file per build of the bundle (its content hash, made by the build), Node version,
// architecture and command-line V8 flags: V8 checks only the source's length and its own flags,
// so a cache of other text would run the wrong code. Making it costs 8-25 ms, so it is made only
// when a run finds none, when V8 rejects it, or when the run compiled code the cache lacks: a run
// of a kind (its command and the packages it loaded, a language's parser) the cache has not seen,
// or one that compiled 32 KB of bytecode more than the least a later run of its kind compiled
// (what every such run compiles outside the cache: Node's own modules, the parsers' packages;
// the run that made the cache does not count, its code is in it). A cache made holds the functions
// of every earlier run too (they were deserialized), so a few runs fill it and later ones only
// read it. It lives in a folder of the user's own under the
// temporary folder (as Node's compile cache does), refused if another user could write there;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. Any failure only means the code is compiled as it
// would be without a cache.
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import vm from 'node:vm';

/** Cache files kept in the folder (other builds, Node versions, flags): the oldest beyond are removed. */
const KEPT_FILES = 8;
/** Kinds of run one cache records: past them it is never made again (a bound on the writes). */
const MAX_KINDS = 64;
/** Bytecode a run may compile past the least of its kind without the cache being made again. */
const SLACK_BYTES = 32_768;

export interface CodeCacheOptions {
  /** The build's content hash of `file` (a different text must never meet this cache). */
  id: string;
  /** The cache folder; default codeCacheFolder(). undefined: no cache. */
  folder?: string | undefined;
}

/** The default folder, or undefined when the cache is off. */
export function codeCacheFolder(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const uid = process.getuid?.();
  return join(tmpdir(), uid === undefined ? 'pgq-audit-code-cache' : `pgq-audit-code-cache-${uid}`);
}

/** FNV-1a: a name for the flags, without loading node:crypto (some 20 M instructions). */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16);
}

/** The cache file's name: the flags a process starts with are part of what V8 checks. */
export function codeCacheName(id: string): string {
  const flags = `${process.execArgv.join(' ')}\0${process.env.NODE_OPTIONS ?? ''}`;
  return `${id}-${process.version}-${process.arch}-${shortHash(flags)}.bin`;
}

/** The folder, made if missing; undefined unless it is a real folder of this user that no one else can write to. */
function ownFolder(folder: string): string | undefined {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const stat = lstatSync(folder);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
  return folder;
}

/** The packages (node_modules/<name>) this process has required: which parts of the program ran. */
function loadedPackages(require: NodeJS.Require): string[] {
  const names = new Set<string>();
  for (const path of Object.keys(require.cache)) {
    const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/](?!.*[\\/]node_modules[\\/])/.exec(path);
    if (m) names.add(m[1].replace(/\\/g, '/'));
  }
  return [...names].sort();
}

/** Bytes of bytecode in this process (node:v8 is loaded already: launch.ts's settings). */
function bytecodeBytes(require: NodeJS.Require): number {
  return (require('node:v8') as typeof import('node:v8')).getHeapCodeStatistics().bytecode_and_metadata_size;
}

interface Header {
  /**
   * Per kind of run (its command and packages) the cache holds the code of, the least bytecode a run
   * of it compiled since; null until a run of it has used the cache.
   */
  kinds: Record<string, number | null>;
}

function readCache(path: string): { header: Header; data: Buffer } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const end = bytes.indexOf(10);
  if (end < 0) return undefined;
  try {
    const header = JSON.parse(bytes.subarray(0, end).toString('utf8')) as Header;
    if (typeof header.kinds !== 'object' || header.kinds === null) return undefined;
    return { header, data: bytes.subarray(end + 1) };
  } catch {
    return undefined;
  }
}

function writeCache(folder: string, path: string, header: Header, data: Buffer): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), data]), { mode: 0o600 });
  renameSync(temporary, path);
  const files = readdirSync(folder)
    .filter((name) => name.endsWith('.bin'))
    .map((name) => ({ path: join(folder, name), time: statSync(join(folder, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const old of files.slice(KEPT_FILES)) unlinkSync(old.path);
}

/**
 * Runs `file` (CommonJS) as require() would and returns its exports, compiled from the code cache
 * when one fits. `command` names what this run does.
 */
export function requireWithCodeCache(file: string, command: string, options: CodeCacheOptions): unknown {
  const source = readFileSync(file, 'utf8');
  const require = createRequire(file);
  let folder: string | undefined;
  try {
    folder = options.folder === undefined ? undefined : ownFolder(options.folder);
  } catch {
    folder = undefined;
  }
  const path = folder && join(folder, codeCacheName(options.id));
  const cached = path ? readCache(path) : undefined;
  // Node's own CommonJS wrapper, on the source's first line: line numbers stay the file's.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n});`, {
    filename: file,
    cachedData: cached?.data,
  });
  if (folder && path) {
    const valid = cached !== undefined && !script.cachedDataRejected;
    const kinds = valid ? cached.header.kinds : {};
    const before = bytecodeBytes(require);
    process.once('exit', () => {
      const kind = `${command} ${loadedPackages(require).join(',')}`;
      const compiled = bytecodeBytes(require) - before;
      const least = kinds[kind];
      try {
        if (least === undefined ? Object.keys(kinds).length < MAX_KINDS : least !== null && compiled > least + SLACK_BYTES) {
          writeCache(folder, path, { kinds: { ...kinds, [kind]: least ?? null } }, script.createCachedData());
        } else if (valid && (least === null || compiled < least)) {
          // A new least for the kind: the same cache under an updated header (no new code to make).
          writeCache(folder, path, { kinds: { ...kinds, [kind]: compiled } }, cached.data);
        }
      } catch {
        // A cache that cannot be written is only a slower next run.
      }
    });
  }
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, require, module, file, dirname(file));
  return module.exports;
}
