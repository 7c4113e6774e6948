// What the names of a file stand for: driver modules and their exports
// (imports and require()), and the values that driver calls make — pools,
// connections, transaction handles, SQL tags.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver } from '../../model/index.ts';
import type { Tx } from './flow.ts';
import { patternNames, stringValue, unwrap, type Node } from './syntax.ts';

/** A flow-tracked connection: its transaction state is followed through the function that holds it. */
export interface Conn {
  id: number;
  driver: Driver;
  use: 'pooled-client' | 'dedicated' | 'unknown';
  configId?: string;
  /** Where the connection came from, for releases: pg `pool.connect()`, postgres.js `sql.reserve()`. */
  origin: 'checkout' | 'reserve' | 'new-client' | 'query-runner' | 'parameter' | 'task';
}

export interface TxInfo {
  id: string;
  form: string;
  /** Where it opened: the BEGIN site or the call that takes the callback. */
  beginSpan: { start: number; end: number };
}

export type Value =
  /** The module object of a driver (`import pg from 'pg'`, `import * as pg`, `require('pg')`). */
  | { kind: 'module'; driver: Driver }
  /** A class or factory whose call or `new` makes a pool or a client. */
  | { kind: 'maker'; driver: Driver; makes: 'pool' | 'client' | 'pgp' | 'adapter' }
  /** An SQL template tag (kysely/drizzle/slonik `sql`, `Prisma.sql`). */
  | { kind: 'tag'; driver: Driver }
  /** The Prisma namespace (`Prisma.sql`). */
  | { kind: 'prisma-namespace' }
  /** A pool: each call may run on any of its connections (postgres.js `sql` is one). */
  | { kind: 'pool'; driver: Driver; configId?: string }
  | { kind: 'conn'; conn: Conn }
  /** The handle a transaction callback is given. */
  | { kind: 'tx'; driver: Driver; tx: Tx; configId?: string }
  /** `db.transaction()` of Kysely before `.execute(fn)`; `dataSource.manager`. */
  | { kind: 'builder'; driver: Driver; of: 'kysely-transaction' | 'kysely-connection'; configId?: string }
  /** A connection object whose driver is known but whose use we cannot tell (an untyped parameter named like one). */
  | { kind: 'opaque'; driver: Driver };

/** Module specifiers of the drivers. */
export function driverOfModule(specifier: string): Driver | undefined {
  if (specifier === 'pg' || specifier === 'pg-pool' || specifier === 'pg/lib/client' || specifier === 'pg-native') return 'pg';
  if (specifier === 'postgres') return 'postgres.js';
  if (specifier === 'kysely') return 'kysely';
  if (specifier === 'knex') return 'knex';
  if (specifier === 'drizzle-orm' || specifier.startsWith('drizzle-orm/')) return 'drizzle';
  if (specifier === 'slonik') return 'slonik';
  if (specifier === 'pg-promise') return 'pg-promise';
  if (specifier === 'typeorm') return 'typeorm';
  if (specifier === '@prisma/client' || specifier.startsWith('@prisma/client/') || specifier === '.prisma/client') return 'prisma';
  return undefined;
}

/** What one imported name of a driver module is. */
export function exportValue(driver: Driver, imported: string | 'default' | '*', specifier: string): Value | undefined {
  switch (driver) {
    case 'pg':
      if (imported === 'default' || imported === '*') return specifier === 'pg-pool' ? { kind: 'maker', driver, makes: 'pool' } : { kind: 'module', driver };
      if (imported === 'Pool') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'Client') return { kind: 'maker', driver, makes: 'client' };
      return undefined;
    case 'postgres.js':
      return imported === 'default' || imported === '*' ? { kind: 'maker', driver, makes: 'pool' } : undefined;
    case 'kysely':
      if (imported === 'Kysely') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'sql') return { kind: 'tag', driver };
      if (imported === 'PostgresDialect') return { kind: 'maker', driver, makes: 'adapter' };
      return undefined;
    case 'knex':
      return imported === 'default' || imported === 'knex' || imported === 'Knex' || imported === '*' ? { kind: 'maker', driver, makes: 'pool' } : undefined;
    case 'drizzle':
      if (imported === 'sql') return { kind: 'tag', driver };
      if (imported === 'drizzle') return { kind: 'maker', driver, makes: 'pool' };
      return undefined;
    case 'slonik':
      if (imported === 'createPool') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'sql') return { kind: 'tag', driver };
      if (imported === 'createSqlTag') return { kind: 'maker', driver, makes: 'adapter' };
      return undefined;
    case 'pg-promise':
      return imported === 'default' || imported === '*' ? { kind: 'maker', driver, makes: 'pgp' } : undefined;
    case 'typeorm':
      return imported === 'DataSource' || imported === 'Connection' ? { kind: 'maker', driver, makes: 'pool' } : undefined;
    case 'prisma':
      if (imported === 'PrismaClient') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'Prisma') return { kind: 'prisma-namespace' };
      if (imported === 'sql') return { kind: 'tag', driver };
      return undefined;
    default:
      return undefined;
  }
}

export interface Imports {
  names: Map<string, Value>;
  /** Drivers the file imports (the first one is the file's driver for calls on names we cannot resolve). */
  drivers: Driver[];
  /** Type names imported from a driver: `PoolClient` from pg, `TransactionSql` from postgres. */
  types: Map<string, { driver: Driver; name: string }>;
}

