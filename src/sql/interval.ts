// Constant intervals in expressions: `now() + interval '30 seconds'`,
// `'5 min'::interval`, `make_interval(secs => 30)`, `interval '1 second' * 30`.
// Lease lengths are read from these; anything computed at run time is undefined.
// With `bind`, a placeholder counts as the value the host code binds to it
// (`make_interval(mins => $1)` with 30 bound reads as 30 minutes).
import type { Node } from './extract.ts';
import { hasParam } from './values.ts';

/** The value bound to placeholder $n, when the host code gives a constant. */
export type BindParam = (n: number) => string | number | boolean | null | undefined;

const UNIT_SECONDS: [RegExp, number][] = [
  [/^(us|usecs?|microseconds?)$/, 1e-6],
  [/^(ms|msecs?|milliseconds?)$/, 1e-3],
  [/^(s|secs?|seconds?)$/, 1],
  [/^(m|mins?|minutes?)$/, 60],
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(d|days?)$/, 86400],
  [/^(w|weeks?)$/, 7 * 86400],
  [/^(mons?|months?)$/, 30 * 86400],
  [/^(y|yrs?|years?)$/, 365 * 86400],
];

/** Seconds of a PostgreSQL interval literal ('30 seconds', '1 hour 30 min', '00:05:00', '45'); undefined when unsure. */
export function parseIntervalText(text: string): number | undefined {
  let rest = text.trim().toLowerCase().replace(/^@\s*/, '');
  if (!rest) return undefined;
  let total = 0;
  const ago = /\s+ago$/.test(rest);
  rest = rest.replace(/\s+ago$/, '');
  const clock = /^(-?\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?$/;
  for (const part of rest.match(/-?\d+:\d{1,2}(?::\d{1,2}(?:\.\d+)?)?|-?\d+(?:\.\d+)?\s*[a-z]*/g) ?? []) {
    const hms = clock.exec(part.trim());
    if (hms) {
      total += Number(hms[1]) * 3600 + Number(hms[2]) * 60 + Number(hms[3] ?? 0);
      continue;
    }
    const m = /^(-?\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(part.trim());
    if (!m) return undefined;
    const unit = m[2] === '' ? 1 : UNIT_SECONDS.find(([re]) => re.test(m[2]))?.[1];
    if (unit === undefined) return undefined;
    total += Number(m[1]) * unit;
  }
  // Everything in the text must have been read.
  const read = rest.replace(/-?\d+:\d{1,2}(?::\d{1,2}(?:\.\d+)?)?|-?\d+(?:\.\d+)?\s*[a-z]*/g, '').trim();
  if (read !== '') return undefined;
  return ago ? -total : total;
}

const MAKE_INTERVAL_ARGS = ['years', 'months', 'weeks', 'days', 'hours', 'mins', 'secs'];
const MAKE_INTERVAL_SECONDS: Record<string, number> = {
  years: 365 * 86400,
  months: 30 * 86400,
  weeks: 7 * 86400,
  days: 86400,
  hours: 3600,
  mins: 60,
  secs: 1,
};

function isIntervalType(typeCast: Node): boolean {
  const names = (typeCast.typeName?.names ?? []).map((n: Node) => n.String?.sval);
  return names[names.length - 1] === 'interval';
}

function boundValue(node: Node | undefined, bind: BindParam | undefined): string | number | boolean | null | undefined {
  const n = node?.ParamRef?.number;
  return typeof n === 'number' && bind ? bind(n) : undefined;
}

function numberOf(node: Node | undefined, bind?: BindParam): number | undefined {
  const bound = boundValue(node, bind);
  if (typeof bound === 'number') return bound;
  if (typeof bound === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(bound)) return Number(bound);
  const c = node?.A_Const;
  if (!c) return node?.TypeCast ? numberOf(node.TypeCast.arg, bind) : undefined;
  if (c.ival) return c.ival.ival ?? 0;
  if (c.fval) return Number(c.fval.fval);
  if (c.sval && /^-?\d+(\.\d+)?$/.test(c.sval.sval ?? '')) return Number(c.sval.sval);
  return undefined;
}

/**
 * A hole the host code put inside a string literal (`interval '${seconds} seconds'`, read as `'$4 seconds'`, the
 * analyzer's `pgq_param_4`): the text the host binds there, when it binds a constant to every hole of the literal.
 */
const LITERAL_HOLE = /\$(\d+)|pgq_param_(\d+)/;
const LITERAL_HOLES = new RegExp(LITERAL_HOLE.source, 'g');
function withHolesFilled(text: string, bind: BindParam | undefined): string {
  if (!bind || !LITERAL_HOLE.test(text)) return text;
  let unbound = false;
  const filled = text.replace(LITERAL_HOLES, (whole, dollar: string | undefined, named: string | undefined) => {
    const value = bind(Number(dollar ?? named));
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    unbound = true;
    return whole;
  });
  return unbound ? text : filled;
}

/** An interval literal with a hole of the host's in its text (`interval '$4 seconds'`): its length is the bound value's. */
function holedInterval(node: Node): boolean {
  const text = node.TypeCast && isIntervalType(node.TypeCast) ? node.TypeCast.arg?.A_Const?.sval?.sval : undefined;
  return typeof text === 'string' && LITERAL_HOLE.test(text);
}

/** The text of a constant, a bound placeholder, or a `||` concatenation of them (`$1 || ' minutes'`). */
function textOf(node: Node | undefined, bind: BindParam | undefined): string | undefined {
  if (!node) return undefined;
  const bound = boundValue(node, bind);
  if (typeof bound === 'string' || typeof bound === 'number') return String(bound);
  const c = node.A_Const;
  if (c?.sval) return withHolesFilled(String(c.sval.sval ?? ''), bind);
  if (c?.ival) return String(c.ival.ival ?? 0);
  if (c?.fval) return String(c.fval.fval);
  if (node.TypeCast) return textOf(node.TypeCast.arg, bind);
  const expr = node.A_Expr;
  if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '||') {
    const left = textOf(expr.lexpr, bind);
    const right = textOf(expr.rexpr, bind);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  return undefined;
}

/** Seconds of a node that is a constant interval (placeholders read through `bind`), else undefined. */
export function intervalOf(node: Node | undefined, bind?: BindParam): number | undefined {
  if (!node) return undefined;
  if (node.TypeCast && isIntervalType(node.TypeCast)) {
    const text = textOf(node.TypeCast.arg, bind);
    return typeof text === 'string' ? parseIntervalText(text) : undefined;
  }
  if (node.FuncCall) {
    const parts = (node.FuncCall.funcname ?? []).map((p: Node) => p.String?.sval);
    if (String(parts[parts.length - 1]).toLowerCase() !== 'make_interval') return undefined;
    let total = 0;
    for (const [index, arg] of (node.FuncCall.args ?? []).entries()) {
      const named = arg.NamedArgExpr;
      const name = named ? String(named.name) : MAKE_INTERVAL_ARGS[index];
      const value = numberOf(named ? named.arg : arg, bind);
      if (value === undefined || !(name in MAKE_INTERVAL_SECONDS)) return undefined;
      total += value * MAKE_INTERVAL_SECONDS[name];
    }
    return total;
  }
  const expr = node.A_Expr;
  if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '*') {
    const left = intervalOf(expr.lexpr, bind);
    const right = intervalOf(expr.rexpr, bind);
    const leftCount = numberOf(expr.lexpr, bind);
    const rightCount = numberOf(expr.rexpr, bind);
    if (left !== undefined && rightCount !== undefined) return left * rightCount;
    if (right !== undefined && leftCount !== undefined) return right * leftCount;
  }
  return undefined;
}

/** `x * interval '1 second'` (either way round, or `/`) where x is not a constant number: a length computed at run time. */
function scaledAtRunTime(node: Node): boolean {
  const expr = node.A_Expr;
  const op = expr?.name?.[0]?.String?.sval;
  if (expr?.kind !== 'AEXPR_OP' || (op !== '*' && op !== '/')) return false;
  if (intervalOf(expr.lexpr) !== undefined) return numberOf(expr.rexpr) === undefined;
  return op === '*' && intervalOf(expr.rexpr) !== undefined && numberOf(expr.lexpr) === undefined;
}

/** An interval whose length a placeholder gives: `make_interval(mins => $1)`, `$1 * interval '1 minute'`, `$1::interval`. */
function intervalOfParam(node: Node): boolean {
  if (node.TypeCast) return isIntervalType(node.TypeCast);
  if (node.FuncCall) {
    const parts = (node.FuncCall.funcname ?? []).map((p: Node) => p.String?.sval);
    return String(parts[parts.length - 1]).toLowerCase() === 'make_interval';
  }
  const expr = node.A_Expr;
  return expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '*' && (intervalOf(expr.lexpr) !== undefined || intervalOf(expr.rexpr) !== undefined);
}

/**
 * The interval expressions whose length is a placeholder's value, kept as
 * parse nodes so that a model which knows the bound values (SqlSite.params)
 * can read them with intervalOf(node, bind).
 */
export function boundIntervalsIn(node: Node | undefined, out: Node[] = []): Node[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) boundIntervalsIn(item, out);
    return out;
  }
  if ((hasParam(node) && intervalOfParam(node)) || holedInterval(node)) {
    out.push(node);
    return out;
  }
  for (const key in node) if (node[key] && typeof node[key] === 'object') boundIntervalsIn(node[key], out);
  return out;
}

