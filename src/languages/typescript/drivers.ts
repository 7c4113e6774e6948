// What the names of a file stand for: driver modules and their exports
// (imports and require()), and the values that driver calls make — pools,
// connections, transaction handles, SQL tags.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver } from '../../model/index.ts';
import type { TableValue } from './builders.ts';
import type { Tx } from './flow.ts';
import { patternNames, span, stringValue, unwrap, type FunctionNode, type Node } from './syntax.ts';

/** A flow-tracked connection: its transaction state is followed through the function that holds it. */
export interface Conn {
  id: number;
  driver: Driver;
  use: 'pooled-client' | 'dedicated' | 'unknown';
  configId?: string;
  /** Where the connection came from, for releases: pg `pool.connect()`, postgres.js `sql.reserve()`. */
  origin: 'checkout' | 'reserve' | 'new-client' | 'query-runner' | 'parameter' | 'task' | 'adapter-tx';
}

export interface TxInfo {
  id: string;
  form: string;
  /** Where it opened: the BEGIN site or the call that takes the callback. */
  beginSpan: { start: number; end: number };
}

/** Who can tell what a function of a file returns (the file that declares it). */
export interface FunctionOwner {
  returnsOf(fn: FunctionNode, env: unknown): Value | undefined;
}

export type Value =
  /** The module object of a driver (`import pg from 'pg'`, `import * as pg`, `require('pg')`). */
  | { kind: 'module'; driver: Driver }
  /**
   * A class or factory whose call or `new` makes a pool or a client; 'http' is
   * Neon's neon() (one connection and transaction per call), 'supabase' a
   * Supabase client, 'prisma-adapter' a Prisma driver adapter over a pool.
   */
  | { kind: 'maker'; driver: Driver; makes: 'pool' | 'client' | 'pgp' | 'adapter' | 'http' | 'supabase' | 'prisma-adapter' | 'table' | 'policy' }
  /** A function of the project: a call of it is what it returns. */
  | { kind: 'function'; node: FunctionNode; owner: FunctionOwner; env: unknown }
  /** `import * as db from './db'`, a CommonJS module.exports object: its members. */
  | { kind: 'namespace'; member(name: string): Value | undefined }
  /** A Prisma driver adapter (`new PrismaPg(pool)`): runs on the pool it wraps. */
  | { kind: 'prisma-adapter'; configId?: string }
  /** A Drizzle table (`pgTable('jobs', {...})`): its name and columns, for its builders' SQL. */
  | { kind: 'table'; table: TableValue }
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

/** Drivers with node-postgres' API: Pool, Client, pool.connect(), client.query(text, values). */
export function pgApi(driver: Driver | undefined): boolean {
  return driver === 'pg' || driver === 'neon' || driver === 'vercel-postgres';
}

/** Drivers with postgres.js' API: sql`...`, sql.begin(fn), sql.unsafe(text, args), sql.reserve(). */
export function postgresApi(driver: Driver | undefined): boolean {
  return driver === 'postgres.js' || driver === 'bun';
}

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
  if (specifier === '@prisma/client' || specifier.startsWith('@prisma/client/') || specifier === '.prisma/client' || specifier.startsWith('@prisma/adapter-')) return 'prisma';
  // Prisma 7 generates its client into the project (`../generated/prisma`, `./generated/prisma/client`).
  if (/(^|\/)generated\/prisma(\/client)?(\.[cm]?[jt]s)?$/.test(specifier)) return 'prisma';
  if (specifier === 'sequelize' || specifier === 'sequelize-typescript' || specifier === '@sequelize/core') return 'sequelize';
  if (specifier === 'bun') return 'bun';
  if (specifier === '@neondatabase/serverless') return 'neon';
  if (specifier === '@vercel/postgres') return 'vercel-postgres';
  if (specifier === '@supabase/supabase-js' || specifier === '@supabase/ssr') return 'supabase';
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
      if (imported === 'pgTable') return { kind: 'maker', driver, makes: 'table' };
      if (imported === 'pgPolicy') return { kind: 'maker', driver, makes: 'policy' };
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
      if (imported === 'PrismaPg' || imported === 'PrismaNeon' || imported === 'PrismaPostgresAdapter') return { kind: 'maker', driver, makes: 'prisma-adapter' };
      return undefined;
    case 'sequelize':
      return imported === 'Sequelize' || imported === 'default' ? { kind: 'maker', driver, makes: 'pool' } : undefined;
    case 'bun':
      // `sql` is Bun's default instance (from the environment); `new SQL(url)` makes another.
      if (imported === 'SQL') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'sql') return { kind: 'pool', driver };
      if (imported === 'default' || imported === '*') return { kind: 'module', driver };
      return undefined;
    case 'neon':
      if (imported === 'neon') return { kind: 'maker', driver, makes: 'http' };
      if (imported === 'Pool') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'Client') return { kind: 'maker', driver, makes: 'client' };
      return undefined;
    case 'vercel-postgres':
      // `sql` and `db` are pools made from the environment.
      if (imported === 'sql' || imported === 'db') return { kind: 'pool', driver };
      if (imported === 'createPool' || imported === 'VercelPool') return { kind: 'maker', driver, makes: 'pool' };
      if (imported === 'createClient' || imported === 'VercelClient') return { kind: 'maker', driver, makes: 'client' };
      return undefined;
    case 'supabase':
      return imported === 'createClient' || imported === 'createServerClient' || imported === 'createBrowserClient' ? { kind: 'maker', driver, makes: 'supabase' } : undefined;
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
  /** Names imported from other modules (maybe the project's own): resolved when the walk needs them. */
  project: Map<string, ProjectImport>;
}

