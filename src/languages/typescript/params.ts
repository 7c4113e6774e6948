// The host values bound to a site's placeholders (SqlSite.params): the
// values array of `client.query(text, [a, b])`, pg's `{ text, values }`,
// postgres.js `sql.unsafe(text, args)`, knex `raw(sql, bindings)`, Prisma's
// `$executeRawUnsafe(text, ...values)`, Sequelize `bind`/`replacements`, and
// the interpolations of a template (a tagged template's values, or the holes
// of SQL built with `${...}`). params[N-1] is what $N stands for, numbered as
// the SQL analyzer numbers them: native $N first, then `?` bindings, then the
// holes in order of position after the highest native $N.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { HostParam } from '../../model/index.ts';
import type { PlaceholderStyle } from '../../sql/index.ts';
import { forEachCodeChar } from '../../sql/lexer.ts';
import { clockMilliseconds } from './clock.ts';
import type { HostText } from './strings.ts';
import { dottedName, methodOf, unwrap, type Node } from './syntax.ts';

/** Where the values of a call's placeholders are written. */
export type ValuesSource =
  /** An array of values in order: `[a, b]` ($1, $2 or the `?`s in order). */
  | { kind: 'array'; node: Node }
  /** Values as the call's own arguments: `$executeRawUnsafe(text, a, b)`. */
  | { kind: 'args'; nodes: readonly Node[] }
  /** One value for $1 (pg-promise `db.one(text, id)`). */
  | { kind: 'single'; node: Node };

/** What one host expression is, as a bound value. */
export type Classify = (node: Node) => HostParam;

/** No more values than this are read for one site. */
const MAX_PARAMS = 64;

function maxDollar(text: string): number {
  let max = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(match[1]));
  return max;
}

function qmarkCount(text: string): number {
  let count = 0;
  forEachCodeChar(text, (i) => {
    if (text[i] !== '?') return;
    if (text[i + 1] === '?') {
      count++;
      return i + 2;
    }
    if (text[i + 1] === '|' || text[i + 1] === '&') return i + 2;
    count++;
    return i + 1;
  });
  return count;
}

/** The elements of a values source, in order; undefined after a spread (unknown from there on). */
export function elementsOf(source: ValuesSource, resolve: (node: Node) => Node | undefined): (Node | undefined)[] {
  if (source.kind === 'single') return [source.node];
  if (source.kind === 'args') return source.nodes.slice(0, MAX_PARAMS).map((n) => (n.type === 'SpreadElement' ? undefined : n));
  let node = unwrap(source.node);
  if (node && node.type !== 'ArrayExpression') node = resolve(node);
  if (node?.type !== 'ArrayExpression') return [];
  const out: (Node | undefined)[] = [];
  for (const e of node.elements.slice(0, MAX_PARAMS)) {
    if (!e || e.type === 'SpreadElement') {
      out.push(undefined);
      if (e?.type === 'SpreadElement') break;
      continue;
    }
    out.push(e);
  }
  return out;
}

/** Interpolated expressions of the text's template(s) and `+` operands, for placing each hole. */
function holeCandidates(textNode: Node, out: Node[] = [], depth = 0): Node[] {
  const n = unwrap(textNode);
  if (!n || depth > 8) return out;
  if (n.type === 'TemplateLiteral') {
    for (const e of n.expressions) {
      out.push(e);
      holeCandidates(e, out, depth + 1);
    }
  } else if (n.type === 'BinaryExpression' && n.operator === '+') {
    out.push(n.left as Node, n.right);
    holeCandidates(n.left as Node, out, depth + 1);
    holeCandidates(n.right, out, depth + 1);
  }
  return out;
}

/** The expression each hole stands for, by the placeholder number the analyzer gives it. */
export function holeExpressions(host: HostText, textNode: Node, extraHoles: readonly { start: number; end: number }[]): Map<number, Node> {
  const out = new Map<number, Node>();
  if (host.pinned) return out;
  const max = maxDollar(host.text);
  const holes = [...host.holes, ...extraHoles.filter((h) => !host.holes.some((k) => k.start < h.end && h.start < k.end))].sort((a, b) => a.start - b.start);
  const candidates = holeCandidates(textNode);
  holes.slice(0, MAX_PARAMS).forEach((hole, k) => {
    const from = host.starts[hole.start];
    const to = host.ends[hole.start];
    let best: Node | undefined;
    for (const c of candidates) if (c.range[0] >= from && c.range[1] <= to && (!best || c.range[1] - c.range[0] > best.range[1] - best.range[0])) best = c;
    if (best) out.set(max + 1 + k, best);
  });
  return out;
}

/**
 * The params of a site: values from `source` for the native and `?`
 * placeholders, the interpolated expressions for the holes. Undefined when
 * nothing is known about any of them.
 */
