// Function, procedure and DO bodies: the statements a routine runs, with the
// routine's parameters (a setting named by a parameter is chosen by the
// caller), the PL/pgSQL blocks whose EXCEPTION handler catches a failed cast,
// and the SQL that EXECUTE builds at run time.
import { cronCommandOf } from './cron-jobs.ts';
import { dynamicTemplate, type DynamicTemplate } from './dynamic.ts';
import { extractFacts, type Node } from './extract.ts';
import { nodeType } from './nodes.ts';
import { bodyCarriesNoFact } from './fact-free.ts';
import type { ParameterTest, PlpgsqlPlace, RoutineInfo, SettingValue, Span, SqlAnalysis, StatementFacts } from './facts.ts';
import { codeOnly, splitStatements } from './lexer.ts';
import { byteToUtf16Map, utf16ToByteMap, utf8Of } from './offsets.ts';
import { parsePlPgSql, parseStatements } from './parser.ts';
import { parseWithPlaceholders, wordEndIn } from './parse-text.ts';
import { ERROR_LEVEL, tookNothing } from './plpgsql-found.ts';
import { loopRowsOf, withLoopRows, type LoopRows } from './plpgsql-loops.ts';
import { constantsInStatement, constantVariables } from './routine-constants.ts';
import { parametersAsPlaceholders } from './routine-parameters.ts';
import { valueOf } from './values.ts';

const INPUT_MODES = new Set([undefined, 'FUNC_PARAM_DEFAULT', 'FUNC_PARAM_IN', 'FUNC_PARAM_INOUT', 'FUNC_PARAM_VARIADIC']);

/** Handlers that catch what a cast of '' raises (22P02, 22007 and the rest of class 22). */
const CAST_ERROR_CONDITIONS = new Set(['others', 'data_exception', 'invalid_text_representation', 'invalid_datetime_format', '22p02', '22007', '22000']);

export function routineInfo(stmt: Node, span: Span): { info: RoutineInfo; body: string | undefined; atomic?: Node[] } | undefined {
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
  const info: RoutineInfo = { name, kind, language, span };
  if (type === 'CreateFunctionStmt') {
    const inputs = ((node.parameters ?? []) as Node[]).map((p) => p.FunctionParameter).filter((p) => p && INPUT_MODES.has(p.mode));
    info.parameters = inputs.map((p) => String(p.name ?? '').toLowerCase());
    const defaults = inputs.map((p) => (p.defexpr ? valueOf(p.defexpr, undefined) : undefined));
    if (defaults.some((d) => d?.kind === 'literal')) info.parameterDefaults = defaults.map((d) => (d?.kind === 'literal' ? d : undefined));
  }
  const atomic = node.sql_body?.List?.items?.[0]?.List?.items as Node[] | undefined;
  return { info, body, ...(atomic ? { atomic } : {}) };
}

interface Place {
  /** Maps a UTF-16 index of the CREATE statement's text to an offset of the caller's text. */
  (indexInStatement: number): number;
}