/** The constant intervals in an expression tree (not inside other constant intervals); NaN for one scaled at run time. */
export function intervalsIn(node: Node | undefined, out: number[] = []): number[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) intervalsIn(item, out);
    return out;
  }
  const seconds = intervalOf(node);
  if (seconds !== undefined) {
    out.push(seconds);
    return out;
  }
  // `$1 * interval '1 minute'` is as long as the code says, not one minute; `timeout * interval '1 second'` and
  // `p_lease_ms * interval '1 millisecond'` (a column, a routine's parameter) as long as the row or the caller says.
  if (hasParam(node) && intervalOfParam(node)) return out;
  // NaN: a length is there, and it is not one this reading knows (so `... - interval '30 seconds'` next to it is not the length either).
  if (scaledAtRunTime(node)) {
    out.push(Number.NaN);
    return out;
  }
  for (const key in node) if (node[key] && typeof node[key] === 'object') intervalsIn(node[key], out);
  return out;
}

const NOW_CALLS = new Set(['now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp']);
const NOW_VALUES = new Set(['SVFOP_CURRENT_TIMESTAMP', 'SVFOP_CURRENT_TIMESTAMP_N', 'SVFOP_LOCALTIMESTAMP', 'SVFOP_LOCALTIMESTAMP_N']);

