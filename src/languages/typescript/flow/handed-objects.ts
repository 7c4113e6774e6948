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
  if (properties.size === 0) return undefined;
  const object: Value = { kind: 'namespace', member: (name) => properties.get(name) };
  objectProperties.set(object, properties);
  return object;
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
