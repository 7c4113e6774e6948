// Pools made for one tenant: a function that builds its pool or engine from
// the tenant it is given, or keeps the one it builds under that tenant's key,
// hands every tenant a pool of its own, so what one tenant's job leaves on a
// connection cannot reach another tenant's job.
//
//   def engine_for(tenant_id) -> Engine:              # a factory, of this
//       if tenant_id not in _engines:                 # file or of a project
//           _engines[tenant_id] = create_engine(URL)  # module: its callers'
//       return _engines[tenant_id]                    # engine is per tenant
//
//   def handler(request):                             # built per request
//       tenant_role = request.state.tenant_role       # from the tenant's role
//       engine = create_engine(URL, connect_args={"options": f"-c role={tenant_role}"})
//
// What names a tenant: a parameter or local of the function named so
// (`tenant_id`, `schema`, `org_slug`, ...), or an attribute of a parameter
// named so (`request.state.tenant_role`). A module-level setting
// (`settings.TENANT_DATABASE_URL`) is one value for every tenant: it does not.
import { children, ownNodes, type Node } from '../syntax.ts';
import { parameters } from './defs.ts';

/** Names that identify a tenant. */
const TENANT_NAME = /(^|_)(tenant|schema|customer|org|organization|account|shard|workspace)(_|$|id|name|slug)/i;

/** The function a node is in, if any. */
export function enclosingDef(node: Node): Node | undefined {
  for (let p: Node | null = node.parent; p; p = p.parent) {
    if (p.name === 'FunctionDefinition') return p;
    if (p.name === 'ClassDefinition') return undefined;
  }
  return undefined;
}

/** Locals of the def assigned exactly once with a plain `name = value`. */
function localsOnce(def: Node, text: string): Map<string, Node> {
  const counts = new Map<string, number>();
  const values = new Map<string, Node>();
  ownNodes(def, (node) => {
    if (node.name !== 'AssignStatement') return;
    const parts = children(node);
    if (parts[0]?.name !== 'VariableName') return;
    const name = text.slice(parts[0].from, parts[0].to);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    if (parts[1]?.name === 'AssignOp' && parts.length === 3) values.set(name, parts[2]);
  });
  for (const name of [...values.keys()]) if (counts.get(name) !== 1) values.delete(name);
  return values;
}

/** The expression uses a value of the function that names a tenant. */
function namesTenant(expr: Node, text: string, params: Set<string>, locals: Map<string, Node>, depth = 0): boolean {
  let found = false;
  const visit = (node: Node) => {
    if (found) return;
    if (node.name === 'MemberExpression') {
      // request.state.tenant_role: an attribute chain from a parameter or local, one of whose names is a tenant's.
      const chain = text.slice(node.from, node.to);
      const root = /^[A-Za-z_]\w*/.exec(chain)?.[0];
      const fromCaller = root !== undefined && root !== 'self' && root !== 'cls' && fromParams(node.firstChild ?? node, text, params, locals);
      if (fromCaller && /^[\w.]+$/.test(chain) && chain.split('.').some((part) => TENANT_NAME.test(part))) {
        found = true;
        return;
      }
    }
    if (node.name === 'VariableName') {
      const name = text.slice(node.from, node.to);
      if (params.has(name) && TENANT_NAME.test(name)) found = true;
      const value = locals.get(name);
      if (value && depth < 3 && (TENANT_NAME.test(name) ? fromParams(value, text, params, locals) : namesTenant(value, text, params, locals, depth + 1))) found = true;
      return;
    }
    for (const child of children(node)) visit(child);
  };
  visit(expr);
  return found;
}

/** The value comes from the function's parameters (through its locals), not from a module setting or a call of nothing. */
function fromParams(expr: Node, text: string, params: Set<string>, locals: Map<string, Node>, depth = 0): boolean {
  let found = false;
  const visit = (node: Node) => {
    if (found) return;
    if (node.name === 'VariableName') {
      const name = text.slice(node.from, node.to);
      const value = locals.get(name);
      if (params.has(name) && name !== 'self' && name !== 'cls') found = true;
      else if (value && depth < 3 && fromParams(value, text, params, locals, depth + 1)) found = true;
      return;
    }
    for (const child of children(node)) visit(child);
  };
  visit(expr);
  return found;
}

/**
 * A maker's call that makes a pool for one tenant: in a function, its
 * arguments use a value that names the tenant, or what it makes is kept under
 * a tenant's key (`_engines[tenant_id] = create_engine(...)`, or through a
 * local: `engine = create_engine(...)`, `pools[org] = engine`).
 */
export function perTenantMaker(call: Node, text: string): boolean {
  const def = enclosingDef(call);
  if (!def) return false;
  const params = new Set(parameters(def, text).map((p) => p.name));
  const locals = localsOnce(def, text);
  const args = call.lastChild;
  if (args && namesTenant(args, text, params, locals)) return true;
  // Kept under a tenant's key.
  const statement = call.parent;
  const heldBy = statement?.name === 'AssignStatement' && statement.firstChild?.name === 'VariableName' ? text.slice(statement.firstChild.from, statement.firstChild.to) : undefined;
  let keyed = false;
  ownNodes(def, (node) => {
    if (keyed || node.name !== 'AssignStatement') return;
    const parts = children(node);
    const target = parts[0];
    const value = parts[parts.length - 1];
    if (target?.name !== 'MemberExpression' || !children(target).some((c) => c.name === '[')) return;
    const isMade = value === call || value.from === call.from || (heldBy !== undefined && value.name === 'VariableName' && text.slice(value.from, value.to) === heldBy);
    if (!isMade) return;
    const key = children(target).find((c, i, all) => i > 0 && all[i - 1].name === '[');
    if (key && namesTenant(key, text, params, locals)) keyed = true;
  });
  return keyed;
}

/**
 * The one pool maker's call of a factory function that makes a pool for one
 * tenant (`engine_for(tenant_id)` above), whatever its returns look like; the
 * caller's pool is that one. Undefined when the function makes none, several,
 * or one that serves every tenant.
 */
export function tenantFactoryCall(def: Node, text: string, isPoolMaker: (call: Node) => boolean): Node | undefined {
  const made: Node[] = [];
  ownNodes(def, (node) => {
    if (node.name === 'CallExpression' && isPoolMaker(node)) made.push(node);
  });
  return made.length === 1 && perTenantMaker(made[0], text) ? made[0] : undefined;
}
