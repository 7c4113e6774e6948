// A loop over a constant list of SQL statements, walked once per statement:
//
//   const steps = ['BEGIN', 'CREATE INDEX ...', 'COMMIT'];
//   for (const sql of steps) await conn.query(sql);
//
// Walked once as any loop, the body's query is unknown text and the
// transaction it opens is never seen; run in order, BEGIN opens it, the next
// statement may throw with it open, COMMIT closes it (the shape of hand-written
// migrations). Only a short array of literal strings is unrolled, and only a
// body that cannot leave an iteration early or shadow the loop's name.
import type { ResolveContext } from '../strings.ts';
import { children, isFunction, patternNames, unwrap, type Node } from '../syntax.ts';

/** Statements in a list unrolled at most: a longer one is a data list, not a script. */
const MAX_STEPS = 8;
/** What may leave or restart an iteration: with one, the statements do not all run in order. */
const JUMPS = new Set(['BreakStatement', 'ContinueStatement', 'LabeledStatement']);

export interface UnrolledLoop {
  /** The loop's name (`sql` of `for (const sql of steps)`). */
  name: string;
  /** Each iteration's value, a string literal, in order. */
  steps: Node[];
}

/** `for (const x of LIST)` over a const array of string literals: its name and elements; undefined for any other loop. */
export function unrolledLoop(node: Node, ctx: ResolveContext): UnrolledLoop | undefined {
  if (node.type !== 'ForOfStatement' || node.await) return undefined;
  const left = node.left;
  if (left.type !== 'VariableDeclaration' || left.kind !== 'const' || left.declarations.length !== 1) return undefined;
  const id = left.declarations[0].id;
  if (id.type !== 'Identifier') return undefined;
  let list = unwrap(node.right);
  if (list?.type === 'Identifier') list = unwrap(ctx.constant(list.name, list));
  if (list?.type !== 'ArrayExpression' || list.elements.length === 0 || list.elements.length > MAX_STEPS) return undefined;
  const steps: Node[] = [];
  for (const element of list.elements) {
    const step = unwrap(element as Node | null);
    const literal = step?.type === 'Literal' && typeof step.value === 'string';
    const plainTemplate = step?.type === 'TemplateLiteral' && step.expressions.length === 0;
    if (!step || !(literal || plainTemplate)) return undefined;
    steps.push(step);
  }
  return runsInOrder(node.body, id.name) ? { name: id.name, steps } : undefined;
}

/** Whether no iteration of `body` can end early (break, continue) or declare another `name` in its scope. */
function runsInOrder(body: Node, name: string): boolean {
  const stack: Node[] = [body];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (JUMPS.has(node.type) || declaredNames(node).includes(name)) return false;
    // A nested function is walked apart, without the loop's binding: its own names are its own.
    if (!isFunction(node)) stack.push(...children(node));
  }
  return true;
}

/** The names a node declares in the scope it is in. */
function declaredNames(node: Node): string[] {
  switch (node.type) {
    case 'VariableDeclarator':
      return patternNames(node.id).map((id) => id.name);
    case 'CatchClause':
      return patternNames(node.param).map((id) => id.name);
    case 'FunctionDeclaration':
    case 'ClassDeclaration':
      return node.id ? [node.id.name] : [];
    default:
      return [];
  }
}
