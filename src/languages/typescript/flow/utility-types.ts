// TypeScript's own utility types over a driver's types: `Awaited<T>` and
// `Promise<T>` are what T is; `ReturnType<Sql['reserve']>` is what that pool
// method gives (a checked-out connection, where the driver names the method
// among its checkouts). So `type Reserved = Awaited<ReturnType<SQL['reserve']>>`
// types a reserved connection. A union of one driver's handles (`Knex |
// Knex.Transaction`, `Pool | PoolClient`) is that driver's handle, in a use
// the type cannot tell.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { DriverRegistry } from '../drivers/index.ts';
import { driverOfValue, type TypeMeaning, type Value } from './types.ts';

/** The meaning of a utility type named `name` (not imported: TypeScript's global), reading its argument with `meaning`. */
export function utilityType(name: string, type: TSESTree.TSTypeReference, meaning: (t: TSESTree.TypeNode) => TypeMeaning | Value | undefined, drivers: DriverRegistry): TypeMeaning | Value | undefined {
  const args = (type as { typeArguments?: { params: TSESTree.TypeNode[] } }).typeArguments?.params;
  if (args?.length !== 1) return undefined;
  const [arg] = args;
  if (name === 'Awaited' || name === 'Promise') return meaning(arg);
  if (name !== 'ReturnType' || arg.type !== 'TSIndexedAccessType') return undefined;
  const key = arg.indexType.type === 'TSLiteralType' && arg.indexType.literal.type === 'Literal' ? arg.indexType.literal.value : undefined;
  const of = meaning(arg.objectType);
  if (!of || typeof key !== 'string') return undefined;
  const pool = 'kind' in of ? of.kind === 'pool' : of.what === 'pool';
  const driver = 'kind' in of ? driverOfValue(of) : of.driver;
  if (!pool || !driver) return undefined;
  return drivers.of(driver)?.checkoutMethods?.includes(key) ? { driver, what: 'checked-out' } : undefined;
}

/**
 * A union whose members are all one driver's handles: that handle when they
 * all say the same (`PoolClient | PoolClient`), else the driver's handle of
 * unknown use (a pool or a transaction: which one the caller decides), so its
 * calls are read as that driver's and placed in no transaction it can name.
 */
export function oneDriversHandle(meanings: readonly (TypeMeaning | Value | undefined)[]): TypeMeaning | Value | undefined {
  const handles = meanings.map((m) => (m && !('kind' in m) ? m : undefined));
  const first = handles[0];
  if (!first || handles.some((h) => h?.driver !== first.driver)) return undefined;
  return handles.every((h) => h!.what === first.what) ? first : { kind: 'opaque', driver: first.driver };
}
