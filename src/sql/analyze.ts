// The SQL analyzer's one entry point: text in, statement facts out, with
// offsets into the text the caller gave (host placeholders included).
import { emptyFacts, extractFacts } from './extract.ts';
import { keepFactStatements, type FactStatements } from './fact-free.ts';
import type { Span, SqlAnalysis, StatementFacts } from './facts.ts';
import { splitStatements } from './lexer.ts';
import { byteToUtf16Map } from './offsets.ts';
import { parseWithPlaceholders, wordEndIn } from './parse-text.ts';
import type { Hole, PlaceholderStyle } from './placeholders.ts';
import { analyzeRoutine } from './routines.ts';

export interface AnalyzeOptions {
  /** Placeholder syntax of the host driver: `$1` (default), psycopg `%s`/`%(name)s`, or knex `?`. */
  placeholders?: PlaceholderStyle;
  /**
   * Spans of host interpolations (template `${...}`, psql variables) in the
   * text; each stands for a value or a name (see Hole for known texts and names).
   */
  holes?: readonly Hole[];
  /**
   * Parse only the statements that can carry a fact (fact-free.ts), and only
   * the routine bodies that run one: what the .sql front end reads. A
   * statement left out is counted in `skipped`; whether it would parse is not
   * known.
   */
  onlyFacts?: boolean;
  /**
   * Maps every span of the result (each `{ start, end }` object) onto the caller's text, e.g. a host
   * file's offsets: done while the shared analysis of a short text is copied out, not in a second walk.
   */
  mapSpan?: (span: Span) => Span;
  /**
   * Whether the analysis may be kept for the next call with the same text (the default). A whole .sql
   * file is read once per scan: keeping it would only cost the key and a copy of every statement, and
   * keeping its statements' parses (parser.ts) would hold every tree to the end of the scan. Its
   * routines' bodies are still remembered: an extension's update scripts define them again and again.
   */
  memo?: boolean;
}

/** Texts above this size are parsed in batches of statements, not at once. */
const BATCH_CHARS = 64 * 1024;
/** After this many statements that do not parse, the analyzer stops. */
export const MAX_STATEMENT_ERRORS = 500;

/**
 * Host code sends the same short SQL texts over and over: one query in many files of a project, and
 * one file's queries again each time a module that imports it walks it (a project module is read
 * once per import depth). Texts up to this size are analysed once per process and their analysis
 * copied out (callers map its spans onto their file in place); on the bench's monorepo, 3,500
 * analyses of 335 texts.
 */
const MEMO_MAX_CHARS = 8 * 1024;
const MEMO_MAX_ENTRIES = 4096;
const memo = new Map<string, SqlAnalysis>();

function memoKey(source: string, options: AnalyzeOptions): string | undefined {
  if (source.length > MEMO_MAX_CHARS || options.memo === false) return undefined;
  const holes = options.holes?.length ? JSON.stringify(options.holes) : '';
  return `${options.placeholders ?? 'dollar'}\u0000${options.onlyFacts === true ? 1 : 0}\u0000${holes}\u0000${source}`;
}

export function analyzeSql(source: string, options: AnalyzeOptions = {}): SqlAnalysis {
  const key = memoKey(source, options);
  if (key === undefined) {
    const analysis = analyzeText(source, options);
    return options.mapSpan ? (copyOf(analysis, new Map(), options.mapSpan) as SqlAnalysis) : analysis;
  }
  let analysis = memo.get(key);
  if (!analysis) {
    analysis = analyzeText(source, options);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(key, analysis);
  }
  return copyOf(analysis, new Map(), options.mapSpan) as SqlAnalysis;
}

/**
 * A deep copy of plain data (objects, arrays, primitives), objects met twice copied once. Faster here
 * than structuredClone. With `mapSpan`, each span (an object of exactly `start` and `end`, numbers) is
 * mapped as it is copied.
 */
