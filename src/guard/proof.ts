// Which jobs need no check. A connection comes back with a setting changed
// only if some statement the job sent wrote one at session level, or ran code
// that could; transaction-local writes (set_config('x.y', ..., true), SET
// LOCAL x.y) end with their transaction. A job is proven clean when every
// query text it sent is made only of such local writes, reads and row writes,
// and calls nothing but an allowlist of pg_catalog built-ins that run no SQL
// text and write no setting, and it released outside a transaction. Texts are
// parsed with the real PostgreSQL parser (libpg-query) and what a text needs
// is kept per text.
//
// The text alone does not say what the server runs: `lower(1)` is a user's
// public.lower(int) if one exists, a string literal parses differently with
// standard_conforming_strings off, an operator or a cast may call a user
// function. So a verdict lists the names it relies on, and the connection's
// facts (read from the catalog with the check, src/guard/check.ts) decide:
// a name that also exists outside pg_catalog, in any schema, is unknown, and
// a text that uses it is checked. Quoted names are compared exactly, as the
// server does (the parser folds unquoted ones). Anything unknown is checked.
import type { Node } from '../sql/extract.ts';
import { loadSqlParser } from '../sql/index.ts';
import { parseStatements } from '../sql/parser.ts';

/** Statement kinds that cannot leave a setting behind by themselves (their expressions are still read). */
const PLAIN_STATEMENTS = new Set(['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'VariableShowStmt', 'LockStmt', 'NotifyStmt']);
/** Of those, the ones that store values into columns (domain checks and assignment casts run there). */
const ROW_WRITES = new Set(['InsertStmt', 'UpdateStmt', 'MergeStmt']);

/** TransactionStmt kinds of one ordinary transaction (PREPARE TRANSACTION leaves it to another session). */
const TRANSACTION_KINDS = new Set([
  'TRANS_STMT_BEGIN',
  'TRANS_STMT_START',
  'TRANS_STMT_COMMIT',
  'TRANS_STMT_ROLLBACK',
  'TRANS_STMT_SAVEPOINT',
  'TRANS_STMT_RELEASE',
  'TRANS_STMT_ROLLBACK_TO',
]);

/**
 * pg_catalog functions a job's statements commonly call. None runs SQL text
 * (query_to_xml, ts_stat, cursor_to_xml, table_to_xml..., dblink are left
 * out on purpose), writes a setting, or calls a routine of the user's. The
 * parser itself writes some syntax as pg_catalog calls (extract, substring,
 * position, trim, overlay, AT TIME ZONE, SIMILAR TO).
 */
export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set(
  (
    'now clock_timestamp statement_timestamp transaction_timestamp timeofday current_setting set_config count sum min max avg ' +
    'array_agg string_agg json_agg jsonb_agg bool_and bool_or every row_number rank dense_rank ' +
    'lag lead first_value last_value ntile percent_rank cume_dist lower upper length char_length octet_length substring substr ' +
    'btrim ltrim rtrim replace concat concat_ws left right position strpos split_part regexp_replace regexp_match ' +
    'regexp_matches md5 sha256 encode decode to_char to_timestamp to_date to_number date_trunc date_part extract age make_interval ' +
    'justify_interval abs round floor ceil ceiling trunc mod power sqrt random gen_random_uuid ' +
    'array_length array_position array_positions array_remove array_append array_prepend array_cat cardinality unnest ' +
    'generate_series json_build_object jsonb_build_object json_build_array jsonb_build_array ' +
    'jsonb_set jsonb_insert jsonb_strip_nulls json_array_elements jsonb_array_elements jsonb_object_keys ' +
    'jsonb_array_length json_array_length jsonb_typeof jsonb_path_query jsonb_path_exists nextval currval lastval ' +
    'pg_advisory_xact_lock pg_try_advisory_xact_lock pg_advisory_xact_lock_shared pg_try_advisory_xact_lock_shared ' +
    'txid_current pg_current_xact_id pg_notify pg_sleep overlay timezone similar_to_escape'
  ).split(' '),
);

/** Operators of built-in types a job's statements commonly use (`!=` is parsed as `<>`). */
export const BUILTIN_OPERATORS: ReadonlySet<string> = new Set(
  '= <> < > <= >= + - * / % || ~~ ~~* !~~ !~~* ~ ~* !~ !~* -> ->> #> #>> @> <@ ? ?| ?& &&'.split(' '),
);

/**
 * Built-in type names a cast may name. The parser writes SQL-standard names
 * (int, integer, boolean, varchar, timestamp...) as pg_catalog.int4 and so on;
 * written bare (int4, text, uuid), a name resolves through search_path.
 */
export const BUILTIN_TYPES: ReadonlySet<string> = new Set(
  'bool int2 int4 int8 float4 float8 numeric text varchar bpchar name date time timetz timestamp timestamptz interval uuid json jsonb bytea oid'.split(' '),
);

/** What the connection's catalog says, read with a check (src/guard/check.ts). */
export interface ConnectionFacts {
  /** standard_conforming_strings is on: string literals parse as libpg-query parses them. */
  standardStrings: boolean;
  /** Allowlisted function, operator and type names that also exist outside pg_catalog: unknown here. */
  shadowedFunctions: ReadonlySet<string>;
  shadowedOperators: ReadonlySet<string>;
  shadowedTypes: ReadonlySet<string>;
  /** A cast runs a function outside pg_catalog: any coercion may run user code. */
  userCasts: boolean;
  /** A domain's CHECK calls a function or operator outside pg_catalog: storing a value may run it. */
  userDomainChecks: boolean;
  /** Names of relations on which the server runs user code the text does not show (triggers, policies, views...). */
  implicitRelations: ReadonlySet<string>;
}

/** What one text needs to be harmless; null when it is never provable (it is checked). */
export interface TextNeeds {
  /** Unqualified names, each in the allowlists above; the facts must not shadow them. */
  functions: readonly string[];
  operators: readonly string[];
  types: readonly string[];
  /** Stores values into columns (INSERT, UPDATE, MERGE). */
  writesRows: boolean;
  /** Relation (and CTE) names the text reads or writes, unqualified. */
  relations: readonly string[];
}

/** Texts remembered; dynamic texts beyond this evict the oldest. */
const MAX_TEXTS = 2000;
/** Texts longer than this are not parsed: unproven. */
const MAX_TEXT_LENGTH = 64 * 1024;

let parserReady = false;
let parserLoading: Promise<void> | undefined;

/** Starts loading the SQL parser; until it is there, every job is unproven (checked). */
export function loadProver(): Promise<void> {
  parserLoading ??= loadSqlParser().then(
    () => {
      parserReady = true;
    },
    () => undefined, // no parser: every job is checked, as without proofs
  );
  return parserLoading;
}

interface Verdict {
  needs: TextNeeds | null;
  /** The text may change the catalog (DDL, DO, CALL, a text that does not parse): facts read before it are stale. */
  catalog: boolean;
}

const verdicts = new Map<string, Verdict>();
const UNREAD: Verdict = { needs: null, catalog: true };

function verdictOf(text: string): Verdict {
  if (!parserReady || text.length > MAX_TEXT_LENGTH) return UNREAD;
  const known = verdicts.get(text);
  if (known !== undefined) return known;
  const verdict = judge(text);
  if (verdicts.size >= MAX_TEXTS) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(text, verdict);
  return verdict;
}

/** What `text` needs in order to leave no session setting behind; null: unproven (never elided). */
export function needsOf(text: string): TextNeeds | null {
  return verdictOf(text).needs;
}

/** True when `text` may have changed the catalog (what names resolve to): every connection's facts are stale. */
export function mayChangeCatalog(text: string): boolean {
  return verdictOf(text).catalog;
}

/** True when a text with these needs provably leaves no setting on a connection with these facts. */
export function harmlessOn(needs: TextNeeds | null, facts: ConnectionFacts | undefined): boolean {
  if (!needs || !facts || !facts.standardStrings || facts.userCasts) return false;
  if (needs.writesRows && facts.userDomainChecks) return false;
  for (const name of needs.functions) if (facts.shadowedFunctions.has(name)) return false;
  for (const name of needs.operators) if (facts.shadowedOperators.has(name)) return false;
  for (const name of needs.types) if (facts.shadowedTypes.has(name)) return false;
  for (const name of needs.relations) if (facts.implicitRelations.has(name)) return false;
  return true;
}

/** Convenience for one text on a connection with these facts. */
export function textLeavesNoSetting(text: string, facts: ConnectionFacts): boolean {
  return harmlessOn(needsOf(text), facts);
}

class Needs {
  functions = new Set<string>();
  operators = new Set<string>();
  types = new Set<string>();
  relations = new Set<string>();
  writesRows = false;
}

/** Statement kinds that cannot change the catalog by themselves (routines they call are not followed). */
const CATALOG_NEUTRAL = new Set([...PLAIN_STATEMENTS, 'TransactionStmt', 'VariableSetStmt']);

function judge(text: string): Verdict {
  const parsed = parseStatements(text);
  if (!parsed.ok) return UNREAD;
  const catalog = parsed.statements.some(({ stmt }) => !CATALOG_NEUTRAL.has(entry(stmt)?.[0] ?? ''));
  const needs = new Needs();
  for (const { stmt } of parsed.statements) if (!statementIsPlain(stmt, needs)) return { needs: null, catalog };
  return {
    needs: {
      functions: [...needs.functions],
      operators: [...needs.operators],
      types: [...needs.types],
      writesRows: needs.writesRows,
      relations: [...needs.relations],
    },
    catalog,
  };
}

function entry(node: unknown): [string, Record<string, unknown>] | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const [kind, body] = Object.entries(node)[0] ?? [];
  if (!kind || typeof body !== 'object' || body === null) return undefined;
  return [kind, body as Record<string, unknown>];
}

function statementIsPlain(stmt: Node, needs: Needs): boolean {
  const found = entry(stmt);
  if (!found) return false;
  const [kind, node] = found;
  if (kind === 'TransactionStmt') {
    // BEGIN ISOLATION LEVEL ... carries DefElem options with constants only.
    return TRANSACTION_KINDS.has(String(node.kind)) && expressionsArePlain(node.options, needs);
  }
  if (kind === 'VariableSetStmt') {
    // SET TRANSACTION ... ends with the transaction. SET LOCAL only of a custom (dotted) name: a local
    // search_path or standard_conforming_strings would change what the rest of the transaction means.
    if (node.kind === 'VAR_SET_MULTI' && node.name === 'TRANSACTION') return expressionsArePlain(node.args, needs);
    return node.is_local === true && node.kind === 'VAR_SET_VALUE' && isCustomName(node.name) && expressionsArePlain(node.args, needs);
  }
  if (!PLAIN_STATEMENTS.has(kind)) return false;
  if (ROW_WRITES.has(kind)) needs.writesRows = true;
  return expressionsArePlain(node, needs);
}

function isCustomName(name: unknown): boolean {
  return typeof name === 'string' && /^[a-z_][a-z0-9_$]*\.[a-z_][a-z0-9_$]*$/.test(name);
}

function names(list: unknown): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: string[] = [];
  for (const part of list) {
    const sval = (part as { String?: { sval?: unknown } }).String?.sval;
    if (typeof sval !== 'string') return undefined;
    out.push(sval);
  }
  return out.length > 0 ? out : undefined;
}