export function analyzeRoutine(
  stmt: Node,
  sql: string,
  startByte: number,
  endByte: number,
  at: (byte: number) => number,
  out: SqlAnalysis,
  span: Span,
  definition: StatementFacts,
  onlyFacts = false,
): void {
  const routine = routineInfo(stmt, span);
  if (!routine) {
    analyzeCronCommand(stmt, sql, startByte, endByte, at, out, span, onlyFacts);
    return;
  }
  definition.defines = routine.info;
  const stmtBytes = utf8Of(sql).subarray(startByte, endByte);
  const stmtText = stmtBytes.toString('utf8');
  const ascii = stmtBytes.length === stmtText.length;
  const byteOf = ascii ? undefined : utf16ToByteMap(stmtText);
  const place: Place = byteOf ? (index) => at(startByte + byteOf(index)) : (index) => at(startByte + index);

  if (routine.atomic) {
    atomicBody(routine.atomic, stmtText, sql, at, routine.info, place, span, out);
    return;
  }
  if (!routine.body || (routine.info.language !== 'plpgsql' && routine.info.language !== 'sql')) return;
  // A body that runs no statement, call or setting a rule reads (a trigger function stamping updated_at): not parsed.
  if (onlyFacts && bodyCarriesNoFact(routine.body)) {
    out.skipped = (out.skipped ?? 0) + 1;
    return;
  }
  const bodyOffset = Math.max(0, stmtText.indexOf(routine.body));
  if (routine.info.language === 'sql') {
    // The whole body is the user's SQL (PostgreSQL parses it at CREATE, unless check_function_bodies is off): one that does not parse is reported.
    nested(routine.body, (i) => place(bodyOffset + i), routine.info, out, { parameters: routine.info.parameters ?? [], reportParseError: true });
    return;
  }
  let tree = parsePlPgSql(stmtText);
  if (!tree.ok) {
    // The PL/pgSQL parser reads a type it does not know (an enum, a domain) as a record; the server knows better.
    const scalar = withScalarDeclarations(stmtText, bodyOffset, routine.body.length);
    if (scalar !== undefined) {
      const retried = parsePlPgSql(scalar);
      if (retried.ok) tree = retried;
    }
  }
  if (!tree.ok) {
    // And an array of one in the header as record[]: a pseudo-type no function returns (`returns requirement[]`), an OUT
    // parameter that cannot go in a multiple-item INTO list (`out lines billing.line[]`); an array is never a record.
    const header = withKnownArrayTypes(withScalarDeclarations(stmtText, bodyOffset, routine.body.length) ?? stmtText, bodyOffset);
    // Its error, if any, is the body's own: the text differs only by types the parser cannot know.
    if (header !== undefined) tree = parsePlPgSql(header);
  }
  if (!tree.ok) {
    // And a field of a `%ROWTYPE` variable as an assignment's target (`v_invite.status := 'expired'`): the parser
    // does not know the table's columns, the server does. The target becomes PERFORM, so the value is still read.
    const fields = withRowFieldAssignments(stmtText, bodyOffset, routine.body.length);
    if (fields !== undefined) {
      const retried = parsePlPgSql(withKnownArrayTypes(withScalarDeclarations(fields, bodyOffset, routine.body.length) ?? fields, bodyOffset) ?? fields);
      if (retried.ok) tree = retried;
    }
  }
  if (!tree.ok) {
    out.errors.push({ message: `PL/pgSQL body of ${routine.info.name}: ${tree.message}`, span: { start: at(startByte), end: at(endByte) } });
    return;
  }
  const functions = tree.functions;
  const parameters = routine.info.parameters ?? plpgsqlParameters(functions);
  const constants = constantVariables(functions, parameters);
  const loops = loopRowsOf(functions);
  let cursor = bodyOffset;
  const locate = (needle: string): number => {
    let found = stmtText.indexOf(needle, cursor);
    if (found < 0) found = stmtText.indexOf(needle, bodyOffset);
    if (found < 0) found = indexOfBlanked(stmtText, needle, cursor);
    if (found >= 0) cursor = found + needle.length;
    return found < 0 ? bodyOffset : found;
  };
  const assigned = new Map<string, string>();
  const analyzeQuery = (query: PlpgsqlQuery): void => {
    if (query.dynamic) {
      const index = locate(query.text);
      const template = dynamicTemplate(query.text, assigned);
      if (!template) return;
      const using = query.using.map((u) => {
        const v = /^\s*([A-Za-z_]\w*)\s*$/.exec(u)?.[1]?.toLowerCase();
        return v && parameters.includes(v) ? v : '';
      });
      nested(template.sql, (i) => place(index + (template.origin[i] ?? template.origin[template.origin.length - 1] ?? 0)), routine.info, out, {
        parameters: using,
        exceptionGuard: query.guarded,
        plpgsql: query.place,
        template,
      });
      return;
    }
    // PERFORM x is stored as "SELECT x"; expressions are parsed as SELECT <expr>.
    const needle = query.perform ? query.text.replace(/^SELECT\s+/i, '') : query.text;
    const index = locate(needle);
    if (query.assigns && isStringExpression(needle)) assigned.set(query.assigns, needle);
    // An expression without a call or a subquery (`v := 1`, `IF NOT FOUND`) holds no fact: not worth a parse.
    if (query.expression && !needle.includes('(')) return;
    const sqlText = query.expression || query.perform ? `SELECT ${needle}` : needle;
    const prefix = sqlText.length - needle.length;
    nested(sqlText, (i) => place(index + Math.max(0, i - prefix)), routine.info, out, {
      parameters,
      constants,
      loop: loops.get(query.expr),
      exceptionGuard: query.guarded,
      plpgsql: query.place,
    });
    // `perform cron.schedule('sweep', '* * * * *', $c$ update ... $c$)`: the function schedules a job whose command runs at every tick.
    if (/\bcron\s*\.\s*schedule/i.test(needle)) scheduledCommand(sqlText, (i) => place(index + Math.max(0, i - prefix)), out, routine.info.span ?? span);
  };
  /** The statements each query expression of the tree gave. */
  const produced = new Map<object, StatementFacts[]>();
  const queries = plpgsqlQueries(functions);
  keepParameterTests(queries, parameters, stmtText.slice(bodyOffset));
  for (const query of queries) {
    const first = out.statements.length;
    analyzeQuery(query);
    produced.set(query.expr, out.statements.slice(first));
  }
  // IF FOUND / EXIT WHEN FOUND: the statements reached only where an earlier one took no row.
  if (queries.some((q) => /\bfound\b/i.test(q.text))) placeTookNothing(tookNothing(functions), queries, produced);
}