function copyOf(value: unknown, copies: Map<object, unknown>, mapSpan: ((span: Span) => Span) | undefined): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const seen = copies.get(value);
  if (seen !== undefined) return seen;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    copies.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = copyOf(value[i], copies, mapSpan);
    return out;
  }
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  copies.set(value, out);
  let keys = 0;
  for (const key in record) {
    out[key] = copyOf(record[key], copies, mapSpan);
    keys++;
  }
  if (mapSpan && keys === 2 && typeof out.start === 'number' && typeof out.end === 'number') {
    const mapped = mapSpan({ start: out.start, end: out.end });
    out.start = mapped.start;
    out.end = mapped.end;
  }
  return out;
}

function analyzeText(source: string, options: AnalyzeOptions): SqlAnalysis {
  return withoutUncheckedBodyErrors(source, analyzeStatements(source, options));
}

/** `SET check_function_bodies = false` (pg_dump writes it), or the same through set_config. */
const BODIES_UNCHECKED = /\bset\s+(?:session\s+)?check_function_bodies\s*(?:=|\bto\b)\s*'?(?:false|off|0)\b|set_config\s*\(\s*'check_function_bodies'\s*,\s*'(?:false|off|0)'/i;

/**
 * After a script turns check_function_bodies off, PostgreSQL creates a
 * PL/pgSQL or SQL function (one with a quoted body, not BEGIN ATOMIC) without
 * parsing its body (it fails only when called), so
 * the file is valid: a body that does not parse there is counted as not read,
 * not reported as the file's parse error.
 */
function withoutUncheckedBodyErrors(source: string, analysis: SqlAnalysis): SqlAnalysis {
  if (analysis.errors.length === 0 || !/check_function_bodies/i.test(source)) return analysis;
  const off = BODIES_UNCHECKED.exec(source);
  if (!off) return analysis;
  const kept = analysis.errors.filter((e) => !(/^(?:PL\/pgSQL|SQL) body of /.test(e.message) && e.span.start > off.index));
  if (kept.length === analysis.errors.length) return analysis;
  analysis.skipped = (analysis.skipped ?? 0) + analysis.errors.length - kept.length;
  analysis.errors = kept;
  return analysis;
}

/** The caller's holes in the order of the text. */
const sortedHoles = (options: AnalyzeOptions): Hole[] => (options.holes?.length ? [...options.holes].sort((a, b) => a.start - b.start) : []);

function analyzeStatements(source: string, options: AnalyzeOptions): SqlAnalysis {
  if (options.onlyFacts !== true) return parseStatementsOf(source, options);
  const kept = keepFactStatements(source, sortedHoles(options));
  // Every statement blanked (a migration of DDL alone): nothing is left to parse.
  const analysis: SqlAnalysis = kept.text === undefined ? { statements: [], errors: [] } : parseStatementsOf(kept.text, options, kept.holes);
  analysis.skipped = kept.skipped + (analysis.skipped ?? 0);
  if (kept.tables.length > 0 || kept.routines.length > 0) analysis.statements = withStatementsRead(analysis.statements, kept, source);
  return analysis;
}

/**
 * The statements read from their words (fact-free.ts: CREATE TABLE, and CREATE FUNCTION whose body
 * carries no fact) put among the parsed ones, in the order of the text, with the facts and the span a
 * parse gives them. They count as skipped: a file with a statement that does not parse is parsed whole
 * (languages/sql).
 */
function withStatementsRead(parsed: StatementFacts[], kept: FactStatements, text: string): StatementFacts[] {
  const read: { start: number; facts: StatementFacts }[] = [];
  for (const { start, end, created } of kept.tables) {
    const facts = emptyFacts('CreateStmt', trimSpan(text, { start, end }));
    facts.createdTable = created;
    read.push({ start, facts });
  }
  for (const { start, end, defined } of kept.routines) {
    const span = trimSpan(text, { start, end });
    const facts = emptyFacts('CreateFunctionStmt', span);
    // As routines.ts's routineInfo gives it (the same fields in the same order); the body is not read.
    facts.defines = { name: defined.name, kind: defined.kind, language: defined.language, span, parameters: defined.parameters };
    read.push({ start, facts });
  }
  if (kept.tables.length > 0 && kept.routines.length > 0) read.sort((a, b) => a.start - b.start);
  const out: StatementFacts[] = [];
  let k = 0;
  // A routine body's statements lie inside their CREATE FUNCTION: none of them is before a statement read after it.
  for (const statement of parsed) {
    while (k < read.length && read[k].start < statement.span.start) out.push(read[k++].facts);
    out.push(statement);
  }
  while (k < read.length) out.push(read[k++].facts);
  return out;
}

