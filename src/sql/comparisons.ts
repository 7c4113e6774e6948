// The comparisons of a WHERE (or a join condition) as facts: `column op value`,
// with the value read as a literal, a placeholder, another column, an expression
// or a subquery with its own tables and WHERE. Also the small readers of column
// names and placeholders that the values of a write's SET share.
import type { ComparedValue, Comparison, Span } from './facts.ts';
import type { Node } from './extract.ts';
import { ageColumn, boundIntervalsIn, intervalsIn, isNowMinus } from './interval.ts';
import { functionName, relationName } from './nodes.ts';
import { constValue, hasParam } from './values.ts';

/** Maps a byte offset (and a length) of the parsed text to a span of the caller's text. */
export type SpanAt = (loc: number | undefined, len?: number) => Span;

const MIRRORED_OPERATOR: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '<>': '<>', '!=': '!=' };

export function columnOf(node: Node | undefined): string | undefined {
  const fields = node?.ColumnRef?.fields;
  if (!fields) return undefined;
  const last = fields[fields.length - 1];
  return last?.String?.sval?.toLowerCase();
}

/**
 * A column compared through a constant it reads as when NULL: `coalesce(retry_count, 0) < 3` restricts the rows as
 * `retry_count < 3` does, a NULL counting as no attempt yet. Also the column itself.
 */
export function comparedColumnNode(node: Node | undefined): Node | undefined {
  if (node?.ColumnRef) return node;
  const args = node?.CoalesceExpr?.args as Node[] | undefined;
  if (args?.length === 2 && args[0]?.ColumnRef && constValue(args[1]) !== undefined && constValue(args[1]) !== null) return args[0];
  return undefined;
}

export function collectNames(node: Node | undefined, columns: string[], functions: string[]): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) collectNames(item, columns, functions);
    return;
  }
  if (node.ColumnRef) {
    const column = columnOf(node);
    if (column) columns.push(column);
    return;
  }
  if (node.FuncCall) functions.push(functionName(node.FuncCall));
  for (const key in node) if (node[key] && typeof node[key] === 'object') collectNames(node[key], columns, functions);
}

/** A placeholder, also with a cast: `$1`, `$1::bigint`. */
export function isParam(node: Node | undefined): boolean {
  return Boolean(node?.ParamRef || node?.TypeCast?.arg?.ParamRef);
}

/** `$N` (also cast) as a value: N kept for the value the host binds to it. */
export function paramValue(node: Node | undefined): { kind: 'param'; number?: number } {
  const number = (node?.ParamRef ?? node?.TypeCast?.arg?.ParamRef)?.number;
  return typeof number === 'number' ? { kind: 'param', number } : { kind: 'param' };
}

/** The numbers of the placeholders in an expression, in order. */
function paramNumbersIn(node: Node | undefined, out: number[] = []): number[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) paramNumbersIn(item, out);
    return out;
  }
  if (typeof node.ParamRef?.number === 'number') out.push(node.ParamRef.number);
  for (const key in node) if (node[key] && typeof node[key] === 'object') paramNumbersIn(node[key], out);
  return out;
}


export function stringsIn(node: Node | undefined, out: string[] = []): string[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) stringsIn(item, out);
    return out;
  }
  if (node.A_Const?.sval) out.push(String(node.A_Const.sval.sval ?? ''));
  for (const key in node) if (node[key] && typeof node[key] === 'object') stringsIn(node[key], out);
  return out;
}

/** The optional details of an expression value: its one constant interval, its strings, its placeholders. */
export function expressionDetails(node: Node | undefined, withStrings: boolean): { intervalSeconds?: number; strings?: string[]; params?: boolean; paramNumbers?: number[]; boundInterval?: object } {
  const details: { intervalSeconds?: number; strings?: string[]; params?: boolean; paramNumbers?: number[]; boundInterval?: object } = {};
  const intervals = intervalsIn(node);
  if (intervals.length === 1 && !Number.isNaN(intervals[0])) details.intervalSeconds = intervals[0];
  const bound = intervals.length === 0 ? boundIntervalsIn(node) : [];
  if (bound.length === 1) details.boundInterval = bound[0];
  if (withStrings) {
    const strings = stringsIn(node);
    if (strings.length) details.strings = strings;
  }
  if (hasParam(node)) {
    details.params = true;
    const numbers = paramNumbersIn(node);
    if (numbers.length) details.paramNumbers = numbers;
  }
  return details;
}