/** A pg_cron job's command (cron-jobs.ts), read as the body of a SQL function named after the job: it runs where the schedule fires. */
function analyzeCronCommand(stmt: Node, sql: string, startByte: number, endByte: number, at: (byte: number) => number, out: SqlAnalysis, span: Span, onlyFacts: boolean): void {
  const cron = cronCommandOf(stmt);
  if (!cron || (onlyFacts && bodyCarriesNoFact(cron.command))) return;
  const stmtText = utf8Of(sql).subarray(startByte, endByte).toString('utf8');
  const byteOf = utf16ToByteMap(stmtText);
  const literalAt = Math.max(0, cron.location - startByte);
  const source = commandSource(stmtText, cron.command, byteToUtf16Map(stmtText)(literalAt));
  if (!source) return;
  const info: RoutineInfo = { name: `cron job ${cron.name}`, kind: 'function', language: 'sql', span };
  nested(cron.command, (i) => at(startByte + byteOf(source(i))), info, out, { parameters: [] });
}

/**
 * Where each character of a cron command stands in the text that gives it: as written (dollar quoting, the usual
 * way), or in a single-quoted literal whose quotes are doubled (`'update jobs set status = ''queued'''`).
 */
function commandSource(text: string, command: string, from: number): ((index: number) => number) | undefined {
  const asWritten = text.indexOf(command, from);
  if (asWritten >= 0) return (i) => asWritten + i;
  if (!command.includes("'")) return undefined;
  const at = text.indexOf(command.replaceAll("'", "''"), from);
  if (at < 0) return undefined;
  const shift: number[] = [];
  let quotes = 0;
  for (let i = 0; i <= command.length; i++) {
    shift.push(i + quotes);
    if (command[i] === "'") quotes++;
  }
  return (i) => at + (shift[Math.min(i, command.length)] ?? 0);
}

/** The command of a pg_cron job a routine's statement schedules, read as the body of a SQL function named after the job. */
function scheduledCommand(sqlText: string, place: (index: number) => number, out: SqlAnalysis, span: Span): void {
  const parsed = parseStatements(sqlText);
  if (!parsed.ok || parsed.statements.length !== 1) return;
  const cron = cronCommandOf(parsed.statements[0].stmt);
  if (!cron) return;
  const source = commandSource(sqlText, cron.command, byteToUtf16Map(sqlText)(cron.location));
  if (!source) return;
  nested(cron.command, (i) => place(source(i)), { name: `cron job ${cron.name}`, kind: 'function', language: 'sql', span }, out, { parameters: [] });
}

/**
 * Where `needle` starts in `text` from `from`, its blanks matching anything: the PL/pgSQL parser gives
 * `SELECT a INTO v FROM t` as `SELECT a        FROM t`, the INTO clause blanked to the same length. -1 if nowhere.
 */
function indexOfBlanked(text: string, needle: string, from: number): number {
  const head = /^\S+/.exec(needle)?.[0];
  if (!head || !/\s{2,}/.test(needle)) return -1;
  for (let at = text.indexOf(head, from); at >= 0; at = text.indexOf(head, at + 1)) {
    let j = head.length;
    while (j < needle.length && (needle[j] === ' ' || needle[j] === text[at + j])) j++;
    if (j === needle.length) return at;
  }
  return -1;
}

