// Values the process takes from its own deployment: the environment (`process.env.DATABASE_URL`), literals, constants
// of the file, and what a helper of the file computes from only these (`new URL(process.env.DATABASE_URL)
// .searchParams.get('schema')`). Every job the process runs gets the same one: it names the application's database or
// schema, never a job's or a request's tenant.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { isFunction, unwrap, type Node } from './syntax.ts';
import type { ResolveContext } from './strings.ts';

/** Built-in constructors and functions that compute only from their arguments. */
const PURE_CONSTRUCTORS = new Set(['URL', 'URLSearchParams']);
const PURE_FUNCTIONS = new Set(['String', 'Number', 'Boolean', 'decodeURIComponent', 'encodeURIComponent']);
const MAX_DEPTH = 8;

/** Whether `node` holds a value of the deployment (see above); false wherever a part of it is not known to be one. */
export function isDeploymentValue(node: Node | null | undefined, ctx: ResolveContext, depth = 0): boolean {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return false;
  const next = (child: unknown, within: ResolveContext = ctx) => isDeploymentValue(child as Node, within, depth + 1);
  switch (n.type) {
    case 'Literal':
      return !('regex' in n && n.regex);
    case 'TemplateLiteral':
      return n.expressions.every((e) => next(e));
    case 'Identifier': {
      if (n.name === 'undefined') return true;
      // A helper's parameter is what its call gave it.
      if (ctx.bindings?.has(n.name)) return !!ctx.caller && next(ctx.bindings.get(n.name), ctx.caller);
      const init = unwrap(ctx.constant(n.name, n));
      return !!init && !isFunction(init) && next(init);
    }
    case 'MemberExpression':
      if (isProcessEnv(n.object as Node)) return !n.computed || next(n.property);
      return next(n.object) && (!n.computed || next(n.property));
    case 'LogicalExpression':
    case 'BinaryExpression':
      return next(n.left) && next(n.right);
    case 'ConditionalExpression':
      return next(n.test) && next(n.consequent) && next(n.alternate);
    case 'NewExpression': {
      const callee = unwrap(n.callee as Node);
      return callee?.type === 'Identifier' && PURE_CONSTRUCTORS.has(callee.name) && n.arguments.every((a) => next(a));
    }
    case 'CallExpression': {
      const callee = unwrap(n.callee as Node);
      if (!callee || !n.arguments.every((a) => next(a))) return false;
      // A method of a deployment value (`url.searchParams.get('schema')`, `name.toLowerCase()`) computes from it.
      if (callee.type === 'MemberExpression') return next(callee.object);
      if (callee.type !== 'Identifier') return false;
      if (PURE_FUNCTIONS.has(callee.name)) return true;
      return helperReturnsDeploymentValue(n, callee.name, ctx, depth);
    }
    default:
      return false;
  }
}

/** `getSchema()` with a helper of the file whose one returned expression is a deployment value (its parameters bound to the call's arguments). */
function helperReturnsDeploymentValue(call: TSESTree.CallExpression, name: string, ctx: ResolveContext, depth: number): boolean {
  const fn = unwrap(ctx.constant(name, call));
  if (!fn || !isFunction(fn) || fn.async || fn.generator || !fn.body) return false;
  const returned = fn.body.type === 'BlockStatement' ? singleReturn(fn.body.body as Node[]) : (fn.body as Node);
  if (!returned) return false;
  const bindings = new Map<string, Node | undefined>();
  for (const [i, p] of fn.params.entries()) {
    if (p.type === 'Identifier') bindings.set(p.name, call.arguments[i] as Node | undefined);
    else if (p.type === 'AssignmentPattern' && p.left.type === 'Identifier') bindings.set(p.left.name, (call.arguments[i] as Node | undefined) ?? (p.right as Node));
    else return false;
  }
  return isDeploymentValue(returned, { ...ctx, bindings, caller: ctx }, depth + 1);
}

/** The expression of a block's only `return` at its top level, when nothing else in it returns or branches around it. */
function singleReturn(body: Node[]): Node | undefined {
  const last = body[body.length - 1];
  if (last?.type !== 'ReturnStatement' || !last.argument) return undefined;
  // Only declarations before it: their initializers are what the return reads.
  if (!body.slice(0, -1).every((s) => s.type === 'VariableDeclaration' && s.kind === 'const')) return undefined;
  return last.argument as Node;
}

/** `process.env`, or `import.meta.env` (Vite, SvelteKit, Astro: the build's environment, fixed for the deployment). */
function isProcessEnv(node: Node): boolean {
  const n = unwrap(node);
  if (n?.type !== 'MemberExpression' || n.computed || n.property.type !== 'Identifier' || n.property.name !== 'env') return false;
  const object = unwrap(n.object as Node);
  if (object?.type === 'MetaProperty') return object.meta.name === 'import' && object.property.name === 'meta';
  return object?.type === 'Identifier' && object.name === 'process';
}