/** BETWEEN is spelt as a keyword and runs the comparisons. */
const BETWEEN_OPERATORS = ['<', '>', '<=', '>='];

/** `name` (bare or pg_catalog-qualified) is in `allowed`; a bare one is noted in `needed` for the facts. */
function resolvable(qualified: string[] | undefined, allowed: ReadonlySet<string>, needed: Set<string>): boolean {
  if (!qualified || qualified.length > 2) return false;
  const name = qualified[qualified.length - 1]!;
  if (!allowed.has(name)) return false;
  if (qualified.length === 2) return qualified[0] === 'pg_catalog'; // exact: "PG_CATALOG" is another schema
  needed.add(name);
  return true;
}

/** Every routine, operator and type under `value` is an allowed built-in, and set_config is only local. */
function expressionsArePlain(value: unknown, needs: Needs): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    for (const [key, child] of Object.entries(current as Record<string, unknown>)) {
      const node = child as Record<string, unknown>;
      // A RangeVar, wrapped ({RangeVar: ...}) or held directly (InsertStmt.relation).
      if (typeof node === 'object' && node !== null && typeof node.relname === 'string') needs.relations.add(node.relname);
      switch (key) {
        case 'FuncCall':
          if (!callIsPlain(node, needs)) return false;
          break;
        case 'A_Expr':
          if (String(node.kind).includes('BETWEEN')) for (const op of BETWEEN_OPERATORS) needs.operators.add(op);
          else if (!resolvable(names(node.name), BUILTIN_OPERATORS, needs.operators)) return false;
          break;
        case 'SubLink':
          if (node.operName !== undefined && !resolvable(names(node.operName), BUILTIN_OPERATORS, needs.operators)) return false;
          break;
        case 'CaseExpr':
          if (node.arg !== undefined) needs.operators.add('='); // CASE x WHEN v compares with =
          break;
        case 'TypeName':
        case 'typeName': // TypeCast holds its TypeName unwrapped
          if (!resolvable(names(node.names), BUILTIN_TYPES, needs.types)) return false;
          break;
        default:
          // A statement nested in an expression or CTE (a data-modifying WITH) is allowed only as a plain one.
          if (/^[A-Z]\w*Stmt$/.test(key) && !PLAIN_STATEMENTS.has(key)) return false;
          if (ROW_WRITES.has(key)) needs.writesRows = true;
      }
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return true;
}

