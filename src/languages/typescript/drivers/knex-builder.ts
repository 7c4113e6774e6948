// Knex builder chains the walk can only half resolve, and what the code
// around an update says about it, read as the SQL it sends:
// - a database handed through a function of a module the scan cannot read
//   (`const db = tenantDb(trx, tenant)`, a tenant-scoping wrapper) runs its
//   `db.table('jobs')...` chains on the Knex value it was given;
// - a chain continued on a builder held in a const (`const q =
//   db.table('jobs').select(...)`, then `q.where(...).forUpdate().skipLocked()`)
//   is one query: Knex builders change in place, and the statement's calls are
//   sent when the builder runs;
// - a where group (`.andWhere((qb) => { qb.where(a).orWhere(b) })`) is `(a OR b)`;
// - a column written back as its own value read from the row plus n
//   (`attempt_count: Number(row.attempt_count) + 1`, through a const) counts
//   it: `attempt_count = attempt_count + n`;
// - and where that count decides, just before the update, that the row goes
//   no further (`if (next > MAX) { ...; continue; }`), the update runs only
//   for rows under the limit: `AND attempt_count < $MAX`, mapped to the test;
//   an update inside that `if` runs for the rows at the limit (`>= $MAX`).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { assignments, chainOf, type BuilderHost, type ChainLink, type SqlWriter } from '../builder-sql.ts';
import type { Value } from '../flow/types.ts';
import { isFunction, namedProperties, pathTo, propertyName, unwrap, type Node } from '../syntax.ts';

const TABLE_LINKS = new Set(['()', 'table', 'from', 'into']);
/** Links that make a chain a query of its own. */
const SENDS = new Set(['update', 'increment', 'decrement', 'del', 'delete', 'insert', 'forUpdate', 'forShare', 'forNoKeyUpdate', 'forKeyShare']);

function knexDb(v: Value | undefined): boolean {
  return (v?.kind === 'pool' || v?.kind === 'tx' || v?.kind === 'opaque') && v.driver === 'knex';
}

/** `const db = wrap(trx, ...)` with `wrap` from a module the scan cannot read: the Knex value it was given. */
function wrapped(root: Node, host: BuilderHost): Value | undefined {
  const n = unwrap(root);
  // Asked of nearly every call (`f(x)` is a chain on `f`): most names are bound by no const at all.
  if (n?.type !== 'Identifier' || host.mayBeBound?.(n.name) === false) return undefined;
  const init = unwrap(host.constantOf?.(n));
  if (init?.type !== 'CallExpression') return undefined;
  const callee = unwrap(init.callee);
  if (callee?.type !== 'Identifier' || !host.importedUnread?.(callee)) return undefined;
  for (const arg of init.arguments) {
    const value = host.value(arg as Node);
    if (knexDb(value)) return value;
  }
  return undefined;
}

/**
 * What a Knex chain runs on when its root is not a value the walk knows: a
 * wrapper's database, or a builder held in a const (its chain first).
 */
export function knexRoot(root: Node, links: readonly ChainLink[], host: BuilderHost): { on: Value; links?: ChainLink[]; executes?: boolean } | undefined {
  if (links.length === 0) return undefined;
  if (TABLE_LINKS.has(links[0].name)) {
    const on = wrapped(root, host);
    return on ? { on } : undefined;
  }
  const n = unwrap(root);
  if (n?.type !== 'Identifier' || host.mayBeBound?.(n.name) === false) return undefined;
  const init = unwrap(host.constantOf?.(n));
  if (init?.type !== 'CallExpression') return undefined;
  const inner = chainOf(init);
  if (!inner || inner.links.length === 0 || !TABLE_LINKS.has(inner.links[0].name)) return undefined;
  // A const that holds a whole query (`const p = knex('jobs').where(...).update(...)`) is read where it is made.
  if (inner.links.some((l) => SENDS.has(l.name))) return undefined;
  const value = host.value(inner.root);
  const on = knexDb(value) ? value : wrapped(inner.root, host);
  return on ? { on, links: [...inner.links, ...links], executes: true } : undefined;
}

/** The one chain a where group's callback runs on its argument: `(qb) => { qb.where(a).orWhere(b); }`. */
function groupChain(fn: Node | undefined): ChainLink[] | undefined {
  const f = unwrap(fn);
  if (!isFunction(f) || f.params.length !== 1 || f.params[0].type !== 'Identifier') return undefined;
  const param = f.params[0].name;
  let body: Node | undefined = f.body as Node;
  if (body.type === 'BlockStatement') {
    if (body.body.length !== 1 || body.body[0].type !== 'ExpressionStatement') return undefined;
    body = body.body[0].expression as Node;
  }
  const top = unwrap(body);
  if (top?.type !== 'CallExpression') return undefined;
  const chain = chainOf(top);
  const root = unwrap(chain?.root);
  return chain && root?.type === 'Identifier' && root.name === param ? chain.links : undefined;
}

/** A where group as `(a OR b AND c)`; undefined when the link is not one. */
export function whereGroup(w: SqlWriter, link: ChainLink, read: (link: ChainLink) => boolean): boolean | undefined {
  if (link.args.length !== 1) return undefined;
  const links = groupChain(link.args[0]);
  if (!links) return isFunction(unwrap(link.args[0])) ? false : undefined;
  if (links.length === 0 || !links.every((l) => /^(where|andWhere|orWhere|whereIn|whereNotIn|whereNull|whereNotNull|whereRaw)$/.test(l.name))) return false;
  w.text('(', link.call);
  links.forEach((l, i) => {
    if (i > 0) w.text(l.name === 'orWhere' ? ' OR ' : ' AND ', l.call);
    if (!read(l)) w.text('TRUE', l.call);
  });
  w.text(')', link.call);
  return true;
}

