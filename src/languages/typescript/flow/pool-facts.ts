// Facts of a pool or client read from how the code makes it, for the rules
// that ask whether one job's session state can reach another tenant's job:
// whether it is built per tenant (made in a function and cached by a key
// taken from that function's parameters, or its connect hooks configured
// from them), and whether it is a one-connection script client (a client, or
// a pool of `max: 1`, ended where it is made). Its hooks are the driver
// modules' to name (their optionHooks and events).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ConnectionConfig } from '../../../model/index.ts';
import { children, isFunction, methodOf, objectProperty, patternNames, propertyName, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import type { PoolHook } from './types.ts';

/** The innermost function holding a node, by range (functions listed once per program). */
export class FunctionIndex {
  private functions?: FunctionNode[];
  constructor(private readonly program: TSESTree.Program) {}

  enclosing(node: Node): FunctionNode | undefined {
    if (!this.functions) {
      const out: FunctionNode[] = [];
      for (const n of nodesUnder(this.program, Number.POSITIVE_INFINITY)) if (isFunction(n)) out.push(n);
      this.functions = out;
    }
    let best: FunctionNode | undefined;
    for (const f of this.functions) {
      if (f.range[0] <= node.range[0] && node.range[1] <= f.range[1] && f !== node && (!best || f.range[0] >= best.range[0])) best = f;
    }
    return best;
  }
}

/** Every node under `root`, depth-first, with a bound on how many are visited; `ownBody` leaves out nested functions. */
function* nodesUnder(root: Node, limit = 50_000, ownBody = false): Generator<Node> {
  const stack: Node[] = [root];
  let seen = 0;
  while (stack.length > 0 && seen++ < limit) {
    const n = stack.pop()!;
    yield n;
    if (ownBody && n !== root && isFunction(n)) continue;
    const c = children(n);
    for (let i = c.length - 1; i >= 0; i--) stack.push(c[i]);
  }
}

/** A key that names a tenant: `tenantId`, `tenant.id`, `orgSlug`, `schema`, `workspace`... */
const TENANT_KEY = /tenant|org|account|customer|workspace|company|team|shard|schema|realm|site/i;

/**
 * A map key from the function's parameters that names a tenant. A pool kept by
 * its connection string (`pools.set(url, pool)`) is one pool for every tenant
 * that shares the URL: not per tenant.
 */
function tenantKey(key: Node, params: ReadonlySet<string>): boolean {
  for (const n of nodesUnder(key, 500)) {
    if (n.type === 'Identifier' && params.has(n.name) && TENANT_KEY.test(n.name)) return true;
    if (n.type === 'MemberExpression' && unwrap(n.object)?.type === 'Identifier' && params.has((unwrap(n.object) as TSESTree.Identifier).name)) {
      if (TENANT_KEY.test((unwrap(n.object) as TSESTree.Identifier).name) || TENANT_KEY.test(propertyName(n) ?? '')) return true;
    }
  }
  return false;
}

function mentions(node: Node, names: ReadonlySet<string>): boolean {
  for (const n of nodesUnder(node, 5000)) if (n.type === 'Identifier' && names.has(n.name)) return true;
  return false;
}

/** The name the made value is kept under: `const pool = new Pool()`, `pool = knex(...)`, `this.pool = ...` (not followed). */
function holderName(made: Node, scope: Node): string | undefined {
  for (const n of nodesUnder(scope)) {
    if (n.type === 'VariableDeclarator' && n.id.type === 'Identifier' && n.init && unwrap(n.init) === made) return n.id.name;
    if (n.type === 'AssignmentExpression' && n.left.type === 'Identifier' && unwrap(n.right) === made) return n.left.name;
  }
  return undefined;
}

/** A numeric option: `max: 1`, or Knex's `pool: { max: 1 }`. */
export function maxConnections(args: readonly TSESTree.CallExpressionArgument[]): number | undefined {
  for (const arg of args) {
    const options = unwrap(arg as Node);
    if (options?.type !== 'ObjectExpression') continue;
    for (const object of [options, unwrap(objectProperty(options, 'pool')?.value as Node | undefined)]) {
      if (object?.type !== 'ObjectExpression') continue;
      const max = unwrap(objectProperty(object, 'max')?.value as Node | undefined);
      if (max?.type === 'Literal' && typeof max.value === 'number') return max.value;
    }
  }
  return undefined;
}

/**
 * Whether a pool or client made at `made` can carry one tenant's session to
 * another's job: 'per-tenant' when it is made in a function and kept in a
 * map or object under a key that names a tenant and comes from that
 * function's parameters (or its connect hook is configured from them);
 * 'single-connection' for a client, or a pool of one connection, that is
 * ended (`end()`, `close()`, `destroy()`) by the function (or module code)
 * that makes it, not by a nested callback. Undefined: shared, as far as the
 * code shows. `made` may be the call of a project function that makes a pool
 * at each call (`createClient()`): `oneConnection` then says what that pool is.
 */
export function reuseOf(
  made: TSESTree.NewExpression | TSESTree.CallExpression,
  kind: 'pool' | 'client',
  hooks: readonly PoolHook[],
  program: TSESTree.Program,
  functions: FunctionIndex,
  oneConnection = maxConnections(made.arguments) === 1,
): ConnectionConfig['reuse'] {
  const fn = functions.enclosing(made);
  const scope: Node = fn ?? program;
  const holder = holderName(made, scope);
  if (fn) {
    const params = new Set(fn.params.flatMap((p) => patternNames(p.type === 'TSParameterProperty' ? p.parameter : p).map((id) => id.name)));
    if (params.size > 0) {
      for (const n of nodesUnder(fn)) {
        // pools.set(tenantId, pool) / cache[tenant.id] = pool
        if (n.type === 'CallExpression') {
          const method = methodOf(n);
          const value = unwrap(n.arguments[1] as Node | undefined);
          if (method?.name === 'set' && n.arguments.length === 2 && value && (value === made || (holder && value.type === 'Identifier' && value.name === holder)) && tenantKey(n.arguments[0] as Node, params)) return 'per-tenant';
        }
        if (n.type === 'AssignmentExpression' && n.left.type === 'MemberExpression' && n.left.computed) {
          const value = unwrap(n.right);
          if ((value === made || (holder && value?.type === 'Identifier' && value.name === holder)) && tenantKey(n.left.property as Node, params)) return 'per-tenant';
        }
      }
      // A connect hook configured from the function's parameters: every connection of the pool carries that one value.
      for (const hook of hooks) if (isFunction(hook.fn) && mentions(hook.fn.body as Node, params)) return 'per-tenant';
    }
  }
  if (!holder) return undefined;
  if (kind === 'pool' && !oneConnection) return undefined;
  // Ended by the code that made it, not by a shutdown handler (`process.on('SIGTERM', () => sql.end())` ends a long-lived pool).
  for (const n of nodesUnder(scope, 50_000, true)) {
    if (n.type !== 'CallExpression') continue;
    const callee = unwrap(n.callee);
    if (callee?.type !== 'MemberExpression') continue;
    const name = propertyName(callee);
    const object = unwrap(callee.object);
    if ((name === 'end' || name === 'close' || name === 'destroy') && object?.type === 'Identifier' && object.name === holder) return 'single-connection';
  }
  return undefined;
}