function comparedValue(node: Node | undefined, spanAt: SpanAt, depth: number): ComparedValue {
  const literal = constValue(node);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  if (isParam(node)) return paramValue(node);
  if (node?.SubLink) return subqueryValue(node.SubLink.subselect, spanAt, depth);
  const column = columnOf(node);
  if (column) return { kind: 'column', column };
  const columns: string[] = [];
  const functions: string[] = [];
  collectNames(node, columns, functions);
  // `now() - <a length>`: a cutoff in the past, also when the length is computed per row.
  const details = expressionDetails(node, true);
  // A length that is a column of the row plus or minus a constant (`now() - timeout + interval '1 minute'`): per row,
  // not the constant's.
  if (columns.length > 0) delete details.intervalSeconds;
  return { kind: 'expression', functions, ...details, ...(isNowMinus(node) || withGrace(node) ? { beforeNow: true } : {}) };
}

/** `now() - timeout + interval '1 minute'`: a cutoff before now with a grace added (taken as shorter than the length). */
function withGrace(node: Node | undefined): boolean {
  const expr = node?.A_Expr;
  return expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '+' && isNowMinus(expr.lexpr) && intervalsIn(expr.rexpr).length === 1;
}

/** Comparing an age (`now() - t`) with a length: `age >= x` means `t <= now() - x`. */
const AGE_OPERATOR: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** `now() - t op x` (or `x op now() - t`) as `t op' now() - x`, with the cutoff as a node of its own. */
function ageComparison(expr: Node, op: string): { column: string; op: string; cutoff: Node; at: Node } | undefined {
  const leftAge = ageColumn(expr.lexpr);
  const age = leftAge ?? ageColumn(expr.rexpr);
  if (!age) return undefined;
  const length = leftAge ? expr.rexpr : expr.lexpr;
  const column = columnOf(age.column);
  if (!column || columnOf(length)) return undefined;
  // The age on the left: `age >= x` is `t <= now() - x` (the operator turned); on the right, `x <= age` is the same.
  const turned = leftAge ? AGE_OPERATOR[op] : op;
  const cutoff = { A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: '-' } }], lexpr: age.now, rexpr: length, location: expr.location } };
  return { column, op: turned, cutoff, at: age.column };
}

/** How deep subqueries inside subqueries are read (a liveness check is one level down). */
const MAX_SUBQUERY_DEPTH = 2;

/** A subquery's FROM tables and WHERE (`worker_id in (select id from workers where last_seen < ...)`). */
function subqueryValue(subselect: Node | undefined, spanAt: SpanAt, depth: number): ComparedValue {
  const select = subselect?.SelectStmt;
  if (!select || depth >= MAX_SUBQUERY_DEPTH) return { kind: 'subquery' };
  const tables: string[] = [];
  const schemas: (string | null)[] = [];
  const names = new Set<string>();
  // Each name a column may be qualified with (the table's, its alias), to the table; and whether a join ties two of them.
  const tableByName = new Map<string, string>();
  let linked = false;
  const collect = (item: Node | undefined) => {
    if (item?.RangeVar) {
      const table = relationName(item.RangeVar);
      tables.push(table);
      schemas.push(item.RangeVar.schemaname ?? null);
      names.add(table);
      tableByName.set(table, table);
      if (item.RangeVar.alias?.aliasname) {
        names.add(String(item.RangeVar.alias.aliasname).toLowerCase());
        tableByName.set(String(item.RangeVar.alias.aliasname).toLowerCase(), table);
      }
    } else if (item?.JoinExpr) {
      collect(item.JoinExpr.larg);
      collect(item.JoinExpr.rarg);
      linked ||= comparisons(item.JoinExpr.quals, spanAt, MAX_SUBQUERY_DEPTH).some((c) => c.op === '=' && c.value.kind === 'column' && !c.underOr);
    }
  };
  for (const item of select.fromClause ?? []) collect(item);
  // A join of tables on a column (`jobs join workers on lock_by = workers.id`): each compared column says whose it is.
  const where = comparisons(select.whereClause, spanAt, depth + 1, names, linked && tables.length > 1 ? tableByName : undefined);
  return schemas.some((schema) => schema !== null) ? { kind: 'subquery', tables, schemas, where } : { kind: 'subquery', tables, where };
}

/** The name a column reference is qualified with (`tasks` of `tasks.runner_id`), lower-cased; undefined when unqualified. */
function qualifierOf(node: Node | undefined): string | undefined {
  const fields = node?.ColumnRef?.fields;
  const name = fields?.length >= 2 ? fields[fields.length - 2]?.String?.sval : undefined;
  return typeof name === 'string' ? name.toLowerCase() : undefined;
}

