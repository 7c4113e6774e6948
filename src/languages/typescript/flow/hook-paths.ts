// Paths through a pool's checkout hook (node-postgres `pool.on('acquire')`) that do not reach one of its
// statements: an earlier `return`, an `if` or `?:` around it, a catch that swallows its error. A hook that can skip
// its session-level tenant write leaves the previous job's tenant for a job that has none.
import type { SqlSite } from '../../../model/index.ts';
import { markHookSkips, type PathSkip } from '../../../model/hook-skips.ts';
import { lineIndexOf } from '../../../model/lines.ts';
import { children, isFunction, span, type FunctionNode, type Node } from '../syntax.ts';

const inside = (n: Node, at: number) => n.range[0] <= at && at < n.range[1];

/** Marks the sites of the hook's own body that some path skips (see markHookSkips). */
export function noteHookSkips(fn: FunctionNode, sites: readonly SqlSite[], text: string): void {
  // Lines as every finding counts them (CR, CRLF, U+2028 too).
  const lineOf = (offset: number) => lineIndexOf(text).position(offset).line;
  const own = sites.filter((s) => s.callback && inside(fn.body, s.span.start));
  markHookSkips(own, (at) => hookSkip(fn, at, lineOf), (a, b) => otherBranch(fn, a, b));
}

/** The nodes from the hook's body down to the innermost that holds `at`; undefined inside a nested function. */
function chainTo(fn: FunctionNode, at: number): Node[] | undefined {
  const chain: Node[] = [];
  let node: Node | undefined = fn.body;
  while (node) {
    chain.push(node);
    const next: Node | undefined = children(node).find((c) => inside(c, at));
    if (next && isFunction(next)) return undefined;
    node = next;
  }
  return chain;
}

function hookSkip(fn: FunctionNode, at: number, lineOf: (offset: number) => number): PathSkip | undefined {
  const chain = chainTo(fn, at);
  if (!chain) return undefined;
  for (let i = chain.length - 1; i >= 0; i--) {
    const node = chain[i];
    const child = chain[i + 1];
    const guarded = (node.type === 'IfStatement' || node.type === 'ConditionalExpression') && child !== node.test && !comparesValues(node.test);
    if (child && (guarded || (node.type === 'LogicalExpression' && child === node.right))) {
      return { span: span(node), how: `the condition on line ${lineOf(node.range[0])}` };
    }
    if (node.type === 'SwitchStatement' && child && child !== node.discriminant) return { span: span(node), how: `the switch on line ${lineOf(node.range[0])}` };
    if (node.type === 'TryStatement' && child === node.block && node.handler && !throws(node.handler.body)) {
      return { span: span(node.handler), how: `the catch on line ${lineOf(node.handler.range[0])} that swallows its error` };
    }
    if (node.type === 'BlockStatement') {
      for (const statement of node.body) {
        if (statement.range[1] > at) break;
        if (statement.type === 'IfStatement' && comparesValues(statement.test)) continue;
        const ret = returnIn(statement);
        if (ret) return { span: span(statement), how: `the return on line ${lineOf(ret.range[0])}` };
      }
    }
  }
  return undefined;
}

function otherBranch(fn: FunctionNode, a: number, b: number): boolean {
  const chain = chainTo(fn, a) ?? [];
  for (const node of chain) {
    if (!inside(node, b)) break;
    const branches = node.type === 'IfStatement' ? [node.consequent, node.alternate] : node.type === 'ConditionalExpression' ? [node.consequent, node.alternate] : node.type === 'TryStatement' ? [node.block, node.handler] : [];
    const ia = branches.findIndex((x) => x && inside(x, a));
    const ib = branches.findIndex((x) => x && inside(x, b));
    if (ia >= 0 && ib >= 0 && ia !== ib) return true;
  }
  return false;
}

/** A return in the statement, not in a nested function (a throw fails the checkout: no job runs without the tenant). */
function returnIn(node: Node): Node | undefined {
  if (node.type === 'ReturnStatement') return node;
  if (isFunction(node)) return undefined;
  for (const c of children(node)) {
    const found = returnIn(c);
    if (found) return found;
  }
  return undefined;
}

function throws(node: Node): boolean {
  if (node.type === 'ThrowStatement') return true;
  if (isFunction(node)) return false;
  return children(node).some(throws);
}

/** A cache check comparing two values (`if (client.tenant === tenant) return`): the setting already holds this job's value. */
function comparesValues(test: Node): boolean {
  if (test.type === 'LogicalExpression') return comparesValues(test.left) && comparesValues(test.right);
  if (test.type !== 'BinaryExpression' || !['==', '===', '!=', '!=='].includes(test.operator)) return false;
  const literal = (n: Node) => n.type === 'Literal' || (n.type === 'Identifier' && n.name === 'undefined') || n.type === 'TemplateLiteral';
  return !literal(test.left) && !literal(test.right);
}
