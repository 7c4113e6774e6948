// Values in a statement as the rules need them: a literal, a placeholder, a
// parameter of the routine the statement is in, or an expression; and the
// calls of routines that are not built-ins.
import type { CallArgument, RoutineCall, SettingValue, Span } from './facts.ts';
import type { Node } from './extract.ts';

/** A literal constant, also through a cast (`'x'::text`); undefined for anything else. */
export function constValue(node: Node | undefined): string | number | boolean | null | undefined {
  const c = node?.A_Const;
  if (!c) {
    if (node?.TypeCast) return constValue(node.TypeCast.arg);
    return undefined;
  }
  if (c.isnull) return null;
  if (c.sval) return c.sval.sval ?? '';
  if (c.ival) return c.ival.ival ?? 0;
  if (c.fval) return Number(c.fval.fval);
  if (c.boolval) return c.boolval.boolval === true;
  return undefined;
}

/**
 * What a value node is. `parameters` are the enclosing routine's parameter
 * names ($N is parameters[N-1]); outside a routine $N is a host placeholder.
 */
export function valueOf(node: Node | undefined, parameters: readonly string[] | undefined): SettingValue {
  const literal = constValue(node);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  let inner = node;
  while (inner?.TypeCast) inner = inner.TypeCast.arg;
  const param = inner?.ParamRef?.number as number | undefined;
  if (param !== undefined) {
    if (parameters) return { kind: 'routine-parameter', name: parameters[param - 1] || `$${param}` };
    return { kind: 'placeholder', index: param };
  }
  const fields = inner?.ColumnRef?.fields as Node[] | undefined;
  if (parameters && fields) {
    // `p_name` or `fn.p_name` (PL/pgSQL lets a parameter be qualified by the function's name).
    const name = String(fields[fields.length - 1]?.String?.sval ?? '').toLowerCase();
    if (name && parameters.includes(name) && fields.length <= 2) return { kind: 'routine-parameter', name };
  }
  return { kind: 'expression' };
}

