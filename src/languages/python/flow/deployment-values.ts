// Values a Python process takes from its own deployment: literals, the environment (`os.getenv("DB_SCHEMA")`,
// `os.environ["X"]`), constants of the file or of a project module computed from only these, the settings objects
// the drivers name (Django's) and the attributes of a pydantic `BaseSettings` instance a module keeps. Every job the
// process runs gets the same one: it names the application's schema, never a job's or a request's tenant.
import { DEPLOYMENT_SETTINGS } from '../drivers/index.ts';
import { callParts, children, unwrap, type Node } from '../syntax.ts';
import { qualifiedName, type Imports } from './imports.ts';
import { moduleValue, type ModuleSource } from './project.ts';
import type { HostText } from './strings.ts';

/** One module as the check reads it: the file being walked, or a project module a name of it comes from. */
export interface DeploymentReader {
  text: string;
  imports: Imports;
  /** A module-level constant of this module (undefined where a function binds the name itself). */
  constant(name: string, at: Node): Node | undefined;
  projectModule(module: string, level: number, from?: string): ModuleSource | undefined;
  path?: string;
}

const ENV_READERS = new Set(['os.getenv', 'os.environ.get', 'os.environ.setdefault']);
const ENVIRONS = new Set(['os.environ']);
/** Settings objects read from the deployment's configuration once, at start-up: the drivers', and Flask's app config. */
const SETTINGS_OBJECTS: ReadonlySet<string> = new Set([...DEPLOYMENT_SETTINGS, 'flask.current_app.config']);
const SETTINGS_BASES = new Set(['pydantic.BaseSettings', 'pydantic_settings.BaseSettings']);
const PURE_BUILTINS = new Set(['str', 'int', 'format']);
const PURE_METHODS = new Set(['lower', 'upper', 'strip', 'lstrip', 'rstrip', 'format', 'replace', 'join', 'split']);
const LITERALS = new Set(['Number', 'Boolean', 'None', 'String', 'ContinuedString']);
const MAX_DEPTH = 8;

/** Whether `node` holds a value of the deployment (see above); false wherever a part of it is not known to be one. */
export function isDeploymentValue(node: Node | null | undefined, reader: DeploymentReader, depth = 0): boolean {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return false;
  const next = (child: Node | null | undefined, within: DeploymentReader = reader) => isDeploymentValue(child, within, depth + 1);
  const qualify = (x: Node) => qualifiedName(x, reader.text, reader.imports);
  /** `os.environ["X"]`, `settings.DATABASES["default"]`: an item of a deployment mapping, by a deployment key. */
  const subscript = (x: Node): boolean => {
    const object = x.firstChild;
    const q = object ? qualify(object) : undefined;
    const index = children(x).filter((c) => c.name !== '[' && c.name !== ']' && c.from !== object?.from);
    const mapping = (!!q && (ENVIRONS.has(q) || SETTINGS_OBJECTS.has(q))) || (!!object && next(object));
    return mapping && index.every((c) => next(c));
  };
  switch (n.name) {
    case 'FormatString':
      return children(n)
        .filter((c) => c.name === 'FormatReplacement')
        .every((field) => children(field).filter((c) => c.name !== '{' && c.name !== '}' && c.name !== 'FormatSpec' && c.name !== 'FormatConversion').every((c) => next(c)));
    case 'BinaryExpression': {
      const [left, , right] = children(n);
      return next(left) && next(right);
    }
    case 'TupleExpression':
    case 'ArrayExpression':
      return children(n)
        .filter((c) => !['(', ')', '[', ']', ','].includes(c.name))
        .every((c) => next(c));
    case 'ConditionalExpression':
      return children(n)
        .filter((c) => c.name !== 'if' && c.name !== 'else')
        .every((c) => next(c));
    case 'VariableName': {
      const name = reader.text.slice(n.from, n.to);
      const value = unwrap(reader.constant(name, n));
      if (value) return value.name !== 'LambdaExpression' && next(value);
      const imported = importedValue(reader, name);
      return !!imported && next(imported.value, imported.reader);
    }
    case 'MemberExpression': {
      // lezer reads `os.environ["X"]` as a MemberExpression with brackets.
      if (n.getChild('[')) return subscript(n);
      const q = qualify(n);
      if (q && (SETTINGS_OBJECTS.has(q) || [...SETTINGS_OBJECTS].some((s) => q.startsWith(`${s}.`)))) return true;
      const object = n.firstChild;
      return !!object && isSettingsInstance(object, reader, depth + 1);
    }
    case 'CallExpression': {
      const call = callParts(n, reader.text);
      if (!call || call.args.some((a) => a.star || !next(a.value))) return false;
      const q = qualify(call.callee);
      if (q && ENV_READERS.has(q)) return true;
      const callee = reader.text.slice(call.callee.from, call.callee.to);
      if (call.callee.name === 'VariableName' && PURE_BUILTINS.has(callee) && !reader.constant(callee, call.callee)) return true;
      // A method of a deployment value (`schema.lower()`, `", ".join(paths)`) computes from it.
      if (call.callee.name === 'MemberExpression') {
        const property = call.callee.lastChild;
        const object = call.callee.firstChild;
        return !!property && PURE_METHODS.has(reader.text.slice(property.from, property.to)) && next(object);
      }
      return false;
    }
    default:
      return LITERALS.has(n.name);
  }
}