/** `X.col + n`, `Number(X.col) + n` (or, with `bare`, `X.col` itself): the row's own value of `col` plus a number. */
function rowPlus(node: Node | undefined, host: BuilderHost, depth = 0, bare = false): { column: string; plus: number } | undefined {
  let n = unwrap(node);
  if (!n || depth > 3) return undefined;
  if (n.type === 'Identifier') return rowPlus(host.constantOf?.(n), host, depth + 1, bare);
  let plus = 0;
  if (n.type === 'BinaryExpression' && n.operator === '+') {
    const right = unwrap(n.right);
    if (right?.type !== 'Literal' || typeof right.value !== 'number') return undefined;
    plus = right.value;
    n = unwrap(n.left as Node);
  } else if (!bare) return undefined;
  if (n?.type === 'CallExpression' && unwrap(n.callee)?.type === 'Identifier' && /^(Number|parseInt)$/.test((unwrap(n.callee) as TSESTree.Identifier).name)) n = unwrap(n.arguments[0] as Node);
  // A row's column (`row.tries`), not a collection's size (`rows.length`) or a member of something computed.
  if (n?.type !== 'MemberExpression' || unwrap(n.object)?.type !== 'Identifier') return undefined;
  const column = propertyName(n);
  return column && !/^(length|size)$/.test(column) ? { column, plus } : undefined;
}

/** The assignments of `.update({...})`, a column set to its row value plus n read as the increment it is. */
export function knexAssignments(w: SqlWriter, node: Node | undefined): boolean {
  return assignments(w, node, (key) => key, (column, value) => {
    const own = rowPlus(value, w.host);
    if (own && own.column === column) w.text(`${column} + ${own.plus}`, value);
    else w.value(value);
  });
}

/** The nodes from `root` down to `call`, no deeper than 200 levels. */
const pathDown = (root: Node, call: Node): Node[] => pathTo(root, call).slice(0, 201);

/** The statements of the innermost block that holds `call` (a statement of it contains the call), and the index of that statement. */
function blockAround(root: Node, call: Node): { body: TSESTree.Statement[]; index: number } | undefined {
  const path = pathDown(root, call);
  for (let i = path.length - 2; i >= 0; i--) {
    const node = path[i];
    if (node.type === 'BlockStatement' || node.type === 'Program') return { body: node.body as TSESTree.Statement[], index: node.body.indexOf(path[i + 1] as TSESTree.Statement) };
  }
  return undefined;
}

/** A block that always leaves: its last statement is continue, return, throw or break. */
function leaves(node: Node): boolean {
  const last = node.type === 'BlockStatement' ? node.body[node.body.length - 1] : node;
  return !!last && /^(ContinueStatement|ReturnStatement|ThrowStatement|BreakStatement)$/.test(last.type);
}

/** The innermost `if` whose consequent (not its test, not its else) holds `call`. */
function ifAround(root: Node, call: Node): TSESTree.IfStatement | undefined {
  const path = pathDown(root, call);
  for (let i = path.length - 2; i >= 0; i--) {
    const node = path[i];
    if (node.type === 'IfStatement') return path[i + 1] === node.consequent ? node : undefined;
  }
  return undefined;
}

/** `V > L`, `V >= L` where V is the row's count (plus n): the column and the bound. */
function countOver(test: Node | undefined, host: BuilderHost): { column: string; bound: Node; left: Node } | undefined {
  const t = unwrap(test);
  if (t?.type !== 'BinaryExpression' || (t.operator !== '>' && t.operator !== '>=')) return undefined;
  const left = unwrap(t.left as Node);
  const own = left ? rowPlus(left, host, 0, true) : undefined;
  return own && left ? { column: own.column, bound: t.right as Node, left } : undefined;
}

export interface Guard {
  column: string;
  /** `<`: the rows that reach the update are under the bound; `>=`: they reached it. */
  op: '<' | '>=';
  bound: Node;
  at: Node;
}

/**
 * What a test of the row's count around an update says of the rows it
 * updates. Inside `if (next > MAX) { ... }` (next the count plus one) they
 * are the rows at the limit: `col >= MAX`. After `if (next > MAX) { ...;
 * continue; }` in the same block, where the update writes that count back,
 * they are the rows under it: `col < MAX`.
 */
export function countGuard(program: Node | undefined, call: Node, update: Node | undefined, host: BuilderHost): Guard | undefined {
  if (!program) return undefined;
  const around = ifAround(program, call);
  const over = around ? countOver(around.test as Node, host) : undefined;
  if (over) return { column: over.column, op: '>=', bound: over.bound, at: around!.test as Node };
  const object = unwrap(update);
  if (object?.type !== 'ObjectExpression') return undefined;
  const counters = namedProperties(object).flatMap(({ key, property: p }) => {
    const own = rowPlus(p.value as Node, host);
    return own && own.column === key && own.plus > 0 ? [{ node: p.value as Node, column: key }] : [];
  });
  if (counters.length !== 1) return undefined;
  const counter = counters[0];
  const block = blockAround(program, call);
  if (!block) return undefined;
  const value = unwrap(counter.node);
  const name = value?.type === 'Identifier' ? value.name : undefined;
  for (let i = block.index - 1; i >= 0; i--) {
    const s = block.body[i];
    if (s.type !== 'IfStatement' || s.alternate || !leaves(s.consequent as Node)) continue;
    const test = countOver(s.test as Node, host);
    if (!test || test.column !== counter.column) continue;
    if (name && !(test.left.type === 'Identifier' && test.left.name === name)) continue;
    return { column: counter.column, op: '<', bound: test.bound, at: s.test as Node };
  }
  return undefined;
}
