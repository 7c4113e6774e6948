// Values a Node process holds for one request or job at a time: what an `AsyncLocalStorage` store holds
// (`als.getStore()?.tenantId`, `const store = als.getStore(); store.tenant`) and a cls-hooked namespace's `get(...)`.
// A pool hook that runs once per new connection (pg's `pool.on('connect')`, `onConnect`, Knex's `afterCreate`) and
// writes such a value at session level gives the connection, for its whole life, the tenant of whichever job opened it.
import { unwrap, type Node } from './syntax.ts';
import type { ResolveContext } from './strings.ts';

/** Where a name of the file is imported from, when it is. */
export type ImportOf = (name: string) => { specifier: string; imported: string } | undefined;

const STORAGE_MODULES = new Set(['async_hooks', 'node:async_hooks']);
const CLS_MODULES = new Set(['cls-hooked', 'continuation-local-storage']);
const PURE_FUNCTIONS = new Set(['String', 'Number']);
const MAX_DEPTH = 8;

/** Whether `node` holds a value of the current request or job (see above); false wherever that is not shown. */
export function isRequestValue(node: Node | null | undefined, ctx: ResolveContext, importOf: ImportOf, depth = 0): boolean {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return false;
  const next = (child: unknown) => isRequestValue(child as Node, ctx, importOf, depth + 1);
  switch (n.type) {
    case 'TemplateLiteral':
      return n.expressions.some((e) => next(e));
    case 'Identifier': {
      const init = unwrap(ctx.constant(n.name, n));
      return !!init && next(init);
    }
    case 'MemberExpression':
      return next(n.object);
    case 'LogicalExpression':
    case 'BinaryExpression':
      return next(n.left) || next(n.right);
    case 'ConditionalExpression':
      return next(n.consequent) || next(n.alternate);
    case 'CallExpression': {
      const callee = unwrap(n.callee as Node);
      if (callee?.type === 'Identifier') return PURE_FUNCTIONS.has(callee.name) && n.arguments.length > 0 && next(n.arguments[0]);
      if (callee?.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier') return false;
      const method = callee.property.name;
      if (method === 'getStore' && isHolder(callee.object as Node, ctx, importOf, STORAGE_MODULES)) return true;
      if (method === 'get' && isHolder(callee.object as Node, ctx, importOf, CLS_MODULES)) return true;
      // `store.get('tenant')`, `tenant.toString()`: read from a request value.
      return next(callee.object);
    }
    default:
      return false;
  }
}

/** A const holding `new AsyncLocalStorage()` (from async_hooks) or a cls-hooked namespace (`createNamespace(...)`). */
function isHolder(node: Node | undefined, ctx: ResolveContext, importOf: ImportOf, modules: ReadonlySet<string>): boolean {
  const n = unwrap(node);
  if (n?.type !== 'Identifier') return false;
  const init = unwrap(ctx.constant(n.name, n));
  if (init?.type !== 'NewExpression' && init?.type !== 'CallExpression') return false;
  const callee = unwrap(init.callee as Node);
  const name = callee?.type === 'Identifier' ? callee.name : undefined;
  const from = name ? importOf(name) : undefined;
  return !!from && modules.has(from.specifier);
}
