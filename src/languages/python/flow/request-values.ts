// Values a Python process holds for one request or job at a time: a ContextVar's `.get()`, an attribute of a
// thread-local (`threading.local()`, asgiref's and werkzeug's `Local()`), Flask's `g` and `request`, and what is read
// from such a value (`request.state.tenant_id`, `str(t)`, `f"tenant_{t}"`), also through one call of a function of
// the file that returns one (`get_tenant_schema()`). A hook that runs once per new connection and writes such a
// value at session level gives the connection, for its whole life, the tenant of whichever job opened it.
import { callParts, children, unwrap, type Node } from '../syntax.ts';
import { parameters } from './defs.ts';
import { importedValue, type DeploymentReader } from './deployment-values.ts';
import { qualifiedName } from './imports.ts';

export interface RequestReader extends DeploymentReader {
  /** The def of this file a callee names, where it names one. */
  resolveDef(callee: Node, at: Node): Node | undefined;
}

/** Objects whose value differs per request, task or thread. */
const HOLDERS = new Set([
  'contextvars.ContextVar',
  'threading.local',
  '_threading_local.local',
  'asgiref.local.Local',
  'werkzeug.local.Local',
  'werkzeug.local.LocalStack',
]);
/** Request-scoped objects of the frameworks, read by attribute. */
const REQUEST_OBJECTS = ['flask.g', 'flask.request', 'flask.session', 'quart.g', 'quart.request'];
const PURE_BUILTINS = new Set(['str', 'int', 'format', 'getattr']);
const PURE_METHODS = new Set(['lower', 'upper', 'strip', 'lstrip', 'rstrip', 'format', 'replace', 'join', 'get']);
const MAX_DEPTH = 8;

/** Whether `node` holds a value of the current request or job (see above); false wherever that is not shown. */
export function isRequestValue(node: Node | null | undefined, reader: RequestReader, depth = 0, followed = false): boolean {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return false;
  const next = (child: Node | null | undefined, follow = followed) => isRequestValue(child, reader, depth + 1, follow);
  const qualify = (x: Node) => qualifiedName(x, reader.text, reader.imports);
  switch (n.name) {
    case 'FormatString':
      return children(n)
        .filter((c) => c.name === 'FormatReplacement')
        .some((field) => children(field).some((c) => next(c)));
    case 'BinaryExpression': {
      const [left, , right] = children(n);
      return next(left) || next(right);
    }
    case 'ConditionalExpression': {
      // `a if test else b`: the value is one of the branches.
      const parts = children(n).filter((c) => c.name !== 'if' && c.name !== 'else');
      return next(parts[0]) || next(parts[2]);
    }
    case 'VariableName': {
      const name = reader.text.slice(n.from, n.to);
      const value = unwrap(reader.constant(name, n));
      if (value) return value.name !== 'LambdaExpression' && next(value);
      // A parameter of a function the hook is defined in (`def bind(engine, tenant): @event.listens_for(engine,
      // "connect") ...`): what the calls of that function in this file pass for it, one call up.
      return !followed && closureArguments(n, name, reader).some((arg) => next(arg, true));
    }
    case 'MemberExpression': {
      const q = qualify(n);
      if (q && REQUEST_OBJECTS.some((o) => q.startsWith(`${o}.`) || q.startsWith(`${o}[`))) return true;
      const object = n.firstChild;
      // `_locals.schema` on a thread-local; `request.state.tenant_id` on a request value.
      return !!object && (isHolder(object, reader) || next(object));
    }
    case 'CallExpression': {
      const call = callParts(n, reader.text);
      if (!call) return false;
      const callee = call.callee;
      if (callee.name === 'MemberExpression') {
        const object = callee.firstChild;
        const property = callee.lastChild;
        const method = property ? reader.text.slice(property.from, property.to) : '';
        // `current_tenant.get()` on a ContextVar.
        if (method === 'get' && object && isHolder(object, reader)) return true;
        if (PURE_METHODS.has(method) && next(object)) return true;
      } else if (callee.name === 'VariableName') {
        const name = reader.text.slice(callee.from, callee.to);
        if (PURE_BUILTINS.has(name) && !reader.constant(name, callee)) {
          // `getattr(_locals, "tenant", None)`, `str(tenant_id)`.
          const [first] = call.args;
          return !!first && !first.star && (isHolder(first.value, reader) || next(first.value));
        }
      }
      // One call of a function of this file that returns such a value (`schema = get_tenant_schema()`).
      if (followed) return false;
      const def = reader.resolveDef(callee, n);
      return !!def && def.name === 'FunctionDefinition' && returnsOf(def).some((r) => next(r, true));
    }
    default:
      return false;
  }
}