function withoutCast(node: Node | undefined): Node | undefined {
  let n = node;
  while (n?.TypeCast) n = n.TypeCast.arg;
  return n;
}

/** The current time: `now()`, `clock_timestamp()`, `current_timestamp`, also cast (`now()::timestamp`). */
function isNow(node: Node | undefined): boolean {
  const n = withoutCast(node);
  if (n?.FuncCall) {
    const parts = n.FuncCall.funcname ?? [];
    return NOW_CALLS.has(String(parts[parts.length - 1]?.String?.sval ?? '').toLowerCase()) && !(n.FuncCall.args?.length > 0);
  }
  return NOW_VALUES.has(n?.SQLValueFunction?.op);
}

/** A time after now: `now() + <anything>` (`now() + interval '30 seconds'`, `now() + backoff * interval '1 second'`). */
export function isNowPlus(node: Node | undefined): boolean {
  const expr = withoutCast(node)?.A_Expr;
  if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '+') return false;
  return isNow(expr.lexpr) !== isNow(expr.rexpr);
}

/** `now() - t` with `t` a column: the age of a time stamp, as its column and its now() node. */
export function ageColumn(node: Node | undefined): { column: Node; now: Node } | undefined {
  const expr = withoutCast(node)?.A_Expr;
  if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '-' || !isNow(expr.lexpr)) return undefined;
  const column = withoutCast(expr.rexpr);
  return column?.ColumnRef ? { column, now: expr.lexpr } : undefined;
}

/** A time before now by an amount: `now() - interval '30 seconds'`, `now() - timeout * interval '1 second' - interval '30 seconds'`. */
export function isNowMinus(node: Node | undefined): boolean {
  const expr = withoutCast(node)?.A_Expr;
  if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '-') return false;
  return isNow(expr.lexpr) || isNowMinus(expr.lexpr);
}
