// The SQL analyzer's one entry point: text in, statement facts out, with
// offsets into the text the caller gave (host placeholders included).
import { emptyFacts, extractFacts, nodeType, type Node } from './extract.ts';
import type { PlpgsqlPlace, RoutineInfo, Span, SqlAnalysis, StatementFacts } from './facts.ts';
import { splitStatements } from './lexer.ts';
import { byteToUtf16Map } from './offsets.ts';
import { parsePlPgSql, parseStatements } from './parser.ts';
import { normalizePlaceholders, type PlaceholderStyle } from './placeholders.ts';

export interface AnalyzeOptions {
  /** Placeholder syntax of the host driver: `$1` (default), psycopg `%s`/`%(name)s`, or knex `?`. */
  placeholders?: PlaceholderStyle;
  /** Spans of host interpolations (template `${...}`) in the text; each stands for a value or a name. */
  holes?: readonly Span[];
}

/** Texts above this size are parsed in batches of statements, not at once. */
const BATCH_CHARS = 64 * 1024;
/** How many placeholders one statement may need to turn into identifiers before we give up. */
const MAX_IDENTIFIER_RETRIES = 16;
/** After this many statements that do not parse, the analyzer stops. */
export const MAX_STATEMENT_ERRORS = 500;

export function analyzeSql(text: string, options: AnalyzeOptions = {}): SqlAnalysis {
  const analysis: SqlAnalysis = { statements: [], errors: [] };
  const style = options.placeholders ?? 'dollar';
  const holes = options.holes ?? [];
  if (text.length <= BATCH_CHARS && analyzeChunk(text, 0, text.length, style, holes, analysis, false)) return analysis;

  // Recovery and batching: statement by statement, grouped while they parse.
  const spans = splitStatements(text);
  let i = 0;
  while (i < spans.length) {
    let j = i;
    while (j + 1 < spans.length && spans[j + 1].end - spans[i].start <= BATCH_CHARS) j++;
    if (j > i && analyzeChunk(text, spans[i].start, spans[j].end, style, holes, analysis, false)) {
      i = j + 1;
      continue;
    }
    for (let k = i; k <= j; k++) {
      analyzeChunk(text, spans[k].start, spans[k].end, style, holes, analysis, true);
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
  allHoles: readonly Span[],
  out: SqlAnalysis,
  reportErrors: boolean,
): boolean {
  const chunk = text.slice(start, end);
  const holes = allHoles.filter((h) => h.start >= start && h.end <= end).map((h) => ({ start: h.start - start, end: h.end - start }));
  const normalized = normalizePlaceholders(chunk, style, holes);
  let result = parseStatements(normalized.sql);
  for (let retry = 0; !result.ok && retry < MAX_IDENTIFIER_RETRIES; retry++) {
    const cursor = normalized.toOriginal(byteToUtf16Map(normalized.sql)(result.cursorByte));
    if (!normalized.retryAsIdentifier(cursor)) break;
    result = parseStatements(normalized.sql);
  }
  if (!result.ok) {
    if (reportErrors) {
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
    out.statements.push(extractFacts(parsed.stmt, { at, statement: span, wordEnd: wordEndIn(sql) }));
    analyzeRoutine(parsed.stmt, sql, parsed.location, stmtEnd, at, out);
  }
  return true;
}

function wordEndIn(sql: string): (byte: number) => number {
  let bytes: Buffer | undefined;
  return (byte) => {
    bytes ??= Buffer.from(sql);
    let end = byte;
    while (end < bytes.length && /[\w$\x80-\xff]/.test(String.fromCharCode(bytes[end]))) end++;
    return end;
  };
}

function trimSpan(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /[\s;]/.test(text[end - 1])) end--;
  return { start, end };
}

// ---- function, procedure and DO bodies -------------------------------------------------

function routineInfo(stmt: Node): { info: RoutineInfo; body: string | undefined } | undefined {
  const type = nodeType(stmt);
  const node = stmt[type];
  if (type !== 'CreateFunctionStmt' && type !== 'DoStmt') return undefined;
  const options: Node[] = type === 'DoStmt' ? node.args ?? [] : node.options ?? [];
  let language = type === 'DoStmt' ? 'plpgsql' : 'sql';
  let body: string | undefined;
  for (const option of options) {
    const def = option.DefElem;
    if (def?.defname === 'language') language = String(def.arg?.String?.sval ?? language).toLowerCase();
    if (def?.defname === 'as') body = def.arg?.String?.sval ?? def.arg?.List?.items?.[0]?.String?.sval;
  }
  const name = type === 'DoStmt' ? 'DO block' : (node.funcname ?? []).map((p: Node) => p.String?.sval).join('.');
  const kind = type === 'DoStmt' ? 'do' : node.is_procedure ? 'procedure' : 'function';
  return { info: { name, kind, language }, body };
}

function analyzeRoutine(stmt: Node, sql: string, startByte: number, endByte: number, at: (byte: number) => number, out: SqlAnalysis): void {
  const routine = routineInfo(stmt);
  if (!routine?.body || (routine.info.language !== 'plpgsql' && routine.info.language !== 'sql')) return;
  const stmtText = Buffer.from(sql).subarray(startByte, endByte).toString('utf8');
  const bodyStart = stmtText.indexOf(routine.body);
  const bodyOffset = Math.max(0, bodyStart);
  // Offsets inside the statement text -> caller offsets.
  const stmtUtf16ToByte = (index: number) => startByte + Buffer.byteLength(stmtText.slice(0, index));
  const place = (indexInStmt: number, length: number): ((byteInQuery: number) => number) => {
    const queryText = stmtText.slice(indexInStmt, indexInStmt + length);
    const toUtf16 = byteToUtf16Map(queryText);
    return (byte) => at(stmtUtf16ToByte(indexInStmt + toUtf16(byte)));
  };

  if (routine.info.language === 'sql') {
    addNested(routine.body, place(bodyOffset, routine.body.length), routine.info, out);
    return;
  }
  const tree = parsePlPgSql(stmtText);
  if (!tree.ok) {
    out.errors.push({ message: `PL/pgSQL body of ${routine.info.name}: ${tree.message}`, span: { start: at(startByte), end: at(endByte) } });
    return;
  }
  let cursor = bodyOffset;
  for (const query of plpgsqlQueries(tree.functions)) {
    // PERFORM x is stored as "SELECT x"; expressions are parsed as SELECT <expr>.
    const needle = query.perform ? query.text.replace(/^SELECT\s+/i, '') : query.text;
    let found = stmtText.indexOf(needle, cursor);
    if (found < 0) found = stmtText.indexOf(needle, bodyOffset);
    const index = found < 0 ? bodyOffset : found;
    if (found >= 0) cursor = found + needle.length;
    const sqlText = query.expression || query.perform ? `SELECT ${needle}` : needle;
    const prefix = sqlText.length - needle.length;
    const mapNeedle = place(index, needle.length);
    addNested(sqlText, (byte) => mapNeedle(Math.max(0, byte - prefix)), routine.info, out, query.place);
  }
}

function addNested(sqlText: string, at: (byte: number) => number, routine: RoutineInfo, out: SqlAnalysis, place?: PlpgsqlPlace): void {
  const result = parseStatements(sqlText);
  if (!result.ok) return; // PL/pgSQL accepted it; an expression we cannot parse alone is not the user's error
  const length = Buffer.byteLength(sqlText);
  for (const parsed of result.statements) {
    const endByte = parsed.length === undefined ? length : parsed.location + parsed.length;
    const facts = extractFacts(parsed.stmt, { at, statement: { start: at(parsed.location), end: at(endByte) }, wordEnd: wordEndIn(sqlText) });
    facts.routine = routine;
    if (place && (place.inLoop || place.guardedBy.length > 0 || place.handlerOf !== undefined)) facts.plpgsql = place;
    out.statements.push(facts);
  }
}

interface PlpgsqlQuery {
  text: string;
  perform: boolean;
  expression: boolean;
  place: PlpgsqlPlace;
}

const PLPGSQL_LOOPS = new Set(['PLpgSQL_stmt_fors', 'PLpgSQL_stmt_dynfors', 'PLpgSQL_stmt_forc', 'PLpgSQL_stmt_fori', 'PLpgSQL_stmt_foreach_a', 'PLpgSQL_stmt_loop', 'PLpgSQL_stmt_while']);

/** Every SQL text a PL/pgSQL function executes, in source order, with dynamic EXECUTE of a literal. */
function plpgsqlQueries(functions: Node[]): PlpgsqlQuery[] {
  const queries: PlpgsqlQuery[] = [];
  let blocks = 0;
  const visit = (value: any, parentType: string | undefined, place: PlpgsqlPlace) => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, parentType, place);
      return;
    }
    for (const key of Object.keys(value)) {
      const child = value[key];
      if (key === 'PLpgSQL_expr' && child?.query) {
        const text = String(child.query);
        const perform = parentType === 'PLpgSQL_stmt_perform';
        if (parentType === 'PLpgSQL_stmt_dynexecute') {
          const literal = /^'((?:[^']|'')*)'$/s.exec(text.trim());
          if (literal) queries.push({ text: literal[1].replace(/''/g, "'"), perform: false, expression: false, place });
        } else if (parentType === 'PLpgSQL_stmt_assign') {
          // Since PostgreSQL 14 an assignment keeps its target: "t := expr".
          const value = /^[\s\S]*?:?=\s*/.exec(text);
          queries.push({ text: value ? text.slice(value[0].length) : text, perform: false, expression: true, place });
        } else {
          queries.push({ text, perform, expression: child.parseMode !== undefined && child.parseMode !== 0 && !perform, place });
        }
        continue;
      }
      if (key.startsWith('PLpgSQL_stmt') && child && typeof child === 'object' && !Array.isArray(child)) {
        // Where the statements below sit: a loop's body, a block's protected part or its EXCEPTION handlers.
        const block = key === 'PLpgSQL_stmt_block' && child.exceptions ? ++blocks : undefined;
        for (const field of Object.keys(child)) {
          let inner = place;
          if (field === 'body' && PLPGSQL_LOOPS.has(key)) inner = { ...inner, inLoop: true };
          if (block !== undefined && field === 'body') inner = { ...inner, guardedBy: [...inner.guardedBy, block] };
          if (block !== undefined && field === 'exceptions') inner = { ...inner, handlerOf: block };
          visit(child[field], key, inner);
        }
        continue;
      }
      visit(child, parentType, place);
    }
  };
  visit(functions, undefined, { inLoop: false, guardedBy: [] });
  return queries;
}

export { emptyFacts };
export type { StatementFacts };