/** Each statement reached only where earlier ones took no row (plpgsql-found.ts) says which, by their spans. */
function placeTookNothing(took: Map<object, object[]>, queries: PlpgsqlQuery[], produced: Map<object, StatementFacts[]>): void {
  for (const query of queries) {
    const setters = took.get(query.expr);
    if (!setters) continue;
    const spans = setters.flatMap((expr) => produced.get(expr) ?? []).filter((s) => s.lockingReads.length > 0 || s.rowWrites.length > 0);
    if (spans.length === 0) continue;
    for (const facts of produced.get(query.expr) ?? []) {
      facts.plpgsql = { ...(facts.plpgsql ?? { inLoop: query.place.inLoop, guardedBy: query.place.guardedBy }), tookNothing: spans.map((s) => ({ start: s.span.start, end: s.span.end })) };
    }
  }
}

/** Types the PL/pgSQL parser reads as a scalar, or that must keep their own kind (record, cursor, %TYPE). */
const KEEP_TYPE = /^(?:record|refcursor|cursor|alias|(?:no\s+)?scroll|constant|bigint|int[248]?|integer|smallint|bigserial|serial[248]?|smallserial|boolean|bool|text|varchar|character|char|bpchar|name|numeric|decimal|real|double|float[48]?|money|date|time|timetz|timestamp|timestamptz|interval|json|jsonb|uuid|bytea|xml|inet|cidr|macaddr8?|oid|regclass|regproc|regprocedure|regtype|regrole|regnamespace|tsvector|tsquery|bit|varbit|point|line|lseg|box|path|polygon|circle|pg_lsn|trigger|void)\b/i;

/**
 * The routine's text with each declared variable of a type the parser cannot
 * know (a user's enum, domain or composite, `my_status` or `app.state[]`)
 * declared as `text` instead, padded to the same length so every offset stays
 * right; undefined when there is none. libpg-query's PL/pgSQL parser has no
 * catalog and reads an unknown type as a record, and then rejects
 * `SELECT a, b INTO v_status, v_flag` ("record variable cannot be part of
 * multiple-item INTO list") that PostgreSQL compiles for an enum. A variable
 * whose fields the body reads (`v.id`) is a composite, and is left as it is.
 */
