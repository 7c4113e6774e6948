// Paths through a checkout hook (SQLAlchemy after_begin/checkout/begin, asyncpg setup=) that do not reach one of its
// statements: an earlier `return`, an `if` around it, an except that swallows its error. A hook that writes the
// tenant on every path rewrites it before every use; one that can skip the write leaves the previous job's tenant on
// the pooled connection for a job that has none.
import type { SqlSite } from '../../../model/index.ts';
import { markHookSkips, type PathSkip } from '../../../model/hook-skips.ts';
import { lineIndexOf } from '../../../model/lines.ts';
import { span, type Node } from '../syntax.ts';

const NESTED = new Set(['FunctionDefinition', 'LambdaExpression', 'ClassDefinition']);

/** What can skip the statement at `at` in the hook `def`, where anything can; writtenElsewhere is filled by the caller. */
export function hookSkip(def: Node, at: number, text: string, lineOf: (offset: number) => number): PathSkip | undefined {
  const body = def.getChild('Body');
  if (!body || at < body.from || at >= body.to) return undefined;
  const chain: Node[] = [];
  for (let node: Node | null = body.resolveInner(at, 1); node && node.from >= body.from && node !== body; node = node.parent) chain.push(node);
  chain.push(body);
  // Innermost first: the nearest construct that skips is the one to name.
  let found: PathSkip | undefined;
  for (let i = 0; i < chain.length && !found; i++) {
    const node = chain[i];
    if (NESTED.has(node.name)) return undefined; // a nested def or lambda: not the hook's own path
    if (node.name === 'Body') {
      for (const before of statementsBefore(node, at)) {
        if (before.name === 'IfStatement' && steady(before, text)) continue;
        const ret = exitIn(before);
        // The statement that returns is the skip path: what it writes on the way out counts.
        if (ret) found ??= { span: span(before), how: `the return on line ${lineOf(ret.from)}` };
      }
    } else if (node.name === 'IfStatement' && steady(node, text)) {
      continue;
    } else if (node.name === 'IfStatement' || node.name === 'MatchStatement' || node.name === 'ConditionalExpression') {
      found = { span: span(node), how: `the condition on line ${lineOf(node.from)}` };
    } else if (node.name === 'TryStatement') {
      const inTryBody = tryBody(node);
      if (inTryBody && at >= inTryBody.from && at < inTryBody.to) {
        const handler = swallowingHandler(node);
        if (handler) found = { span: span(handler), how: `the except on line ${lineOf(handler.from)} that swallows its error` };
      }
    }
  }
  return found;
}

/** True where `a` and `b` are on different branches of one if/try (neither runs after the other on one path). */
export function otherBranch(def: Node, a: number, b: number): boolean {
  const body = def.getChild('Body');
  if (!body) return false;
  const ancestors = new Set<Node['from']>();
  const keyOf = (n: Node) => n.from * 1_000_003 + n.to;
  const bodies: Node[] = [];
  for (let n: Node | null = body.resolveInner(a, 1); n && n !== body; n = n.parent) if (n.name === 'Body') bodies.push(n);
  for (const n of bodies) ancestors.add(keyOf(n));
  for (let n: Node | null = body.resolveInner(b, 1); n && n !== body; n = n.parent) {
    if (n.name !== 'Body') continue;
    if (ancestors.has(keyOf(n))) return false; // the same block holds both: one path
    const parent = n.parent;
    if (parent && (parent.name === 'IfStatement' || parent.name === 'TryStatement' || parent.name === 'MatchClause')) {
      // b's branch; a is in the same statement but not in this branch: another branch.
      if (a >= parent.from && a < parent.to && !(a >= n.from && a < n.to)) return true;
    }
  }
  return false;
}

function statementsBefore(block: Node, at: number): Node[] {
  const out: Node[] = [];
  for (let c = block.firstChild; c; c = c.nextSibling) if (c.to <= at) out.push(c);
  return out;
}

/** A return in the statement, not in a nested def (a raise fails the checkout: no job runs without the tenant). */
function exitIn(statement: Node): Node | undefined {
  if (statement.name === 'ReturnStatement') return statement;
  if (NESTED.has(statement.name)) return undefined;
  for (let c = statement.firstChild; c; c = c.nextSibling) {
    const found = exitIn(c);
    if (found) return found;
  }
  return undefined;
}

function tryBody(node: Node): Node | undefined {
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.name === 'try') return c.nextSibling?.name === 'Body' ? c.nextSibling : undefined;
  return undefined;
}

/** An except handler that does not raise on its way out: the hook goes on as if the write had run. */
function swallowingHandler(node: Node): Node | undefined {
  let inExcept = false;
  for (let c = node.firstChild; c; c = c.nextSibling) {
    if (c.name === 'except') inExcept = true;
    else if (c.name === 'Body' && inExcept) {
      if (!hasRaise(c)) return c;
      inExcept = false;
    } else if (c.name === 'finally' || c.name === 'else') inExcept = false;
  }
  return undefined;
}

function hasRaise(node: Node): boolean {
  if (node.name === 'RaiseStatement') return true;
  if (NESTED.has(node.name)) return false;
  for (let c = node.firstChild; c; c = c.nextSibling) if (hasRaise(c)) return true;
  return false;
}

/** Marks each site of a checkout hook's own body that some path skips (see markHookSkips). */
export function noteHookSkips(def: Node, sites: readonly SqlSite[], text: string): void {
  // Lines as every finding counts them (CR, CRLF, U+2028 too).
  const lineOf = (offset: number) => lineIndexOf(text).position(offset).line;
  const own = sites.filter((s) => s.callback && s.span.start >= def.from && s.span.start < def.to);
  markHookSkips(own, (at) => hookSkip(def, at, text, lineOf), (a, b) => otherBranch(def, a, b));
}

/**
 * An if whose conditions do not tell one job from another: a cache check comparing two values
 * (`if conn.info.get("tenant") == tenant: return`: the setting already holds this job's value), or the
 * engine's dialect or URL (`connection.dialect.name == "postgresql"`, `"postgresql" in str(engine.url)`: the same for
 * every use of the connection).
 */
function steady(node: Node, text: string): boolean {
  const tests: Node[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.prevSibling?.name === 'if' || c.prevSibling?.name === 'elif') tests.push(c);
  return tests.length > 0 && tests.every((t) => comparesValues(t, text) || /\.(?:dialect|url)\b/.test(text.slice(t.from, t.to)));
}

const LITERALS = new Set(['None', 'String', 'Number', 'Boolean', 'FormatString']);

function comparesValues(test: Node, text: string): boolean {
  if (test.name !== 'BinaryExpression') return false;
  const parts = [test.firstChild, test.firstChild?.nextSibling, test.lastChild];
  const op = parts[1] ? text.slice(parts[1].from, parts[1].to) : '';
  if (op === 'and' || op === 'or') return comparesValues(parts[0]!, text) && comparesValues(parts[2]!, text);
  return (op === '==' || op === '!=') && !!parts[0] && !!parts[2] && !LITERALS.has(parts[0].name) && !LITERALS.has(parts[2].name);
}
