// ESTree helpers shared by the TS/JS front end. The tree is typescript-estree's
// (the CLI) or whatever parser ESLint was given (typescript-eslint, espree):
// only ESTree shapes and `range` are relied on, never `parent` or `loc`.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Span } from '../../model/index.ts';

export type Node = TSESTree.Node;
export type Expression = TSESTree.Expression;
export type Call = TSESTree.CallExpression;
export type FunctionNode = TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression | TSESTree.FunctionDeclaration;

const SKIP_KEYS = new Set(['parent', 'range', 'loc', 'start', 'end', 'tokens', 'comments', 'typeAnnotation', 'returnType', 'typeParameters', 'typeArguments', 'decorators']);

export function span(node: { range: [number, number] }): Span {
  return { start: node.range[0], end: node.range[1] };
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && Array.isArray((value as { range?: unknown }).range);
}

/** Child nodes in source order (type annotations left out: they hold no SQL). */
export function children(node: Node): Node[] {
  // Called for most nodes of every file and imported module: no closure, and a key whose value is
  // not an object (a name, a flag, a literal's value) is passed over before the set is asked.
  const out: Node[] = [];
  const record = node as unknown as Record<string, unknown>;
  // Keys mostly come in source order; only some nodes (a template's quasis and expressions) need the sort.
  let ordered = true;
  let last = -Infinity;
  for (const key in record) {
    const value = record[key];
    if (typeof value !== 'object' || value === null || SKIP_KEYS.has(key)) continue;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (!isNode(item)) continue;
        if (item.range[0] < last) ordered = false;
        last = item.range[0];
        out.push(item);
      }
    } else if (isNode(value)) {
      if (value.range[0] < last) ordered = false;
      last = value.range[0];
      out.push(value);
    }
  }
  return ordered ? out : out.sort((a, b) => a.range[0] - b.range[0]);
}