export function withScalarDeclarations(stmtText: string, bodyOffset: number, bodyLength: number): string | undefined {
  const body = stmtText.slice(bodyOffset, bodyOffset + bodyLength);
  const code = codeOnly(body);
  const edits: { start: number; end: number }[] = [];
  for (const declare of code.matchAll(/\bdeclare\b/gi)) {
    let at = declare.index + declare[0].length;
    for (;;) {
      const semicolon = code.indexOf(';', at);
      if (semicolon < 0) break;
      const declaration = code.slice(at, semicolon);
      if (/^\s*begin\b/i.test(declaration) || /^\s*declare\b/i.test(declaration)) break;
      const parts = /^(\s*(?:<<\w+>>\s*)?("?)([A-Za-z_][\w$]*)\2\s+(?:constant\s+)?)([^]*?)(?=\s+(?:not\s+null|default|collate)\b|\s*:?=|\s*$)/i.exec(declaration);
      at = semicolon + 1;
      if (!parts) continue;
      const [, head, , variable, type] = parts;
      if (!type || KEEP_TYPE.test(type) || /%(?:row)?type\b/i.test(type) || /\bfor\b/i.test(type)) continue;
      if (new RegExp(`(?<![\\w$."])${escapeRegExp(variable)}"?\\s*\\.\\s*[A-Za-z_"*]`, 'i').test(code)) continue;
      const start = semicolon - declaration.length + head.length;
      edits.push({ start, end: start + type.length });
    }
  }
  if (edits.length === 0) return undefined;
  let out = stmtText.slice(0, bodyOffset);
  let last = 0;
  for (const edit of edits) {
    const width = edit.end - edit.start;
    out += body.slice(last, edit.start) + (width >= 4 ? 'text'.padEnd(width) : 'int'.padEnd(width));
    last = edit.end;
  }
  return out + body.slice(last) + stmtText.slice(bodyOffset + bodyLength);
}

/**
 * The routine's text with each assignment to a field of a `%ROWTYPE` variable (`v_row.status := 'expired';`) written
 * as PERFORM of its value, padded to the same length; undefined when there is none, or a target is too short to hold
 * the keyword. The PL/pgSQL parser knows no table's columns and rejects the target; the value's calls stay in place.
 */
export function withRowFieldAssignments(stmtText: string, bodyOffset: number, bodyLength: number): string | undefined {
  const body = stmtText.slice(bodyOffset, bodyOffset + bodyLength);
  const code = codeOnly(body);
  const rows = [...code.matchAll(/\b([A-Za-z_][\w$]*)\s+[\w$."]+%rowtype\b/gi)].map((m) => m[1].toLowerCase());
  if (rows.length === 0) return undefined;
  const edits: { start: number; end: number }[] = [];
  // A statement's start (after `;`, a block keyword or a label), then `row.field :=` or `row.field =`.
  for (const m of code.matchAll(/(?<=(?:^|;|\bbegin|\bthen|\belse|\bloop|>>)\s*)([A-Za-z_][\w$]*)\s*\.\s*"?[A-Za-z_][\w$]*"?\s*:?=(?!=)/gi)) {
    if (!rows.includes(m[1].toLowerCase())) continue;
    if (m[0].length < 'perform'.length) return undefined;
    edits.push({ start: m.index, end: m.index + m[0].length });
  }
  if (edits.length === 0) return undefined;
  let out = stmtText.slice(0, bodyOffset);
  let last = 0;
  for (const edit of edits) {
    out += body.slice(last, edit.start) + 'perform'.padEnd(edit.end - edit.start);
    last = edit.end;
  }
  return out + body.slice(last) + stmtText.slice(bodyOffset + bodyLength);
}

/** The last word of a built-in type that can end a name before `[]` (`character varying[]`, `timestamp with time zone[]`). */
const KEEP_ARRAY_WORD = /^(?:varying|precision|zone)$/i;

/**
 * The routine's text with each array of a type the parser cannot know in its header (before the body: the return
 * type, RETURNS TABLE columns, OUT parameters) written `text[]` instead, padded to the same length; undefined when
 * there is none. The parser reads `requirement[]` as record[] and rejects a function returning it, where PostgreSQL
 * returns an array of the user's composite; what the body's statements do does not depend on that type.
 */
export function withKnownArrayTypes(stmtText: string, bodyOffset: number): string | undefined {
  // Comments and string literals blanked; quoted names kept (`"Step"[]`).
  const header = stmtText.slice(0, bodyOffset).replace(/--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'/g, (m) => m.replace(/[^\n]/g, ' '));
  let out = stmtText;
  let changed = false;
  for (const m of header.matchAll(/(?<![\w$."])(?:(?:"[^"]+"|[A-Za-z_][\w$]*)\s*\.\s*)?(?:"[^"]+"|[A-Za-z_][\w$]*)(?=\s*\[\s*\d*\s*\])/g)) {
    const [whole] = m;
    // A schema's own type is the user's even where its name is a built-in's (`billing.line`), pg_catalog's is not.
    const bare = whole.replace(/"/g, '').replace(/^pg_catalog\s*\.\s*/i, '');
    if (KEEP_TYPE.test(bare) || KEEP_ARRAY_WORD.test(bare) || /^any/i.test(bare) || whole.length < 3) continue;
    out = out.slice(0, m.index) + (whole.length >= 4 ? 'text' : 'int').padEnd(whole.length) + out.slice(m.index + whole.length);
    changed = true;
  }
  return changed ? out : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `'...' || x`, `format(...)`: an assignment that builds SQL text for a later EXECUTE. */
function isStringExpression(text: string): boolean {
  return /^\s*(?:format\s*\(|concat\s*\(|E?'|\$\w*\$)/i.test(text) || /\|\|/.test(text);
}

/** The parameter names of a PL/pgSQL function as its tree lists them (a DO block has none). */
function plpgsqlParameters(functions: Node[]): string[] {
  const fn = functions[0]?.PLpgSQL_function;
  return fn?.fn_nargs ? (fn.datums ?? []).slice(0, fn.fn_nargs).map((d: Node) => String(d.PLpgSQL_var?.refname ?? '').toLowerCase()) : [];
}

interface NestedOptions {
  parameters: readonly string[];
  /** PL/pgSQL variables that keep their declared value (routine-constants.ts). */
  constants?: ReadonlyMap<string, Node>;
  /** The FOR loop over a query the statement runs in (plpgsql-loops.ts). */
  loop?: LoopRows;
  exceptionGuard?: boolean;
  /** Where the statement sits in its PL/pgSQL body (loop, protected block, handler). */
  plpgsql?: PlpgsqlPlace;
  template?: DynamicTemplate;
  /** The text is a whole SQL-language body: a parse failure is the user's error, reported as PL/pgSQL's are. */
  reportParseError?: boolean;
}

/** Parses one statement text of a routine body; its UTF-16 index i is at `place(i)` in the caller's text. */
function nested(sqlText: string, place: (index: number) => number, routine: RoutineInfo, out: SqlAnalysis, options: NestedOptions): void {
  if (!sqlText.trim()) return;
  const holes = options.template?.holes ?? [];
  const { result, normalized } = holes.length
    ? parseWithPlaceholders(sqlText, 'dollar', holes)
    : { result: parseStatements(sqlText), normalized: undefined };
  if (!result.ok) {
    if (options.reportParseError) {
      const at = place(byteToUtf16Map(sqlText)(result.cursorByte));
      out.errors.push({ message: `SQL body of ${routine.name}: ${result.message}`, span: { start: at, end: at } });
    }
    return; // Otherwise PL/pgSQL accepted it: an expression or a run-time text we cannot parse alone is not the user's error
  }
  const parsedText = normalized?.sql ?? sqlText;
  const toUtf16 = byteToUtf16Map(parsedText);
  const at = normalized ? (byte: number) => place(normalized.toOriginal(toUtf16(byte))) : (byte: number) => place(toUtf16(byte));
  const length = Buffer.byteLength(parsedText);
  for (const parsed of result.statements) {
    const endByte = parsed.length === undefined ? length : parsed.location + parsed.length;
    // In a dynamic statement's text a name is not the routine's variable: the holes and USING values are its placeholders.
    const stmt = options.template ? parsed.stmt : routineReading(parsed.stmt, routine, options);
    const facts = extractFacts(stmt, {
      at,
      statement: { start: at(parsed.location), end: Math.max(at(parsed.location) + 1, at(endByte)) },
      wordEnd: wordEndIn(parsedText),
      parameters: options.parameters,
      exceptionGuard: options.exceptionGuard,
    });
    facts.routine = routine;
    const where = options.plpgsql;
    if (where && (where.inLoop || where.guardedBy.length > 0 || where.handlerOf !== undefined || where.onlyIf || where.raisesNext)) facts.plpgsql = where;
    if (options.template) {
      facts.dynamic = true;
      unliteralHoles(facts, options.template);
    }
    out.statements.push(facts);
  }
}

/** A statement of a routine as PostgreSQL runs it: constant variables as their values, a loop's row as the loop's rows, parameters as placeholders. */
function routineReading(stmt: Node, routine: RoutineInfo, options: NestedOptions): Node {
  const constants = options.constants;
  const prepare = (node: Node) => (constants ? constantsInStatement(node, constants) : node);
  const read = options.loop ? withLoopRows(prepare(stmt), options.loop, prepare) : prepare(stmt);
  return parametersAsPlaceholders(read, options.parameters, routine.name);
}

/** `SET x = %I` reads the hole as a literal name; it is a value filled at run time. */
function unliteralHoles(facts: StatementFacts, template: DynamicTemplate): void {
  const names = new Set(template.holeNames);
  for (const write of facts.settingWrites) {
    if (write.value?.kind === 'literal' && typeof write.value.value === 'string' && (names.has(write.value.value) || /^pgq_param_\d+$/.test(write.value.value))) {
      write.value = { kind: 'expression' } satisfies SettingValue;
    }
    if (write.name && (names.has(write.name) || /^pgq_param_\d+$/.test(write.name))) write.name = undefined;
  }
}

/** The statements of a BEGIN ATOMIC ... END body: already parsed, in the same text as the CREATE. */
function atomicBody(items: Node[], stmtText: string, sql: string, at: (byte: number) => number, routine: RoutineInfo, place: Place, span: Span, out: SqlAnalysis): void {
  const begin = /\bbegin\s+atomic\b/i.exec(stmtText);
  const bodyStart = begin ? begin.index + begin[0].length : 0;
  const bodyEnd = Math.max(bodyStart, stmtText.search(/\bend\s*;?\s*$/i));
  const spans = splitStatements(stmtText.slice(bodyStart, bodyEnd));
  items.forEach((item, i) => {
    const piece = spans.length === items.length ? spans[i] : undefined;
    const statement = piece ? trim(stmtText, { start: bodyStart + piece.start, end: bodyStart + piece.end }) : undefined;
    const facts = extractFacts(parametersAsPlaceholders(item, routine.parameters ?? [], routine.name), {
      at,
      statement: statement ? { start: place(statement.start), end: place(statement.end) } : span,
      wordEnd: wordEndIn(sql),
      parameters: routine.parameters ?? [],
    });
    facts.routine = routine;
    out.statements.push(facts);
  });
}

function trim(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /[\s;]/.test(text[end - 1])) end--;
  return { start, end };
}

interface PlpgsqlQuery {
  text: string;
  perform: boolean;
  expression: boolean;
  /** In a block whose EXCEPTION handler catches a failed cast. */
  guarded: boolean;
  /** EXECUTE, FOR ... IN EXECUTE, RETURN QUERY EXECUTE, OPEN ... FOR EXECUTE: `text` is the expression that builds the SQL. */
  dynamic: boolean;
  /** The texts of EXECUTE ... USING arguments ($1 in the built SQL is the first). */
  using: string[];
  /** The variable an assignment writes. */
  assigns?: string;
  place: PlpgsqlPlace;
  /** The PLpgSQL_expr object of the tree it was read from. */
  expr: object;
}

const PLPGSQL_LOOPS = new Set(['PLpgSQL_stmt_fors', 'PLpgSQL_stmt_dynfors', 'PLpgSQL_stmt_forc', 'PLpgSQL_stmt_fori', 'PLpgSQL_stmt_foreach_a', 'PLpgSQL_stmt_loop', 'PLpgSQL_stmt_while']);

const DYNAMIC_STATEMENTS: Record<string, string> = {
  PLpgSQL_stmt_dynexecute: 'query',
  PLpgSQL_stmt_dynfors: 'query',
  PLpgSQL_stmt_return_query: 'dynquery',
  PLpgSQL_stmt_open: 'dynquery',
};

/** Simple statements (no branch, no loop, no RETURN) followed at once by `RAISE EXCEPTION` (or a RAISE of ERROR level). */
const SIMPLE_STATEMENTS = new Set(['PLpgSQL_stmt_perform', 'PLpgSQL_stmt_execsql', 'PLpgSQL_stmt_dynexecute', 'PLpgSQL_stmt_assign']);

function raisesAfter(item: unknown, next: unknown): boolean {
  if (!item || typeof item !== 'object' || !next || typeof next !== 'object') return false;
  if (!Object.keys(item).some((k) => SIMPLE_STATEMENTS.has(k))) return false;
  const raise = (next as Node).PLpgSQL_stmt_raise as Node | undefined;
  return !!raise && (raise.elog_level === undefined || raise.elog_level >= ERROR_LEVEL);
}

/**
 * An IF's test tells what the call passed only for a parameter the body never changes (`p := ...`, `SELECT ... INTO
 * p`): the others are dropped from each place.
 */
function keepParameterTests(queries: PlpgsqlQuery[], parameters: readonly string[], body: string): void {
  const assigned = new Set(queries.flatMap((q) => (q.assigns ? [q.assigns] : [])));
  const intoTargets = new Set([...body.toLowerCase().matchAll(/\binto\s+(?:strict\s+)?([\w$]+(?:\s*,\s*[\w$]+)*)/g)].flatMap((m) => m[1].split(/\s*,\s*/)));
  const kept = (t: ParameterTest) => parameters.includes(t.parameter) && !assigned.has(t.parameter) && !intoTargets.has(t.parameter);
  for (const query of queries) {
    if (!query.place.onlyIf) continue;
    const tests = query.place.onlyIf.filter(kept);
    const { onlyIf: _dropped, ...rest } = query.place;
    query.place = tests.length > 0 ? { ...rest, onlyIf: tests } : rest;
  }
}

/** A condition that tests one name against a constant as ParameterTest says (whether the name is a parameter is the caller's to check). */
function parameterTest(condition: string): ParameterTest | undefined {
  const text = condition.trim().replace(/^\(\s*([\s\S]*?)\s*\)$/, '$1');
  const compared = /^([a-z_][\w$]*)\s*(>=|>|<>|!=)\s*(-?\d+(?:\.\d+)?)$/i.exec(text);
  if (compared) {
    const test = compared[2] === '!=' ? '<>' : (compared[2] as '>' | '>=' | '<>');
    return { parameter: compared[1].toLowerCase(), test, than: Number(compared[3]) };
  }
  const notNull = /^([a-z_][\w$]*)\s+is\s+not\s+null$/i.exec(text);
  if (notNull) return { parameter: notNull[1].toLowerCase(), test: 'is not null' };
  const flag = /^([a-z_][\w$]*)(?:\s*=\s*true|\s+is\s+true)?$/i.exec(text);
  if (flag && !/^(?:true|false|found|null)$/i.test(flag[1])) return { parameter: flag[1].toLowerCase(), test: 'is true' };
  return undefined;
}

/** Every SQL text a PL/pgSQL function executes, in source order. */
function plpgsqlQueries(functions: Node[]): PlpgsqlQuery[] {
  const queries: PlpgsqlQuery[] = [];
  const datums = (functions[0]?.PLpgSQL_function?.datums ?? []) as Node[];
  let blocks = 0;
  const visit = (value: any, parentType: string | undefined, parent: Node | undefined, guarded: boolean, place: PlpgsqlPlace) => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, parentType, parent, guarded, raisesAfter(item, value[i + 1]) ? { ...place, raisesNext: true } : place));
      return;
    }
    for (const key of Object.keys(value)) {
      const child = value[key];
      if (key === 'PLpgSQL_stmt_block' && child?.exceptions) {
        const handlers = (child.exceptions.PLpgSQL_exception_block?.exc_list ?? []) as Node[];
        const catches = handlers.some((h) =>
          ((h.PLpgSQL_exception?.conditions ?? []) as Node[]).some((c) => CAST_ERROR_CONDITIONS.has(String(c.PLpgSQL_condition?.condname ?? '').toLowerCase())),
        );
        const block = ++blocks;
        visit(child.body, key, child, guarded || catches, { ...place, guardedBy: [...place.guardedBy, block] });
        visit(child.exceptions, key, child, guarded, { ...place, handlerOf: block });
        continue;
      }
      if (key === 'PLpgSQL_expr' && child?.query) {
        const text = String(child.query);
        const dynamicKey = parentType ? DYNAMIC_STATEMENTS[parentType] : undefined;
        if (dynamicKey && parent?.[dynamicKey]?.PLpgSQL_expr === child) {
          const using = ((parent?.params ?? []) as Node[]).map((p) => String(p.PLpgSQL_expr?.query ?? ''));
          queries.push({ text, perform: false, expression: false, guarded, place, dynamic: true, using, expr: child });
        } else if (parentType === 'PLpgSQL_stmt_dynexecute' || parentType === 'PLpgSQL_stmt_dynfors') {
          // USING arguments: expressions evaluated in the routine.
          queries.push({ text, perform: false, expression: true, guarded, place, dynamic: false, using: [], expr: child });
        } else if (parentType === 'PLpgSQL_stmt_assign') {
          // Since PostgreSQL 14 an assignment keeps its target: "t := expr".
          const target = /^[\s\S]*?:?=\s*/.exec(text);
          const assigns = String(datums[parent?.varno]?.PLpgSQL_var?.refname ?? '').toLowerCase() || undefined;
          queries.push({ text: target ? text.slice(target[0].length) : text, perform: false, expression: true, guarded, place, dynamic: false, using: [], assigns, expr: child });
        } else {
          const perform = parentType === 'PLpgSQL_stmt_perform';
          queries.push({ text, perform, expression: child.parseMode !== undefined && child.parseMode !== 0 && !perform, guarded, place, dynamic: false, using: [], expr: child });
        }
        continue;
      }
      const isStatement = key.startsWith('PLpgSQL_stmt');
      if (key === 'PLpgSQL_stmt_if' && child && typeof child === 'object') {
        // The THEN branch of a test of a parameter runs only when the call's argument passes it.
        const test = parameterTest(String(child.cond?.PLpgSQL_expr?.query ?? ''));
        for (const field of Object.keys(child)) {
          const within = field === 'then_body' && test ? { ...place, onlyIf: [...(place.onlyIf ?? []), test] } : place;
          visit(child[field], key, child, guarded, within);
        }
        continue;
      }
      if (isStatement && PLPGSQL_LOOPS.has(key) && child && typeof child === 'object') {
        // A loop's body runs once per row; its own query (and its other fields) run once.
        for (const field of Object.keys(child)) visit(child[field], key, child, guarded, field === 'body' ? { ...place, inLoop: true } : place);
        continue;
      }
      visit(child, isStatement ? key : parentType, isStatement ? child : parent, guarded, place);
    }
  };
  visit(functions, undefined, undefined, false, { inLoop: false, guardedBy: [] });
  return queries;
}
