// Small readings of Python syntax the walk needs: a def's name, parameters
// and body, `with` items, decorators, annotations, literal booleans.
import { childNamed, children, keyword, ownNodes, positional, unwrap, type Arg, type Node } from '../syntax.ts';

export function defName(def: Node, text: string): string {
  const id = childNamed(def, 'VariableName');
  return id ? text.slice(id.from, id.to) : '<def>';
}

/** The statements of a def's, class's or compound statement's Body (or of a Body itself). */
export function bodyStatements(node: Node): Node[] {
  const body = node.name === 'Body' ? node : childNamed(node, 'Body');
  if (!body) return [];
  return children(body).filter((c) => c.name !== ':');
}

export function unwrapDecorated(node: Node): Node | undefined {
  if (node.name === 'DecoratedStatement') return childNamed(node, 'FunctionDefinition') ?? childNamed(node, 'ClassDefinition') ?? undefined;
  return node;
}

/** A def decorated with contextlib's @contextmanager or @asynccontextmanager. */
export function isContextManager(def: Node, text: string): boolean {
  const decorated = def.parent;
  if (decorated?.name !== 'DecoratedStatement') return false;
  return decorated.getChildren('Decorator').some((d) => /\b(async)?contextmanager\s*$/.test(text.slice(d.from, d.to).trim()));
}

export interface Parameter {
  name: string;
  kind: 'normal' | 'star' | 'kwargs';
  annotation?: Node;
  /** The default value's expression (`minutes=LEASE_MINUTES`). */
  default?: Node;
  /** After a bare `*` (`def claim(session, *, now)`): passed by keyword only. */
  keywordOnly?: boolean;
}

export function parameters(def: Node, text: string): Parameter[] {
  const list = childNamed(def, 'ParamList');
  if (!list) return [];
  const params: Parameter[] = [];
  let pending: 'star' | 'kwargs' | undefined;
  let afterDefault = false;
  let keywordOnly = false;
  for (const c of children(list)) {
    if (c.name === '*') pending = 'star';
    else if (c.name === '**') pending = 'kwargs';
    else if (c.name === ',') {
      afterDefault = false;
      // A bare `*`: what follows is no `*args` but keyword-only parameters.
      if (pending === 'star') {
        pending = undefined;
        keywordOnly = true;
      }
    } else if (c.name === 'AssignOp') afterDefault = true;
    else if (afterDefault) {
      const last = params[params.length - 1];
      if (last && !last.default) last.default = c;
    } else if (c.name === 'VariableName') {
      const kind = pending ?? 'normal';
      params.push({ name: text.slice(c.from, c.to), kind, ...(kind === 'star' ? {} : keywordOnly && kind === 'normal' ? { keywordOnly: true } : {}) });
      if (kind === 'star') keywordOnly = true;
      pending = undefined;
    } else if (c.name === 'TypeDef' && params.length > 0) {
      params[params.length - 1].annotation = c.lastChild ?? undefined;
    }
  }
  return params;
}

/** `Optional[Session]`, `Session | None`, `"Session"`: the type named. */
export function annotationType(node: Node): Node {
  if (node.name === 'MemberExpression' && node.lastChild?.name === ']') {
    const inner = children(node).find((c, i, all) => i > 0 && all[i - 1].name === '[');
    return inner ? annotationType(inner) : node;
  }
  if (node.name === 'BinaryExpression') return annotationType(node.firstChild ?? node);
  return node;
}

export interface WithItem {
  expr: Node;
  target?: Node;
}

export function withItems(node: Node): WithItem[] {
  const items: WithItem[] = [];
  let current: WithItem | undefined;
  let expectTarget = false;
  for (const c of children(node)) {
    if (c.name === 'with' || c.name === 'async' || c.name === ',') {
      expectTarget = false;
      continue;
    }
    if (c.name === 'Body') break;
    if (c.name === 'as') {
      expectTarget = true;
      continue;
    }
    if (expectTarget && current) {
      current.target = c;
      expectTarget = false;
      continue;
    }
    current = { expr: c };
    items.push(current);
  }
  return items;
}

/** The SQL argument of an execute-like call: the first positional one, or query=/sql=/statement=. */
export function sqlArgument(args: Arg[]): Node | undefined {
  return positional(args, 0) ?? keyword(args, 'query') ?? keyword(args, 'sql') ?? keyword(args, 'statement');
}

export function literalBool(node: Node | undefined, text: string): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  const value = text.slice(expr.from, expr.to);
  return value === 'True' ? true : value === 'False' ? false : 'unknown';
}

/** The values of the plain assignments `name = value` a def makes to its parameter `name`. */
export function assignedToParameter(def: Node, text: string, name: string): Node[] {
  const values: Node[] = [];
  ownNodes(def, (node) => {
    const parts = node.name === 'AssignStatement' ? children(node) : [];
    const plain = parts.length === 3 && parts[0].name === 'VariableName' && parts[1].name === 'AssignOp' && text.slice(parts[0].from, parts[0].to) === name;
    if (plain) values.push(parts[2]);
  });
  return values;
}