export function hostParams(
  host: HostText,
  textNode: Node,
  placeholders: PlaceholderStyle,
  extraHoles: readonly { start: number; end: number }[],
  source: ValuesSource | undefined,
  classify: Classify,
  resolve: (node: Node) => Node | undefined,
): HostParam[] | undefined {
  const params: HostParam[] = [];
  const max = maxDollar(host.text);
  const bound = source ? elementsOf(source, resolve) : [];
  const positional = placeholders === 'qmark' ? max + qmarkCount(host.text) : max;
  for (let i = 0; i < Math.min(positional, MAX_PARAMS); i++) {
    const index = placeholders === 'qmark' ? i - max : i;
    const node = index >= 0 ? bound[index] : undefined;
    params.push(node ? classify(node) : { kind: 'unknown' });
  }
  // Holes: numbered after the highest native $N, in order of position (as the analyzer numbers them).
  const holes = [...host.holes, ...extraHoles.filter((h) => !host.holes.some((k) => k.start < h.end && h.start < k.end))].sort((a, b) => a.start - b.start);
  if (holes.length > 0) {
    while (params.length < max) params.push({ kind: 'unknown' });
    const candidates = host.pinned ? [] : holeCandidates(textNode);
    for (const hole of holes.slice(0, MAX_PARAMS)) {
      const from = host.starts[hole.start];
      const to = host.ends[hole.start];
      let best: Node | undefined;
      for (const c of candidates) {
        if (c.range[0] >= from && c.range[1] <= to && (!best || c.range[1] - c.range[0] > best.range[1] - best.range[0])) best = c;
      }
      params[max + holes.indexOf(hole)] = best ? classify(best) : { kind: 'unknown' };
    }
  }
  for (let i = 0; i < params.length; i++) params[i] ??= { kind: 'unknown' };
  return params.some((p) => p.kind !== 'unknown') ? params : undefined;
}

/**
 * A value as a HostParam: a literal (or a constant of the file that is one), a
 * parameter of the enclosing function or a member of one (its callers choose
 * it), an imported name or a member of one whose value cannot be read
 * (`STATES.RUNNING`, `JOB_STATUS_RUNNING` from a module the scan does not
 * have: its name), through String(),
 * .toString(), a cast or a one-hole template.
 */
export function classifyValue(
  node: Node,
  isParameter: (name: string, at: Node) => boolean,
  constant: (node: Node) => Node | undefined,
  depth = 0,
  isImported: (name: string) => boolean = () => false,
): HostParam {
  const n = unwrap(node);
  if (!n || depth > 6) return { kind: 'unknown' };
  switch (n.type) {
    case 'Literal':
      if (n.value === null || typeof n.value === 'string' || typeof n.value === 'number' || typeof n.value === 'boolean') return { kind: 'literal', value: n.value };
      return { kind: 'unknown' };
    case 'TemplateLiteral':
      if (n.expressions.length === 0) return { kind: 'literal', value: n.quasis[0].value.cooked ?? '' };
      if (n.expressions.length === 1 && n.quasis.every((q) => q.value.cooked === '')) return classifyValue(n.expressions[0], isParameter, constant, depth + 1, isImported);
      return { kind: 'unknown' };
    case 'NewExpression': {
      // A time read from the clock: a stale cutoff or a lease end the code binds.
      const ms = clockMilliseconds(n, (c) => constant(c));
      return ms === undefined ? { kind: 'unknown' } : { kind: 'clock', seconds: ms / 1000 };
    }
    case 'UnaryExpression':
      if (n.operator === '-' && n.argument.type === 'Literal' && typeof n.argument.value === 'number') return { kind: 'literal', value: -n.argument.value };
      return { kind: 'unknown' };
    case 'Identifier': {
      if (n.name === 'undefined') return { kind: 'literal', value: null };
      if (isParameter(n.name, n)) return { kind: 'caller-parameter', name: n.name };
      const init = constant(n);
      if (init) return classifyValue(init, isParameter, constant, depth + 1, isImported);
      // A constant imported from a module the scan cannot read (`JOB_STATUS_RUNNING`): its name.
      return isImported(n.name) ? { kind: 'named', name: n.name } : { kind: 'unknown' };
    }
    case 'MemberExpression': {
      const name = dottedName(n);
      const root = name?.split('.')[0];
      if (name && root && root !== 'this' && isParameter(root, n)) return { kind: 'caller-parameter', name };
      const init = constant(n);
      if (init) return classifyValue(init, isParameter, constant, depth + 1, isImported);
      return name && root && isImported(root) ? { kind: 'named', name } : { kind: 'unknown' };
    }
    case 'CallExpression': {
      const callee = unwrap(n.callee);
      if (callee?.type === 'Identifier' && (callee.name === 'String' || callee.name === 'Number') && n.arguments.length === 1) {
        return classifyValue(n.arguments[0] as Node, isParameter, constant, depth + 1, isImported);
      }
      const method = methodOf(n);
      if (method && method.name === 'toString' && n.arguments.length === 0) return classifyValue(method.object, isParameter, constant, depth + 1, isImported);
      // `new Date(Date.now() + leaseMs).toISOString()`: the same time, as text Postgres reads back.
      if (method && (method.name === 'toISOString' || method.name === 'toJSON') && n.arguments.length === 0) {
        const time = classifyValue(method.object, isParameter, constant, depth + 1, isImported);
        return time.kind === 'clock' ? time : { kind: 'unknown' };
      }
      return { kind: 'unknown' };
    }
    default:
      return { kind: 'unknown' };
  }
}

export type { TSESTree };