/** A name bound to a ContextVar or a thread-local, in this module or a project module it imports. */
function isHolder(node: Node | null | undefined, reader: RequestReader): boolean {
  const n = unwrap(node);
  if (!n || n.name !== 'VariableName') return false;
  const name = reader.text.slice(n.from, n.to);
  const local = unwrap(reader.constant(name, n));
  const found = local ? { value: local, reader: reader as DeploymentReader } : importedValue(reader, name);
  const call = found ? callParts(unwrap(found.value), found.reader.text) : undefined;
  if (!call || !found) return false;
  // `ContextVar[str | None]("tenant")` is rare; `ContextVar("tenant", default=None)` is the form.
  const q = qualifiedName(call.callee, found.reader.text, found.reader.imports);
  return !!q && HOLDERS.has(q);
}

/**
 * The arguments the calls of this file give the parameter `name` of the nearest function enclosing `at` that has one,
 * when that function is not the innermost one (the hook's own parameters are the pool's to give).
 */
function closureArguments(at: Node, name: string, reader: RequestReader): Node[] {
  let def: Node | null = at.parent;
  while (def && def.name !== 'FunctionDefinition') def = def.parent;
  for (let outer = def?.parent ?? null; outer; outer = outer.parent) {
    if (outer.name !== 'FunctionDefinition') continue;
    const params = parameters(outer, reader.text).filter((p) => p.kind === 'normal');
    const index = params.findIndex((p) => p.name === name);
    if (index < 0) continue;
    const id = outer.getChild('VariableName');
    return id ? argumentsAt(reader.text.slice(id.from, id.to), name, index, outer, reader) : [];
  }
  return [];
}

/** What the calls of `fn` by its bare name (a function of the module) pass at `index` or as `name`. */
function argumentsAt(fn: string, name: string, index: number, def: Node, reader: RequestReader): Node[] {
  let top: Node = def;
  while (top.parent) top = top.parent;
  const out: Node[] = [];
  const cursor = top.cursor();
  do {
    if (cursor.name !== 'CallExpression') continue;
    const call = callParts(cursor.node, reader.text);
    if (!call || call.callee.name !== 'VariableName' || reader.text.slice(call.callee.from, call.callee.to) !== fn) continue;
    if (reader.resolveDef(call.callee, cursor.node)?.from !== def.from) continue;
    const named = call.args.find((a) => a.name === name);
    const given = named ?? call.args.filter((a) => !a.name && !a.star)[index];
    if (given && !given.star) out.push(given.value);
  } while (cursor.next());
  return out;
}

/** The values a def returns (not those of defs nested in it). */
function returnsOf(def: Node): Node[] {
  const out: Node[] = [];
  const visit = (node: Node) => {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.name === 'FunctionDefinition' || c.name === 'LambdaExpression' || c.name === 'ClassDefinition') continue;
      if (c.name === 'ReturnStatement') {
        const value = c.lastChild && c.lastChild.name !== 'return' ? c.lastChild : undefined;
        if (value) out.push(value);
      } else visit(c);
    }
  };
  const body = def.getChild('Body');
  if (body) visit(body);
  return out;
}
