// Which parameter of an enclosing function a name holds as its callers hand
// it in (not assigned or declared anew since): the receiver of a site, or an
// argument handed on, read by what binds it, never by what it is called.
import type { FunctionRef, ParameterRef } from '../../../model/index.ts';
import { memberKeyName, methodOf, propertyName, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import type { Env } from './env.ts';

export const refOf = (module: string, fn: FunctionNode): FunctionRef => ({ module, at: fn.range[0] });

/**
 * The parameter (or a property of it: `options.client`, or `{ client }`
 * destructured in the parameter list) of an enclosing function that a name
 * holds as the caller handed it in: not assigned or declared anew since.
 */
export function parameterOf(env: Env, module: string, node: Node | null | undefined): ParameterRef | undefined {
  const n = unwrap(node);
  if (n?.type === 'Identifier') return boundParameter(env, module, n.name);
  if (n?.type !== 'MemberExpression' || n.computed) return undefined;
  const object = unwrap(n.object);
  const property = propertyName(n);
  if (object?.type !== 'Identifier' || property === undefined) return undefined;
  const whole = boundParameter(env, module, object.name);
  return whole && whole.property === undefined ? { ...whole, property } : undefined;
}

function boundParameter(env: Env, module: string, name: string, depth = 0): ParameterRef | undefined {
  const holder = env.holder(name);
  const fn = holder?.fn;
  if (!fn || holder.rebound.has(name)) return undefined;
  // TypeScript's `this` parameter takes no argument.
  const params = fn.params.filter((p) => !(p.type === 'Identifier' && p.name === 'this'));
  for (const [parameter, param] of params.entries()) {
    if (param.type === 'Identifier' && param.name === name) return { function: refOf(module, fn), parameter };
    if (param.type !== 'ObjectPattern') continue;
    for (const p of param.properties) {
      if (p.type !== 'Property' || p.computed || p.value.type !== 'Identifier' || p.value.name !== name) continue;
      const property = memberKeyName(p);
      return property === undefined ? undefined : { function: refOf(module, fn), parameter, property };
    }
  }
  // A parameter with a default, a rest parameter, a nested pattern: what arrives is not only what the callers hand.
  return depth > 0 ? undefined : propertyConstant(env, module, fn, name);
}

/**
 * A const of the function's own body that takes a property of a parameter
 * (`const { db } = options`, `const db = options.db`): that property, as the
 * callers hand it. Only top-level consts: one binding, never assigned again.
 */
function propertyConstant(env: Env, module: string, fn: FunctionNode, name: string): ParameterRef | undefined {
  if (fn.body?.type !== 'BlockStatement') return undefined;
  for (const statement of fn.body.body) {
    if (statement.type !== 'VariableDeclaration' || statement.kind !== 'const') continue;
    for (const d of statement.declarations) {
      const init = unwrap(d.init as Node | null);
      let from: Node | undefined;
      let property: string | undefined;
      if (d.id.type === 'Identifier' && d.id.name === name && init?.type === 'MemberExpression' && !init.computed) {
        from = unwrap(init.object);
        property = propertyName(init);
      } else if (d.id.type === 'ObjectPattern') {
        const p = d.id.properties.find((q) => q.type === 'Property' && !q.computed && q.value.type === 'Identifier' && q.value.name === name);
        from = init;
        property = p?.type === 'Property' ? memberKeyName(p) : undefined;
      }
      if (from?.type !== 'Identifier' || property === undefined || from.name === name) continue;
      const whole = boundParameter(env, module, from.name, 1);
      return whole && whole.property === undefined ? { ...whole, property } : undefined;
    }
  }
  return undefined;
}

/** The receiver a query is sent on: `client` of `client.query(...)`, `sql` of sql`...`. */
export function receiverOf(at: Node): Node | undefined {
  if (at.type === 'TaggedTemplateExpression') return at.tag;
  return at.type === 'CallExpression' ? methodOf(at)?.object : undefined;
}

/**
 * The default a parameter of an enclosing function gives when its callers
 * leave it out (`async function sweep(minutes = 5)`, `(minutes: number =
 * LEASE_MINUTES)`), when that is a literal number, or a constant of the file
 * that holds one: the callers may pass another, so the value stays theirs,
 * with the default beside it (as Python's `def sweep(minutes=5)`). A
 * property of a destructured options object is not read so.
 */
export function parameterDefault(env: Env, name: string, literal: (node: Node) => number | undefined): number | undefined {
  const holder = env.holder(name);
  const fn = holder?.fn;
  if (!fn || holder.rebound.has(name)) return undefined;
  for (const p of fn.params) {
    const param = p.type === 'TSParameterProperty' ? p.parameter : p;
    if (param.type === 'AssignmentPattern' && param.left.type === 'Identifier' && param.left.name === name) return literal(param.right);
  }
  return undefined;
}