/** Imports, `import x = require()` and top-level `const x = require('pg')`. */
export function readImports(program: TSESTree.Program): Imports {
  const imports: Imports = { names: new Map(), drivers: [], types: new Map() };
  const addDriver = (d: Driver) => {
    if (!imports.drivers.includes(d)) imports.drivers.push(d);
  };
  const visitRequire = (declarator: TSESTree.VariableDeclarator) => {
    const init = unwrap(declarator.init);
    if (init?.type !== 'CallExpression' || init.callee.type !== 'Identifier' || init.callee.name !== 'require') return;
    const specifier = stringValue(init.arguments[0] as Node);
    const driver = specifier ? driverOfModule(specifier) : undefined;
    if (!driver || !specifier) return;
    addDriver(driver);
    if (declarator.id.type === 'Identifier') {
      const value = exportValue(driver, 'default', specifier);
      if (value) imports.names.set(declarator.id.name, value);
    } else if (declarator.id.type === 'ObjectPattern') {
      for (const p of declarator.id.properties) {
        if (p.type !== 'Property' || p.key.type !== 'Identifier') continue;
        const value = exportValue(driver, p.key.name, specifier);
        for (const local of patternNames(p.value as Node)) if (value) imports.names.set(local.name, value);
      }
    }
  };
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') {
      const specifier = String(statement.source.value);
      const driver = driverOfModule(specifier);
      if (!driver) continue;
      addDriver(driver);
      for (const s of statement.specifiers) {
        const imported = s.type === 'ImportDefaultSpecifier' ? 'default' : s.type === 'ImportNamespaceSpecifier' ? '*' : s.imported.type === 'Identifier' ? s.imported.name : String(s.imported.value);
        const typeOnly = statement.importKind === 'type' || (s.type === 'ImportSpecifier' && s.importKind === 'type');
        if (s.type === 'ImportSpecifier') imports.types.set(s.local.name, { driver, name: imported });
        if (typeOnly) continue;
        const value = exportValue(driver, imported, specifier);
        if (value) imports.names.set(s.local.name, value);
        if (imported === 'default' || imported === '*') imports.types.set(s.local.name, { driver, name: '*' });
      }
    } else if (statement.type === 'TSImportEqualsDeclaration' && statement.moduleReference.type === 'TSExternalModuleReference') {
      const specifier = String((statement.moduleReference.expression as TSESTree.StringLiteral).value);
      const driver = driverOfModule(specifier);
      if (!driver) continue;
      addDriver(driver);
      const value = exportValue(driver, 'default', specifier);
      if (value) imports.names.set(statement.id.name, value);
      imports.types.set(statement.id.name, { driver, name: '*' });
    } else if (statement.type === 'VariableDeclaration') {
      for (const d of statement.declarations) visitRequire(d);
    }
  }
  return imports;
}

/**
 * What a type annotation says a name holds. `pg.PoolClient`, `PoolClient`
 * (imported from pg), postgres.js `Sql`/`TransactionSql`/`ReservedSql`, Knex
 * `Knex.Transaction`, Kysely `Transaction<DB>`, `Prisma.TransactionClient`.
 */
export function valueOfType(name: string, qualifier: string | undefined, imports: Imports): { driver: Driver; what: 'pool' | 'client' | 'checked-out' | 'tx' | 'query-runner' } | undefined {
  const from = qualifier ? imports.types.get(qualifier) : imports.types.get(name);
  const driver = from?.driver;
  if (!driver) return undefined;
  const exported = qualifier ? name : from.name;
  switch (driver) {
    case 'pg':
      if (exported === 'PoolClient') return { driver, what: 'checked-out' };
      if (exported === 'Pool') return { driver, what: 'pool' };
      if (exported === 'Client') return { driver, what: 'client' };
      return undefined;
    case 'postgres.js':
      if (exported === 'Sql') return { driver, what: 'pool' };
      if (exported === 'TransactionSql') return { driver, what: 'tx' };
      if (exported === 'ReservedSql') return { driver, what: 'checked-out' };
      return undefined;
    case 'knex':
      if (exported === 'Transaction') return { driver, what: 'tx' };
      if (exported === 'Knex') return qualifier ? undefined : { driver, what: 'pool' };
      return undefined;
    case 'kysely':
      if (exported === 'Transaction') return { driver, what: 'tx' };
      if (exported === 'Kysely') return { driver, what: 'pool' };
      return undefined;
    case 'prisma':
      if (exported === 'TransactionClient') return { driver, what: 'tx' };
      if (exported === 'PrismaClient') return { driver, what: 'pool' };
      return undefined;
    case 'typeorm':
      if (exported === 'DataSource') return { driver, what: 'pool' };
      if (exported === 'QueryRunner') return { driver, what: 'query-runner' };
      return undefined;
    case 'slonik':
      if (exported === 'DatabasePool') return { driver, what: 'pool' };
      if (exported === 'DatabaseTransactionConnection') return { driver, what: 'tx' };
      return undefined;
    case 'pg-promise':
      if (exported === 'ITask') return { driver, what: 'checked-out' };
      if (exported === 'IDatabase') return { driver, what: 'pool' };
      return undefined;
    default:
      return undefined;
  }
}
