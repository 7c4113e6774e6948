// Which jobs need no check. A connection comes back with a setting changed
// only if some statement the job sent wrote one at session level, or called
// a routine that could; transaction-local writes (set_config(..., true),
// SET LOCAL) end with their transaction. So a job whose every query text is
// made only of statements that write settings locally, read, write rows and
// call built-in functions, and that released the connection outside a
// transaction, provably left no setting behind: its next checkout needs no
// round trip. Texts are parsed with the real PostgreSQL parser (libpg-query,
// as the scanner does) and the verdict is kept per text.
//
// Anything else is unproven and checked as before: a text that does not
// parse, a session write (SET, set_config(..., false), a computed is_local),
// RESET (it sets the session value), a call of a function that is not a
// built-in (it may write a setting), CALL, DO, any statement kind not listed
// below. Not seen in the text, and so not covered: functions run implicitly
// by triggers, policies, column defaults or views. If those write settings,
// turn this off with `elide: false`.
import type { Node } from '../sql/extract.ts';
import { loadSqlParser } from '../sql/index.ts';
import { parseStatements } from '../sql/parser.ts';

/** Statement kinds that cannot leave a setting behind by themselves (their expressions are still read). */
const PLAIN_STATEMENTS = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'VariableShowStmt',
  'LockStmt',
  'NotifyStmt',
  'ExplainStmt',
]);

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
 * Built-in functions a job's statements commonly call; none writes a setting.
 * Unqualified names resolve to pg_catalog first unless search_path says
 * otherwise; pg_catalog.* is built-in whatever its name.
 */
const BUILTIN_FUNCTIONS = new Set(
  (
    'now clock_timestamp statement_timestamp transaction_timestamp timeofday current_setting count sum min max avg ' +
    'array_agg string_agg json_agg jsonb_agg json_object_agg jsonb_object_agg bool_and bool_or every row_number rank dense_rank ' +
    'lag lead first_value last_value ntile percent_rank cume_dist lower upper length char_length octet_length substring substr ' +
    'trim btrim ltrim rtrim replace concat concat_ws format left right position strpos split_part regexp_replace regexp_match ' +
    'regexp_matches md5 sha256 encode decode to_char to_timestamp to_date to_number date_trunc date_part extract age make_interval ' +
    'justify_interval abs round floor ceil ceiling trunc mod power sqrt random gen_random_uuid uuid_generate_v4 greatest least ' +
    'array_length array_position array_positions array_remove array_append array_prepend array_cat cardinality unnest ' +
    'generate_series json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb row_to_json ' +
    'jsonb_set jsonb_insert jsonb_strip_nulls json_array_elements jsonb_array_elements json_each jsonb_each jsonb_object_keys ' +
    'jsonb_array_length json_array_length jsonb_typeof jsonb_path_query jsonb_path_exists nextval currval lastval setval ' +
    'pg_advisory_xact_lock pg_try_advisory_xact_lock pg_advisory_xact_lock_shared pg_try_advisory_xact_lock_shared ' +
    'txid_current pg_current_xact_id pg_notify pg_sleep coalesce nullif'
  ).split(' '),
);

/** Texts remembered (verdicts per text); dynamic texts beyond this evict the oldest. */
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

const verdicts = new Map<string, boolean>();

/** True when the statements of `text` provably leave no session setting behind once their transaction ended. */
export function textLeavesNoSetting(text: string): boolean {
  if (!parserReady || text.length > MAX_TEXT_LENGTH) return false;
  const known = verdicts.get(text);
  if (known !== undefined) return known;
  const verdict = judge(text);
  if (verdicts.size >= MAX_TEXTS) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(text, verdict);
  return verdict;
}

function judge(text: string): boolean {
  const parsed = parseStatements(text);
  if (!parsed.ok) return false;
  return parsed.statements.every(({ stmt }) => statementIsPlain(stmt));
}

function statementIsPlain(stmt: Node): boolean {
  const [kind, body] = Object.entries(stmt)[0] ?? [];
  if (!kind || typeof body !== 'object' || body === null) return false;
  const node = body as Record<string, unknown>;
  if (kind === 'TransactionStmt') return TRANSACTION_KINDS.has(String(node.kind));
  if (kind === 'VariableSetStmt') {
    // SET LOCAL, SET TRANSACTION ...: they end with the transaction. SET, RESET, SET SESSION ...: they do not.
    const local = node.is_local === true || (node.kind === 'VAR_SET_MULTI' && node.name === 'TRANSACTION');
    return local && expressionsArePlain(node.args);
  }
  if (!PLAIN_STATEMENTS.has(kind)) return false;
  return expressionsArePlain(node);
}

/** Every function called anywhere under `value` is a built-in, and set_config only with is_local true. */
function expressionsArePlain(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    for (const [key, child] of Object.entries(current as Record<string, unknown>)) {
      if (key === 'FuncCall' && !callIsPlain(child as Record<string, unknown>)) return false;
      // A statement nested in an expression or CTE (data-modifying WITH, EXPLAIN's query) is judged as a statement.
      if ((key === 'CallStmt' || key === 'DoStmt' || key === 'VariableSetStmt' || key === 'CreateFunctionStmt')) return false;
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return true;
}

function callIsPlain(call: Record<string, unknown>): boolean {
  const names = ((call.funcname as { String?: { sval?: string } }[] | undefined) ?? []).map((part) => part.String?.sval?.toLowerCase());
  if (names.length === 0 || names.some((n) => n === undefined)) return false;
  const name = names[names.length - 1]!;
  const schema = names.length > 1 ? names[0] : undefined;
  if (schema !== undefined && schema !== 'pg_catalog') return false;
  if (name === 'set_config') return isTrueLiteral((call.args as unknown[] | undefined)?.[2]);
  return schema === 'pg_catalog' || BUILTIN_FUNCTIONS.has(name);
}

/** `true` written in the text (libpg-query: A_Const boolval true, or a 'true'/'t'/'on' string cast to boolean). */
function isTrueLiteral(arg: unknown): boolean {
  const constant = (arg as { A_Const?: { boolval?: { boolval?: boolean }; sval?: { sval?: string } } } | undefined)?.A_Const;
  if (constant?.boolval?.boolval === true) return true;
  const cast = (arg as { TypeCast?: { arg?: { A_Const?: { sval?: { sval?: string } } } } } | undefined)?.TypeCast;
  const text = cast?.arg?.A_Const?.sval?.sval ?? constant?.sval?.sval;
  return text !== undefined && /^(true|t|on|yes|y|1)$/i.test(text.trim());
}
