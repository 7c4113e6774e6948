// The options a class that extends a driver's pool gives the pool it is: the
// arguments of its constructor's `super(...)` call (moved out of walk.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { unwrap } from '../syntax.ts';

/** The arguments of the `super(...)` call of a constructor: the options a subclass gives the pool it is. */
export function superArguments(ctor: TSESTree.MethodDefinition | undefined): readonly TSESTree.CallExpressionArgument[] {
  for (const statement of ctor?.value.body?.body ?? []) {
    const call = statement.type === 'ExpressionStatement' ? unwrap(statement.expression) : undefined;
    if (call?.type === 'CallExpression' && call.callee.type === 'Super') return call.arguments;
  }
  return [];
}