export interface ProjectImport {
  specifier: string;
  /** The exported name; 'default', '*' (the namespace) or 'module.exports' (a CommonJS require of the whole). */
  imported: string;
  /** The import's specifier in this file: where configs that come through it are placed. */
  at: { start: number; end: number };
  typeOnly: boolean;
}

/** Imports, `import x = require()` and top-level `const x = require('pg')`. */
export function readImports(program: TSESTree.Program): Imports {
  const imports: Imports = { names: new Map(), drivers: [], types: new Map(), project: new Map() };
  const addDriver = (d: Driver) => {
    if (!imports.drivers.includes(d)) imports.drivers.push(d);
  };
  const visitRequire = (declarator: TSESTree.VariableDeclarator) => {
    const init = unwrap(declarator.init);
    if (init?.type !== 'CallExpression' || init.callee.type !== 'Identifier' || init.callee.name !== 'require') return;
    const specifier = stringValue(init.arguments[0] as Node);
    const driver = specifier ? driverOfModule(specifier) : undefined;
    if (specifier && !driver) {
      const at = span(init.arguments[0] as Node);
      if (declarator.id.type === 'Identifier') imports.project.set(declarator.id.name, { specifier, imported: 'module.exports', at, typeOnly: false });
      else if (declarator.id.type === 'ObjectPattern') {
        for (const p of declarator.id.properties) {
          if (p.type !== 'Property' || p.key.type !== 'Identifier') continue;
          for (const local of patternNames(p.value as Node)) imports.project.set(local.name, { specifier, imported: p.key.name, at, typeOnly: false });
        }
      }
      return;
    }
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
      if (!driver) {
        for (const s of statement.specifiers) {
          const imported = s.type === 'ImportDefaultSpecifier' ? 'default' : s.type === 'ImportNamespaceSpecifier' ? '*' : s.imported.type === 'Identifier' ? s.imported.name : String(s.imported.value);
          const typeOnly = statement.importKind === 'type' || (s.type === 'ImportSpecifier' && s.importKind === 'type');
          imports.project.set(s.local.name, { specifier, imported, at: span(statement.source), typeOnly });
        }
        continue;
      }
      addDriver(driver);
      for (const s of statement.specifiers) {
        const imported = s.type === 'ImportDefaultSpecifier' ? 'default' : s.type === 'ImportNamespaceSpecifier' ? '*' : s.imported.type === 'Identifier' ? s.imported.name : String(s.imported.value);
        const typeOnly = statement.importKind === 'type' || (s.type === 'ImportSpecifier' && s.importKind === 'type');
        if (s.type === 'ImportSpecifier') imports.types.set(s.local.name, { driver, name: imported });
        // `import type pg from 'pg'` names pg.PoolClient as well as `import pg from 'pg'` does.
        if (imported === 'default' || imported === '*') imports.types.set(s.local.name, { driver, name: '*' });
        if (typeOnly) continue;
        const value = exportValue(driver, imported, specifier);
        if (value) imports.names.set(s.local.name, value);
      }
    } else if (statement.type === 'TSImportEqualsDeclaration' && statement.moduleReference.type === 'TSExternalModuleReference') {
      const specifier = String((statement.moduleReference.expression as TSESTree.StringLiteral).value);
      const driver = driverOfModule(specifier);
      if (!driver) {
        imports.project.set(statement.id.name, { specifier, imported: 'module.exports', at: span(statement.moduleReference.expression), typeOnly: false });
        continue;
      }
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
export type TypeMeaning = { driver: Driver; what: 'pool' | 'client' | 'checked-out' | 'tx' | 'query-runner' };

export function valueOfType(name: string, qualifier: string | undefined, imports: Imports): TypeMeaning | undefined {
  const from = qualifier ? imports.types.get(qualifier) : imports.types.get(name);
  const driver = from?.driver;
  if (!driver) return undefined;
  const exported = qualifier ? name : from.name;
  return driverType(driver, exported, qualifier !== undefined);
}

/** What a type a driver module exports stands for. */
export function driverType(driver: Driver, exported: string, qualified: boolean): TypeMeaning | undefined {
  const qualifier = qualified ? '*' : undefined;
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
    case 'drizzle':
      // drizzle-orm/node-postgres NodePgDatabase, drizzle-orm/postgres-js PostgresJsDatabase, pg-core PgDatabase / PgTransaction.
      if (/^(NodePgDatabase|PostgresJsDatabase|PgDatabase|NeonHttpDatabase|NeonDatabase|VercelPgDatabase|BunSQLDatabase|PgliteDatabase)$/.test(exported)) return { driver, what: 'pool' };
      if (/^(PgTransaction|NodePgTransaction|PostgresJsTransaction)$/.test(exported)) return { driver, what: 'tx' };
      return undefined;
    case 'sequelize':
      if (exported === 'Sequelize') return { driver, what: 'pool' };
      return undefined;
    case 'bun':
      if (exported === 'SQL') return { driver, what: 'pool' };
      if (exported === 'TransactionSQL') return { driver, what: 'tx' };
      if (exported === 'ReservedSQL') return { driver, what: 'checked-out' };
      return undefined;
    case 'neon':
      if (exported === 'Pool' || exported === 'NeonQueryFunction') return { driver, what: 'pool' };
      if (exported === 'PoolClient') return { driver, what: 'checked-out' };
      if (exported === 'Client') return { driver, what: 'client' };
      return undefined;
    case 'vercel-postgres':
      if (exported === 'VercelPool') return { driver, what: 'pool' };
      if (exported === 'VercelPoolClient') return { driver, what: 'checked-out' };
      if (exported === 'VercelClient') return { driver, what: 'client' };
      return undefined;
    case 'supabase':
      return exported === 'SupabaseClient' ? { driver, what: 'pool' } : undefined;
    default:
      return undefined;
  }
}
