// Side effects one call away: a call in a locking transaction of a function
// the project declares (a method of the same class, a function of the file or
// of a scanned module it imports) that itself calls the outside world
// (`fetch`, `axios.post`, an SDK's send), followed a few calls deep. Only the
// function's own body counts: a callback it makes but does not run now (an
// event handler, a timer) is not a call of the transaction.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { typescriptSideEffect } from '../side-effects.ts';
import { children, dottedName, isFunction, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import { thisMember } from './bindings.ts';
import type { Value } from './types.ts';
import { work } from '../../../work.ts';

/** How many project calls deep a side effect is looked for, the first call included. */
const MAX_DEPTH = 3;
/** How many nodes of one function body are read at most. */
const MAX_NODES = 5_000;
/** A timer may only schedule work for later: one call away it is not known to wait. */
const NOT_ONE_CALL_AWAY = new Set(['setTimeout', 'setInterval', 'setImmediate']);

/**
 * The chain from `fn` to a call of the outside world, `fn`'s callee first
 * excluded: `['postHook', 'fetch']` for a helper that calls `postHook`,
 * which calls `fetch`. Undefined when none is found within the bound.
 */
export function callsOut(fn: FunctionNode, program: TSESTree.Program | undefined, depth = 1, seen = new Set<FunctionNode>()): string[] | undefined {
  if (depth > MAX_DEPTH || seen.has(fn) || !fn.body) return undefined;
  seen.add(fn);
  const calls: TSESTree.CallExpression[] = [];
  const stack: Node[] = [fn.body as Node];
  let visited = 0;
  while (stack.length > 0 && visited++ < MAX_NODES) {
    const n = stack.pop()!;
    if (isFunction(n)) continue;
    if (n.type === 'CallExpression') calls.push(n);
    const c = children(n);
    for (let i = c.length - 1; i >= 0; i--) stack.push(c[i]);
  }
  work(visited);
  for (const call of calls) {
    const name = dottedName(unwrap(call.callee));
    if (name && !NOT_ONE_CALL_AWAY.has(name) && typescriptSideEffect(name)) return [name];
  }
  if (!program) return undefined;
  for (const call of calls) {
    const next = projectFunction(call, program);
    const chain = next && callsOut(next.fn, program, depth + 1, seen);
    if (chain) return [next.name, ...chain];
  }
  return undefined;
}

/** The chain from a call of a project function (the file's, an imported module's, or a method of the class) to the outside world. */
export function callsOutThrough(call: TSESTree.CallExpression, callee: Value | undefined, program: TSESTree.Program): string[] | undefined {
  if (callee?.kind === 'function') return callsOut(callee.node, (callee.owner as { program?: TSESTree.Program }).program);
  const method = unwrap(call.callee)?.type === 'MemberExpression' ? projectFunction(call, program) : undefined;
  return method ? callsOut(method.fn, program) : undefined;
}

/** The function of the same program a call runs: `this.method(...)` of the class around it, or a function declared at the top of the module. */
export function projectFunction(call: TSESTree.CallExpression, program: TSESTree.Program): { fn: FunctionNode; name: string } | undefined {
  const callee = unwrap(call.callee);
  if (callee?.type === 'MemberExpression' && unwrap(callee.object)?.type === 'ThisExpression') {
    const member = thisMember(program, call);
    return member ? { fn: member.fn, name: `this.${member.name}` } : undefined;
  }
  if (callee?.type !== 'Identifier') return undefined;
  const fn = topLevelFunction(program, callee.name);
  return fn ? { fn, name: callee.name } : undefined;
}

/** `function name() {}` or `const name = () => {}` at the top of a module (exported or not). */
function topLevelFunction(program: TSESTree.Program, name: string): FunctionNode | undefined {
  for (const s of program.body) {
    const d = s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration' ? s.declaration : s;
    if (d?.type === 'FunctionDeclaration' && d.id?.name === name) return d;
    if (d?.type === 'VariableDeclaration') {
      for (const v of d.declarations) {
        const init = unwrap(v.init as Node | null);
        if (v.id.type === 'Identifier' && v.id.name === name && isFunction(init)) return init;
      }
    }
  }
  return undefined;
}