export function isFunction(node: Node | null | undefined): node is FunctionNode {
  return !!node && (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression' || node.type === 'FunctionDeclaration');
}

/** Strips what does not change the value: TS casts, `!`, optional chains, parentheses (ESTree has none). */
export function unwrap(node: Node | null | undefined): Node | undefined {
  let current = node ?? undefined;
  while (current) {
    if (
      current.type === 'TSAsExpression' ||
      current.type === 'TSNonNullExpression' ||
      current.type === 'TSSatisfiesExpression' ||
      current.type === 'TSTypeAssertion' ||
      current.type === 'ChainExpression' ||
      (current as { type: string }).type === 'TSInstantiationExpression'
    ) {
      current = (current as { expression: Node }).expression;
      continue;
    }
    if (current.type === 'AwaitExpression') {
      current = current.argument;
      continue;
    }
    return current;
  }
  return undefined;
}

/** `a.b.c` -> 'c'; computed string keys too (`a['c']`). */
export function propertyName(member: TSESTree.MemberExpression): string | undefined {
  if (!member.computed && member.property.type === 'Identifier') return member.property.name;
  if (member.property.type === 'PrivateIdentifier') return `#${member.property.name}`;
  if (member.computed && member.property.type === 'Literal' && typeof member.property.value === 'string') return member.property.value;
  return undefined;
}

/** A class member's key as a name: `x`, `#x` for a private one; undefined for any other key. */
export function memberKeyName(member: { key: Node }): string | undefined {
  const key = member.key;
  return key.type === 'Identifier' ? key.name : key.type === 'PrivateIdentifier' ? `#${key.name}` : undefined;
}

/** The dotted name of an expression made of identifiers, `this` and property accesses: `this.pool`, `pg.Pool`. */
export function dottedName(node: Node | null | undefined): string | undefined {
  const n = unwrap(node);
  if (!n) return undefined;
  if (n.type === 'Identifier') return n.name;
  if (n.type === 'ThisExpression') return 'this';
  if (n.type === 'MemberExpression') {
    const object = dottedName(n.object);
    const name = propertyName(n);
    return object !== undefined && name !== undefined ? `${object}.${name}` : undefined;
  }
  return undefined;
}

/** The method of a call `x.m(...)`: its receiver and name. */
export function methodOf(call: { callee: Node }): { object: Node; name: string } | undefined {
  const callee = unwrap(call.callee);
  if (callee?.type !== 'MemberExpression') return undefined;
  const name = propertyName(callee);
  return name === undefined ? undefined : { object: callee.object, name };
}

/** The last function among a call's arguments (the callback of `sql.begin('isolation level ...', fn)`). */
export function callbackArg(call: Call): FunctionNode | undefined {
  for (let i = call.arguments.length - 1; i >= 0; i--) {
    const arg = unwrap(call.arguments[i]);
    if (isFunction(arg)) return arg;
  }
  return undefined;
}

/** A type annotation's name: `PoolClient`, `pg.PoolClient`, `postgres.TransactionSql<...>`. */
export function typeName(annotation: TSESTree.TypeNode | undefined): string | undefined {
  if (!annotation) return undefined;
  if (annotation.type === 'TSTypeReference') {
    const name = annotation.typeName;
    if (name.type === 'Identifier') return name.name;
    if (name.type === 'TSQualifiedName') return name.right.name;
  }
  return undefined;
}

/** The declared type of a parameter or variable, if annotated. */
export function annotatedType(node: Node): string | undefined {
  const target = node.type === 'AssignmentPattern' ? node.left : node;
  const annotation = (target as { typeAnnotation?: TSESTree.TSTypeAnnotation }).typeAnnotation;
  return typeName(annotation?.typeAnnotation);
}

/** A string literal's value. */
export function stringValue(node: Node | null | undefined): string | undefined {
  const n = unwrap(node);
  if (n?.type === 'Literal' && typeof n.value === 'string') return n.value;
  if (n?.type === 'TemplateLiteral' && n.expressions.length === 0) return n.quasis[0].value.cooked ?? undefined;
  return undefined;
}

/** The property `key` of an object literal. */
export function objectProperty(object: TSESTree.ObjectExpression, key: string): TSESTree.Property | undefined {
  for (const property of object.properties) {
    if (property.type !== 'Property') continue;
    const name =
      !property.computed && property.key.type === 'Identifier'
        ? property.key.name
        : property.key.type === 'Literal'
          ? String(property.key.value)
          : undefined;
    if (name === key) return property;
  }
  return undefined;
}

/** The properties of an object literal written with a plain key (`a: 1`, `'a': 1`, not `[a]: 1`), each with its key as a name. */
export function namedProperties(object: TSESTree.ObjectExpression): { key: string; property: TSESTree.Property }[] {
  return (object.properties.filter((p) => p.type === 'Property' && !p.computed) as TSESTree.Property[]).map((property) => ({
    key: property.key.type === 'Identifier' ? property.key.name : String((property.key as TSESTree.Literal).value),
    property,
  }));
}

/** The nodes from `root` down to `node` (both included); empty when `node` is not inside `root`. */
export function pathTo(root: Node, node: Node): Node[] {
  const path: Node[] = [root];
  let current: Node = root;
  for (let depth = 0; current !== node && depth < 500; depth++) {
    const next: Node | undefined = children(current).find((c) => c.range[0] <= node.range[0] && node.range[1] <= c.range[1]);
    if (!next) return [];
    path.push(next);
    current = next;
  }
  return current === node ? path : [];
}

/** Names bound by a pattern (`const { rows: [job] } = ...` binds job). */
export function patternNames(pattern: Node | null | undefined, out: TSESTree.Identifier[] = []): TSESTree.Identifier[] {
  if (!pattern) return out;
  switch (pattern.type) {
    case 'Identifier':
      out.push(pattern);
      break;
    case 'ObjectPattern':
      for (const p of pattern.properties) patternNames(p.type === 'RestElement' ? p.argument : p.value, out);
      break;
    case 'ArrayPattern':
      for (const e of pattern.elements) patternNames(e, out);
      break;
    case 'RestElement':
      patternNames(pattern.argument, out);
      break;
    case 'AssignmentPattern':
      patternNames(pattern.left, out);
      break;
    case 'TSParameterProperty':
      patternNames(pattern.parameter, out);
      break;
    default:
      break;
  }
  return out;
}
