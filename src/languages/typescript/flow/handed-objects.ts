// A connection handed to a function of the file inside an object literal
// (`await finish({ client, job })`, `helper({ db: client })`): at the call the
// walk follows it into the function as it follows a positional argument, so a
// COMMIT or a release there moves the caller's connection. The object is
// walked in as a value whose properties are what the literal gave them; a
// parameter that destructures it (`({ client }) => ...`) or reads a member
// of it (`options.client`) gets the connection.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { memberKeyName, unwrap, type Node } from '../syntax.ts';
import type { Value } from './types.ts';

/** The object values made here, with the values their literal's properties hold. */
const objectProperties = new WeakMap<Value, ReadonlyMap<string, Value>>();

function objectOf(properties: Map<string, Value>): Value | undefined {
  if (properties.size === 0) return undefined;
  const object: Value = { kind: 'namespace', member: (name) => properties.get(name) };
  objectProperties.set(object, properties);
  return object;
}

/** The members of an object type: a type literal, or an interface or type alias of the file that is one. */
function membersOf(type: TSESTree.TypeNode, program: TSESTree.Program): readonly TSESTree.TypeElement[] | undefined {
  if (type.type === 'TSTypeLiteral') return type.members;
  if (type.type !== 'TSTypeReference' || type.typeName.type !== 'Identifier') return undefined;
  const name = type.typeName.name;
  for (const statement of program.body) {
    const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (d?.type === 'TSInterfaceDeclaration' && d.id.name === name) return d.body.body;
    if (d?.type === 'TSTypeAliasDeclaration' && d.id.name === name && d.typeAnnotation.type === 'TSTypeLiteral') return d.typeAnnotation.members;
  }
  return undefined;
}

/**
 * A parameter destructured from an object whose type names its properties
 * (`async function runJob({ client, job }: { client: PoolClient; job: Job })`,
 * or an interface of the file): the properties whose types are a driver's
 * connection, as the object a caller hands.
 */
export function typedObject(type: TSESTree.TypeNode, program: TSESTree.Program, valueOfType: (t: TSESTree.TypeNode) => Value | undefined): Value | undefined {
  const members = membersOf(type, program);
  if (!members) return undefined;
  const properties = new Map<string, Value>();
  for (const m of members) {
    if (m.type !== 'TSPropertySignature' || m.computed || !m.typeAnnotation) continue;
    const key = memberKeyName(m);
    const held = key === undefined ? undefined : valueOfType(m.typeAnnotation.typeAnnotation);
    if (key !== undefined && held?.kind === 'conn') properties.set(key, held);
  }
  return objectOf(properties);
}

/**
 * An object literal argument as a value: a namespace of its properties that
 * hold a connection (`{ client }`, `{ db: tx }`). Undefined when no property
 * holds one, or when a spread or a computed key may put any value anywhere.
 */
export function handedObject(arg: Node | undefined, value: (n: Node) => Value | undefined): Value | undefined {
  const n = unwrap(arg);
  if (n?.type !== 'ObjectExpression') return undefined;
  const properties = new Map<string, Value>();
  for (const p of n.properties) {
    if (p.type !== 'Property' || p.computed) return undefined;
    const key = memberKeyName(p);
    const held = key === undefined ? undefined : value(p.value as Node);
    if (key !== undefined && held?.kind === 'conn') properties.set(key, held);
  }
  return objectOf(properties);
}

/** The values an object handed at a call holds (none for any other value). */
export function heldBy(v: Value | undefined): Value[] {
  return v ? [...(objectProperties.get(v)?.values() ?? [])] : [];
}

/**
 * What each name of an object pattern (`{ client, job: j }`) gets from a
 * namespace: its member of that key. A nested pattern, a default or a rest
 * element gets nothing (undefined), as before.
 */
export function destructured(pattern: TSESTree.ObjectPattern, value: Extract<Value, { kind: 'namespace' }>): Map<string, Value | undefined> {
  const out = new Map<string, Value | undefined>();
  for (const p of pattern.properties) {
    if (p.type !== 'Property' || p.computed || p.value.type !== 'Identifier') continue;
    const key = memberKeyName(p);
    if (key !== undefined) out.set(p.value.name, value.member(key));
  }
  return out;
}
