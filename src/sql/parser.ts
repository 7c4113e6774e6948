// libpg-query (the real PostgreSQL parser compiled to wasm) loads
// asynchronously; everything after loadSqlParser() is synchronous. The module
// itself is imported there too: a scan that analyses no file (every file from
// the cache, or none past the prefilter) does not load it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Node } from './extract.ts';
import { work } from '../work.ts';
import { importModule } from '../import-module.ts';

type PgQuery = typeof import('libpg-query');

let loaded: Promise<void> | undefined;
let pgQuery: PgQuery | undefined;

export function loadSqlParser(): Promise<void> {
  // require(), not import(): importing CommonJS from an ES module first runs Node's export lexer over
  // it and the files it requires (about 20 ms of a cold scan, on the critical path); the module is
  // the same one either way.
  loaded ??= Promise.resolve().then(async () => {
    const module = createRequire(import.meta.url)('libpg-query') as PgQuery;
    await module.loadModule();
    pgQuery = module;
  });
  return loaded;
}

let instances = 0;

/**
 * A fresh parser: libpg-query's module evaluated once more (a URL of its own),
 * which instantiates its wasm anew. An analysis stopped by the time budget may
 * have been stopped inside the parser, and then the old instance's memory (its
 * stack pointer, its allocator) cannot be trusted: parses after it failed with
 * "No parse tree generated" or lost their error positions. The old instance is
 * left to the garbage collector.
 */
export async function reloadSqlParser(): Promise<void> {
  const module = await importModule<PgQuery>(`${import.meta.resolve('libpg-query')}?instance=${++instances}`);
  await module.loadModule();
  pgQuery = module;
  loaded = Promise.resolve();
  forgetParses();
}

/**
 * Starts loading the parser for a caller that cannot await: the ESLint plugin
 * when a CommonJS config require()s it. No load is fully synchronous (the
 * emscripten factory of libpg-query awaits its instance and its runtime start),
 * but with the wasm compiled here, synchronously, the rest needs only the
 * microtasks queued now: no compile thread, no I/O. So the parser is ready
 * before anything that waits on I/O or a timer runs, as ESLint does before it
 * lints a file. With libpg-query's own, asynchronous compile (12 ms), ESLint's
 * lintText() called right after require() found the parser not loaded.
 */
export function startLoadingSqlParser(): Promise<void> {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    compileWasmNow(require);
    const module = require('libpg-query') as PgQuery;
    loaded = module.loadModule().then(() => {
      pgQuery = module;
    });
  }
  return loaded;
}

/**
 * libpg-query's index calls its emscripten factory (wasm/libpg-query.js) with
 * no options when it is first required; give the factory an instantiateWasm
 * that compiles and instantiates at once (12 ms for its 1.7 MB), unless the
 * index is loaded already.
 */
function compileWasmNow(require: NodeJS.Require): void {
  if (require.cache[require.resolve('libpg-query')]) return;
  const factoryPath = require.resolve('libpg-query/wasm/libpg-query.js');
  const factory = require(factoryPath) as (moduleArg?: object) => Promise<unknown>;
  const cached = require.cache[factoryPath];
  if (!cached) return;
  const { WebAssembly: wasmApi } = globalThis as unknown as { WebAssembly: WasmApi };
  const wasm = new wasmApi.Module(readFileSync(join(dirname(factoryPath), 'libpg-query.wasm')));
  cached.exports = (moduleArg: object = {}) =>
    factory({
      ...moduleArg,
      instantiateWasm(imports: object, receive: (instance: object) => void) {
        receive(new wasmApi.Instance(wasm, imports));
        return {};
      },
    });
}

/** Node's WebAssembly, which TypeScript declares in the DOM library only. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => object;
}

function ready(): PgQuery {
  if (!pgQuery) {
    throw new Error(
      loaded
        ? "pgq-audit: the SQL parser (wasm) has not finished loading: `await require('pgq-audit').loadSqlParser()` before linting, or import 'pgq-audit/eslint', which waits for it"
        : 'pgq-audit: call `await loadSqlParser()` before analysing SQL',
    );
  }
  return pgQuery;
}

export interface ParsedStatement {
  stmt: Node;
  /** Byte offsets into the parsed text. */
  location: number;
  length: number | undefined;
}

export type ParseResult = { ok: true; statements: ParsedStatement[] } | { ok: false; message: string; cursorByte: number };