/** `from app.core.settings import settings`: the value the project module binds to the name, read there. */
export function importedValue(reader: DeploymentReader, name: string): { value: Node; reader: DeploymentReader } | undefined {
  const from = reader.imports.fromImports.get(name);
  const source = from ? reader.projectModule(from.module, from.level, reader.path) : undefined;
  const value = source && from ? moduleValue(source, from.name) : undefined;
  return source && value ? { value, reader: moduleReader(source, reader) } : undefined;
}

function moduleReader(source: ModuleSource, parent: DeploymentReader): DeploymentReader {
  return {
    text: source.text,
    imports: source.imports,
    constant: (name) => source.constants.get(name),
    projectModule: (m, l, f) => parent.projectModule(m, l, f ?? source.path),
    path: source.path,
  };
}

/** A module's instance of a pydantic `BaseSettings` class (`settings = Settings()`): its fields come from the environment. */
function isSettingsInstance(object: Node, reader: DeploymentReader, depth: number): boolean {
  const n = unwrap(object);
  if (!n || n.name !== 'VariableName' || depth > MAX_DEPTH) return false;
  const name = reader.text.slice(n.from, n.to);
  const local = unwrap(reader.constant(name, n));
  const found = local ? { value: local, reader } : importedValue(reader, name);
  if (!found) return false;
  const call = callParts(found.value, found.reader.text);
  if (!call || call.callee.name !== 'VariableName') return false;
  const className = found.reader.text.slice(call.callee.from, call.callee.to);
  const q = qualifiedName(call.callee, found.reader.text, found.reader.imports);
  if (q && SETTINGS_BASES.has(q)) return true;
  let top = found.value;
  while (top.parent) top = top.parent;
  return subclassesSettings(className, found.reader, top);
}

/** `class Settings(BaseSettings)`: a top-level class of the module deriving from pydantic's settings class. */
function subclassesSettings(className: string, reader: DeploymentReader, root: Node): boolean {
  for (let c = root.firstChild; c; c = c.nextSibling) {
    const cls = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    if (cls?.name !== 'ClassDefinition') continue;
    const id = cls.getChild('VariableName');
    if (!id || reader.text.slice(id.from, id.to) !== className) continue;
    const bases = cls.getChild('ArgList');
    return !!bases && children(bases).some((b) => {
      const q = qualifiedName(b, reader.text, reader.imports);
      return !!q && SETTINGS_BASES.has(q);
    });
  }
  return false;
}

/** The expressions the holes of `host` stand for, by the number the analyzer gives each (after the highest $N). */
export function holeNodes(host: HostText, top: Node, text: string): Map<number, Node> {
  const out = new Map<number, Node>();
  const max = Math.max(0, ...[...host.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  [...host.holes].sort((a, b) => a.start - b.start).forEach((hole, k) => {
    const from = host.starts[hole.start];
    const to = host.ends[hole.start];
    if (from === undefined || to === undefined) return;
    const formatted = percentArgument(top, from, text);
    if (formatted) {
      out.set(max + 1 + k, formatted);
      return;
    }
    let node: Node | null = top.resolveInner(from, 1);
    while (node?.parent && node.parent.from >= from && node.parent.to <= to) node = node.parent;
    if (!node || node.from < from || node.to > to) return;
    if (node.name === 'FormatReplacement') {
      const inner = children(node).filter((c) => c.name !== '{' && c.name !== '}');
      node = inner.length === 1 ? inner[0] : null;
    }
    if (node) out.set(max + 1 + k, node);
  });
  return out;
}

/** A printf-style conversion of Python's `%` operator (`%s`, `%(name)s`, `%%`). */
const PERCENT_SPEC = /%(\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])/g;

/** `"SET search_path TO %s" % value`: a hole at a conversion of the template stands for that argument of the `%`. */
function percentArgument(top: Node, at: number, text: string): Node | undefined {
  let literal: Node | null = top.resolveInner(at, 1);
  while (literal && literal.name !== 'String') literal = literal.parent;
  const expr = literal?.parent;
  if (!literal || expr?.name !== 'BinaryExpression') return undefined;
  const [left, op, right] = children(expr);
  if (left?.from !== literal.from || !op || text.slice(op.from, op.to) !== '%' || !right) return undefined;
  let index = 0;
  for (const m of text.slice(literal.from, literal.to).matchAll(PERCENT_SPEC)) {
    const start = literal.from + (m.index ?? 0);
    if (m[2] === '%') continue;
    // A named conversion takes its value from a mapping: not read here.
    if (m[1] !== undefined) return undefined;
    if (start === at) break;
    if (start > at) return undefined;
    index++;
  }
  const value = unwrap(right);
  const items = value?.name === 'TupleExpression' ? children(value).filter((c) => !['(', ')', ','].includes(c.name)) : value ? [value] : [];
  return items[index];
}