/**
 * The comparisons of a WHERE, each read from the side of a column. `own` names the statement's own table
 * (its name and alias: the rows written or locked): where one side is a column qualified by another FROM
 * item and the other a column of the own table (`gone.id = tasks.runner_id`), the own column is the one compared.
 */
export function comparisons(where: Node | undefined, spanAt: SpanAt, depth = 0, own?: ReadonlySet<string>, qualify?: ReadonlyMap<string, string>): Comparison[] {
  const out: Comparison[] = [];
  // In a join: the table a qualified column is of.
  const tableOf = (node: Node | undefined): { table?: string } => {
    const table = qualify?.get(qualifierOf(node) ?? '');
    return table === undefined ? {} : { table };
  };
  const visit = (node: Node | undefined, underOr: boolean, negated = false) => {
    if (!node) return;
    if (node.BoolExpr) {
      const not = node.BoolExpr.boolop === 'NOT_EXPR';
      const or = node.BoolExpr.boolop === 'OR_EXPR' || not;
      for (const arg of node.BoolExpr.args ?? []) visit(arg, underOr || or, negated !== not);
      return;
    }
    const valueOf = (value: Node | undefined) => comparedValue(value, spanAt, depth);
    const push = (c: Comparison) => out.push(negated ? { ...c, negated: true } : c);
    const expr = node.A_Expr;
    if (expr && (expr.kind === 'AEXPR_OP' || expr.kind === 'AEXPR_IN' || expr.kind === 'AEXPR_OP_ANY')) {
      const op = expr.kind === 'AEXPR_IN' ? 'in' : String(expr.name?.[0]?.String?.sval ?? '');
      const [leftNode, rightNode] = [comparedColumnNode(expr.lexpr), comparedColumnNode(expr.rexpr)];
      const right = columnOf(rightNode);
      const [leftFrom, rightFrom] = [qualifierOf(leftNode), qualifierOf(rightNode)];
      const ownOnRight = own !== undefined && leftFrom !== undefined && rightFrom !== undefined && !own.has(leftFrom) && own.has(rightFrom);
      const left = ownOnRight ? undefined : columnOf(leftNode);
      // An age against a length (`now() - last_seen >= $1`, `interval '5 minutes' < now() - locked_at`): the time stamp
      // against the cutoff it means (`last_seen <= now() - $1`), read as that comparison.
      const aged = !left && !right && AGE_OPERATOR[op] ? ageComparison(expr, op) : undefined;
      if (aged) {
        push({ column: aged.column, op: aged.op, value: valueOf(aged.cutoff), underOr, span: spanAt(aged.at.ColumnRef.location, aged.column.length), ...tableOf(aged.at) });
        return;
      }
      if (left) push({ column: left, op, value: valueOf(expr.rexpr), underOr, span: spanAt((leftNode as Node).ColumnRef.location, left.length), ...tableOf(leftNode) });
      else if (right && MIRRORED_OPERATOR[op])
        push({ column: right, op: MIRRORED_OPERATOR[op], value: valueOf(expr.lexpr), underOr, span: spanAt((rightNode as Node).ColumnRef.location, right.length), ...tableOf(rightNode) });
      return;
    }
    // column IN (SELECT ...), column = ANY (SELECT ...), EXISTS (SELECT ...)
    const sublink = node.SubLink;
    if (sublink?.subLinkType === 'ANY_SUBLINK') {
      const column = columnOf(sublink.testexpr);
      if (column) push({ column, op: 'in', value: subqueryValue(sublink.subselect, spanAt, depth), underOr, span: spanAt(sublink.testexpr.ColumnRef.location, column.length) });
      return;
    }
    if (sublink?.subLinkType === 'EXISTS_SUBLINK') {
      push({ column: '', op: 'exists', value: subqueryValue(sublink.subselect, spanAt, depth), underOr, span: spanAt(sublink.location, 'exists'.length) });
      return;
    }
    if (node.NullTest) {
      const column = columnOf(node.NullTest.arg);
      if (column)
        push({
          column,
          op: node.NullTest.nulltesttype === 'IS_NOT_NULL' ? 'is not null' : 'is null',
          value: { kind: 'literal', value: null },
          underOr,
          span: spanAt(node.NullTest.arg.ColumnRef.location, column.length),
        });
    }
  };
  visit(where, false);
  return out;
}