/** Functions of PostgreSQL itself and its common extensions: their calls are not routine calls the rules follow. The pg_sleep family stays out: a wait under row locks is a side effect a rule reports. */
const BUILT_INS = new Set([
  'set_config', 'current_setting', 'now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'timeofday',
  'count', 'sum', 'avg', 'min', 'max', 'array_agg', 'string_agg', 'json_agg', 'jsonb_agg', 'json_object_agg', 'jsonb_object_agg',
  'bool_and', 'bool_or', 'every', 'row_number', 'rank', 'dense_rank', 'lag', 'lead', 'first_value', 'last_value', 'ntile',
  'coalesce', 'nullif', 'greatest', 'least', 'format', 'concat', 'concat_ws', 'lower', 'upper', 'trim', 'btrim', 'ltrim', 'rtrim',
  'length', 'char_length', 'octet_length', 'substring', 'substr', 'replace', 'split_part', 'position', 'strpos', 'left', 'right',
  'lpad', 'rpad', 'repeat', 'reverse', 'md5', 'sha256', 'encode', 'decode', 'quote_ident', 'quote_literal', 'quote_nullable',
  'regexp_replace', 'regexp_match', 'regexp_matches', 'regexp_split_to_array', 'regexp_split_to_table', 'to_char', 'to_date',
  'to_timestamp', 'to_number', 'date_trunc', 'date_part', 'extract', 'age', 'make_interval', 'make_date', 'make_timestamp',
  'make_timestamptz', 'justify_interval', 'abs', 'ceil', 'ceiling', 'floor', 'round', 'trunc', 'mod', 'power', 'sqrt', 'random',
  'setseed', 'nextval', 'currval', 'setval', 'lastval', 'gen_random_uuid', 'uuid_generate_v4', 'uuid_generate_v7', 'uuidv7', 'uuidv4',
  'generate_series', 'generate_subscripts', 'unnest', 'array_length', 'array_position', 'array_remove', 'array_append', 'array_cat',
  'cardinality', 'array_to_string', 'string_to_array', 'to_json', 'to_jsonb', 'row_to_json', 'json_build_object', 'jsonb_build_object',
  'json_build_array', 'jsonb_build_array', 'jsonb_set', 'jsonb_insert', 'jsonb_strip_nulls', 'jsonb_each', 'jsonb_each_text',
  'json_each', 'jsonb_array_elements', 'json_array_elements', 'jsonb_array_elements_text', 'jsonb_array_length', 'jsonb_typeof',
  'jsonb_object_keys', 'jsonb_path_query', 'jsonb_pretty', 'json_extract_path_text', 'jsonb_extract_path_text', 'pg_notify',
  'pg_advisory_lock', 'pg_advisory_unlock', 'pg_advisory_xact_lock', 'pg_try_advisory_lock', 'pg_try_advisory_xact_lock',
  'pg_advisory_unlock_all', 'pg_backend_pid', 'pg_cancel_backend', 'pg_terminate_backend',
  'txid_current', 'pg_current_xact_id', 'current_database', 'current_schema', 'current_schemas', 'current_user', 'session_user',
  'version', 'has_table_privilege', 'has_schema_privilege', 'pg_has_role', 'row_security_active', 'pg_typeof', 'exists', 'hashtext',
  'digest', 'hmac', 'crypt', 'gen_salt', 'crypto', 'similarity', 'word_similarity', 'to_tsvector', 'to_tsquery', 'plainto_tsquery',
  'websearch_to_tsquery', 'ts_rank', 'ts_headline', 'st_distance', 'st_dwithin', 'st_makepoint', 'st_setsrid', 'pg_get_serial_sequence',
  'pg_column_size', 'pg_total_relation_size', 'pg_relation_size', 'pg_size_pretty', 'obj_description', 'col_description',
  'pg_get_functiondef', 'pg_get_viewdef', 'pg_get_indexdef', 'pg_get_constraintdef', 'pg_table_is_visible', 'format_type',
  'pg_is_in_recovery', 'pg_postmaster_start_time', 'inet_client_addr', 'inet_server_addr', 'bit_length', 'ascii', 'chr',
  'initcap', 'translate', 'overlay', 'starts_with', 'string_to_table', 'array_fill', 'array_dims', 'array_lower', 'array_upper',
  'array_ndims', 'array_prepend', 'array_replace', 'isfinite', 'date_bin', 'timezone', 'num_nonnulls', 'num_nulls', 'width_bucket',
  'percentile_cont', 'percentile_disc', 'mode', 'stddev', 'variance', 'corr', 'bit_and', 'bit_or', 'xmlagg', 'lo_import', 'lo_export',
]);

export function isBuiltIn(funcname: readonly Node[]): boolean {
  return isBuiltInName(funcname.map((p) => String(p.String?.sval ?? '').toLowerCase()));
}

/** The same test on the lower-cased parts of a name as written (`pg_catalog.now`). */
export function isBuiltInName(parts: readonly string[]): boolean {
  // sqlc.arg(name), sqlc.narg(name), sqlc.slice(name) are sqlc's parameters, not calls.
  if (parts.length > 1 && (parts[0] === 'pg_catalog' || parts[0] === 'information_schema' || parts[0] === 'sqlc')) return true;
  return parts.length === 1 && BUILT_INS.has(parts[0]);
}

export function qualifiedName(funcname: readonly Node[] | undefined): string {
  return (funcname ?? []).map((p) => String(p.String?.sval ?? '').toLowerCase()).join('.');
}

/** A call of a routine the project may define, with what its arguments are. */
export function routineCall(funcCall: Node, span: Span, parameters: readonly string[] | undefined): RoutineCall | undefined {
  const funcname = (funcCall.funcname ?? []) as Node[];
  if (!funcname.length || isBuiltIn(funcname)) return undefined;
  const args: CallArgument[] = (funcCall.args ?? []).map((arg: Node) =>
    arg.NamedArgExpr
      ? { name: String(arg.NamedArgExpr.name ?? '').toLowerCase(), value: valueOf(arg.NamedArgExpr.arg, parameters) }
      : { value: valueOf(arg, parameters) },
  );
  return { name: qualifiedName(funcname), args, span };
}

/** Whether a placeholder ($1, %s ...) stands anywhere in an expression tree. */
export function hasParam(node: Node | undefined): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasParam);
  if (node.ParamRef) return true;
  for (const key in node) if (node[key] && typeof node[key] === 'object' && hasParam(node[key])) return true;
  return false;
}