function callIsPlain(call: Record<string, unknown>, needs: Needs): boolean {
  const qualified = names(call.funcname);
  if (!resolvable(qualified, BUILTIN_FUNCTIONS, needs.functions)) return false;
  if (qualified![qualified!.length - 1] !== 'set_config') return true;
  // set_config(name, value, is_local): only a custom name written in the text, set locally.
  const args = call.args as unknown[] | undefined;
  return args?.length === 3 && isCustomName(stringLiteral(args[0])) && isTrueLiteral(args[2]);
}

function stringLiteral(arg: unknown): string | undefined {
  const value = (arg as { A_Const?: { sval?: { sval?: unknown } } } | undefined)?.A_Const?.sval?.sval;
  return typeof value === 'string' ? value : undefined;
}

/** `true` written in the text (libpg-query: A_Const boolval true, or a 'true'/'t'/'on' string cast to boolean). */
function isTrueLiteral(arg: unknown): boolean {
  const constant = (arg as { A_Const?: { boolval?: { boolval?: boolean }; sval?: { sval?: string } } } | undefined)?.A_Const;
  if (constant?.boolval?.boolval === true) return true;
  const cast = (arg as { TypeCast?: { arg?: { A_Const?: { sval?: { sval?: string } } } } } | undefined)?.TypeCast;
  const text = cast?.arg?.A_Const?.sval?.sval ?? constant?.sval?.sval;
  return text !== undefined && /^(true|t|on|yes|y|1)$/i.test(text.trim());
}
