// Boolean flags the code keeps beside a connection to know whether its
// transaction is open (`let inTx = false; BEGIN; inTx = true; ... finally {
// if (inTx) ROLLBACK; release() }`): which names hold one, what a branch on
// one assumes, and which names a piece of code may assign.
import { children, unwrap, type Node } from '../syntax.ts';
import type { Env } from './env.ts';

/** `true` / `false` written as such. */
export function booleanLiteral(node: Node | null | undefined): boolean | undefined {
  const n = unwrap(node);
  return n?.type === 'Literal' && typeof n.value === 'boolean' ? n.value : undefined;
}

/**
 * What a branch's test says of flags, on the branch taken when it holds and
 * on the other one: `inTx`, `!inTx`, `inTx === true`, `a && b` (both, when
 * it holds). Each as [flag key, value].
 */
export function flagConditions(test: Node, env: Env): { then: [string, boolean][]; else: [string, boolean][] } {
  const n = unwrap(test);
  if (!n) return { then: [], else: [] };
  if (n.type === 'Identifier') {
    const key = env.flagOf(n.name);
    return key ? { then: [[key, true]], else: [[key, false]] } : { then: [], else: [] };
  }
  if (n.type === 'UnaryExpression' && n.operator === '!') {
    const inner = flagConditions(n.argument, env);
    return { then: inner.else, else: inner.then };
  }
  if (n.type === 'BinaryExpression' && (n.operator === '===' || n.operator === '!==' || n.operator === '==' || n.operator === '!=')) {
    const value = booleanLiteral(n.right) ?? booleanLiteral(n.left as Node);
    const other = booleanLiteral(n.right) !== undefined ? (n.left as Node) : n.right;
    if (value === undefined) return { then: [], else: [] };
    const inner = flagConditions(other, env);
    const same = value === (n.operator === '===' || n.operator === '==');
    return same ? inner : { then: inner.else, else: inner.then };
  }
  if (n.type === 'LogicalExpression' && n.operator === '&&') {
    const then = [...flagConditions(n.left, env).then, ...flagConditions(n.right, env).then];
    return { then, else: [] };
  }
  if (n.type === 'LogicalExpression' && n.operator === '||') {
    const otherwise = [...flagConditions(n.left, env).else, ...flagConditions(n.right, env).else];
    return { then: [], else: otherwise };
  }
  return { then: [], else: [] };
}

/** The names code assigns anywhere in it (nested functions included): flags it may change. */
export function assignedNames(node: Node, out = new Set<string>()): Set<string> {
  if (node.type === 'AssignmentExpression' && node.left.type === 'Identifier') out.add(node.left.name);
  if (node.type === 'UpdateExpression' && node.argument.type === 'Identifier') out.add(node.argument.name);
  for (const child of children(node)) assignedNames(child, out);
  return out;
}
