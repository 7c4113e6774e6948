// Times the code computes from the clock: `new Date()` is now, `new Date(Date.now() - 5 * 60 * 1000)`
// five minutes ago, with the amount a product of number literals or constants that hold them. Read
// where such a time stands for SQL (a builder's value) or is bound to a placeholder (a stale cutoff,
// a lease end), so a lease written from the application has a known length.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { propertyName, unwrap, type Node } from './syntax.ts';

/** `new Date(...)`: a time read from the clock or given (the other forms are the caller's to read). */
export function isNewDate(n: Node | undefined): n is TSESTree.NewExpression {
  return n?.type === 'NewExpression' && unwrap(n.callee)?.type === 'Identifier' && (unwrap(n.callee) as TSESTree.Identifier).name === 'Date';
}

/** `new Date(Date.now() ± amount)`: the sign and the amount's node; undefined for any other form. */
export function clockOffset(n: Node | undefined): { operator: '+' | '-'; amount: Node } | undefined {
  if (!isNewDate(n) || n.arguments.length !== 1) return undefined;
  const arg = unwrap(n.arguments[0] as Node);
  if (arg?.type !== 'BinaryExpression' || (arg.operator !== '+' && arg.operator !== '-') || !isDateNow(unwrap(arg.left as Node))) return undefined;
  return { operator: arg.operator, amount: arg.right as Node };
}

/** Milliseconds from now of a time read from the clock (`new Date()` is 0, five minutes ago is -300000); undefined when not such a time or the amount is not known. */
export function clockMilliseconds(n: Node | undefined, constant: (node: Node) => Node | undefined): number | undefined {
  if (!isNewDate(n)) return undefined;
  if (n.arguments.length === 0) return 0;
  const offset = clockOffset(n);
  const ms = offset ? numberOf(unwrap(offset.amount), constant) : undefined;
  return offset && ms !== undefined ? (offset.operator === '-' ? -ms : ms) : undefined;
}

function isDateNow(n: Node | undefined): boolean {
  if (n?.type !== 'CallExpression' || n.arguments.length > 0) return false;
  const callee = unwrap(n.callee);
  return callee?.type === 'MemberExpression' && unwrap(callee.object)?.type === 'Identifier' && (unwrap(callee.object) as TSESTree.Identifier).name === 'Date' && propertyName(callee) === 'now';
}

function numberOf(n: Node | undefined, constant: (node: Node) => Node | undefined, depth = 0): number | undefined {
  if (!n || depth > 4) return undefined;
  if (n.type === 'Identifier' || n.type === 'MemberExpression') return numberOf(unwrap(constant(n)), constant, depth + 1);
  if (n.type === 'Literal' && typeof n.value === 'number' && Number.isFinite(n.value) && n.value >= 0) return n.value;
  if (n.type === 'BinaryExpression' && n.operator === '*') {
    const left = numberOf(unwrap(n.left as Node), constant, depth + 1);
    const right = numberOf(unwrap(n.right), constant, depth + 1);
    return left === undefined || right === undefined ? undefined : left * right;
  }
  return undefined;
}