function parseStatementsOf(text: string, options: AnalyzeOptions, keptHoles?: Hole[]): SqlAnalysis {
  const analysis: SqlAnalysis = { statements: [], errors: [] };
  const style = options.placeholders ?? 'dollar';
  const holes = keptHoles ?? sortedHoles(options);
  const onlyFacts = options.onlyFacts === true;
  const remember = options.memo !== false;
  if (text.length <= BATCH_CHARS && analyzeChunk(text, 0, text.length, style, holes, analysis, false, onlyFacts, remember)) return analysis;

  // Recovery and batching: statement by statement, grouped while they parse.
  const spans = splitStatements(text);
  let i = 0;
  while (i < spans.length) {
    let j = i;
    while (j + 1 < spans.length && spans[j + 1].end - spans[i].start <= BATCH_CHARS) j++;
    if (j > i && analyzeChunk(text, spans[i].start, spans[j].end, style, holes, analysis, false, onlyFacts, remember)) {
      i = j + 1;
      continue;
    }
    for (let k = i; k <= j; k++) {
      analyzeChunk(text, spans[k].start, spans[k].end, style, holes, analysis, true, onlyFacts, remember);
      if (analysis.errors.length >= MAX_STATEMENT_ERRORS) {
        // Text this broken is not SQL (a binary, a wrong extension): each failed statement costs a parse.
        analysis.errors.push({ message: `${MAX_STATEMENT_ERRORS} statements did not parse; the rest of the text was not analysed`, span: { start: spans[k].end, end: text.length } });
        return analysis;
      }
    }
    i = j + 1;
  }
  return analysis;
}

/** Parses text[start, end); on success appends its facts, else (when `reportErrors`) one error. */
function analyzeChunk(
  text: string,
  start: number,
  end: number,
  style: PlaceholderStyle,
  allHoles: readonly Hole[],
  out: SqlAnalysis,
  reportErrors: boolean,
  onlyFacts: boolean,
  remember: boolean,
): boolean {
  const chunk = text.slice(start, end);
  const holes = holesIn(allHoles, start, end);
  const { result, normalized } = parseWithPlaceholders(chunk, style, holes, remember);
  if (!result.ok) {
    if (reportErrors && !holes.some((hole) => hole.opaque)) {
      const at = start + normalized.toOriginal(byteToUtf16Map(normalized.sql)(result.cursorByte));
      out.errors.push({ message: result.message, span: { start: Math.min(at, end), end: Math.min(at + 1, Math.max(end, at + 1)) } });
    }
    return false;
  }
  const sql = normalized.sql;
  const toUtf16 = byteToUtf16Map(sql);
  const at = (byte: number) => start + normalized.toOriginal(toUtf16(byte));
  for (const parsed of result.statements) {
    const stmtEnd = parsed.length === undefined ? Buffer.byteLength(sql) : parsed.location + parsed.length;
    const span = trimSpan(text, { start: at(parsed.location), end: at(stmtEnd) });
    const facts = extractFacts(parsed.stmt, { at, statement: span, wordEnd: wordEndIn(sql) });
    out.statements.push(facts);
    analyzeRoutine(parsed.stmt, sql, parsed.location, stmtEnd, at, out, span, facts, onlyFacts);
  }
  return true;
}

/** The holes inside [start, end), relative to start (holes are sorted by the callers; a binary search finds the first). */
function holesIn(holes: readonly Hole[], start: number, end: number): Hole[] {
  if (holes.length === 0) return [];
  let lo = 0;
  let hi = holes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holes[mid].start < start) lo = mid + 1;
    else hi = mid;
  }
  const out: Hole[] = [];
  for (let i = lo; i < holes.length && holes[i].start < end; i++) {
    if (holes[i].end <= end) out.push({ ...holes[i], start: holes[i].start - start, end: holes[i].end - start });
  }
  return out;
}

function trimSpan(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /[\s;]/.test(text[end - 1])) end--;
  return { start, end };
}

export { emptyFacts };
export type { StatementFacts };