/**
 * Parses remembered by their text: the same statement comes back many times over (an extension's
 * update scripts each define the same routines again, and each routine's PL/pgSQL statements are
 * parsed one by one: pg_partman's 179 files asked for 41,166 parses of 2,933 texts). A parse is a pure
 * function of its text and nothing changes a tree it gives (extract.ts and routine-parameters.ts copy
 * what they rewrite), so a remembered one is handed out again, with the same steps counted. Only
 * statement texts up to 4 KB are kept (a whole file's parse is asked for once), and not a .sql file's
 * own statements (a migration's, read once: kept, they only held every tree to the scan's end; the
 * memory cost 46 M instructions on the bench's 1,500 migrations when it came; its routines' bodies are
 * kept); each memory is cleared once its texts pass a few million characters, which bounds the trees
 * it holds.
 */
const REMEMBERED_TEXT_MAX = 4096;
const REMEMBERED_CHARS = 4_000_000;

class RememberedParses<T> {
  private readonly results = new Map<string, T>();
  private chars = 0;

  get(text: string): T | undefined {
    return this.results.get(text);
  }

  set(text: string, result: T): void {
    if (this.chars + text.length > REMEMBERED_CHARS) this.clear();
    this.results.set(text, result);
    this.chars += text.length;
  }

  clear(): void {
    this.results.clear();
    this.chars = 0;
  }
}

const rememberedParses = new RememberedParses<ParseResult>();
/** A routine's text is its whole CREATE statement: kept whatever its length, within the same bound of characters. */
const rememberedPlPgSql = new RememberedParses<PlPgSqlResult>();

/** Forgets every remembered parse (the parser was reloaded). */
function forgetParses(): void {
  rememberedParses.clear();
  rememberedPlPgSql.clear();
}

/** The remembered result for the text, its steps counted again as a fresh parse counts them; else a fresh parse, kept. */
function parseOnce<T>(memory: RememberedParses<T>, text: string, keep: boolean, anew: (text: string) => T, steps: (result: T) => number): T {
  const remembered = memory.get(text);
  if (remembered) {
    work(steps(remembered));
    return remembered;
  }
  const result = anew(text);
  if (keep) memory.set(text, result);
  return result;
}

/** `remember` false: the caller reads this text once (a .sql file's own statements), so it is not kept; a kept one is still handed out. */
export function parseStatements(sql: string, remember = true): ParseResult {
  return parseOnce(rememberedParses, sql, remember && sql.length <= REMEMBERED_TEXT_MAX, parseAnew, (r) => (r.ok ? 1 + r.statements.length : 1));
}

function parseAnew(sql: string): ParseResult {
  const { parseSync } = ready();
  let tree: { stmts?: Node[] };
  try {
    tree = parseSync(sql) as { stmts?: Node[] };
  } catch (error) {
    work();
    const details = (error as { sqlDetails?: { cursorPosition?: number } }).sqlDetails;
    return { ok: false, message: (error as Error).message, cursorByte: details?.cursorPosition ?? 0 };
  }
  const statements = (tree.stmts ?? []).map((s) => ({
    stmt: s.stmt as Node,
    location: (s.stmt_location as number | undefined) ?? 0,
    length: s.stmt_len as number | undefined,
  }));
  // A step per parse and per statement it gave (work.ts), counted outside the try: a bound passed is no parse error.
  work(1 + statements.length);
  return { ok: true, statements };
}

export type PlPgSqlResult = { ok: true; functions: Node[] } | { ok: false; message: string };

/** The PL/pgSQL tree of a CREATE FUNCTION/PROCEDURE or DO statement, or the parser's message. */
export function parsePlPgSql(sql: string): PlPgSqlResult {
  return parseOnce(rememberedPlPgSql, sql, true, parsePlPgSqlAnew, (r) => (r.ok ? 1 + r.functions.length : 1));
}

function parsePlPgSqlAnew(sql: string): PlPgSqlResult {
  const { parsePlPgSQLSync } = ready();
  let tree: { plpgsql_funcs?: Node[] };
  try {
    tree = parsePlPgSQLSync(sql) as { plpgsql_funcs?: Node[] };
  } catch (error) {
    work();
    return { ok: false, message: (error as Error).message };
  }
  const functions = tree.plpgsql_funcs ?? [];
  work(1 + functions.length);
  return { ok: true, functions };
}
