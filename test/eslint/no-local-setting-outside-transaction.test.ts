import { pgqRule, ruleTester } from './rule-tester.ts';

const header = `import pg from 'pg';\nimport postgres from 'postgres';\nconst pool = new pg.Pool();\nconst sql = postgres();\n`;

ruleTester.run('no-local-setting-outside-transaction', pgqRule('no-local-setting-outside-transaction'), {
  valid: [
    // Hono middleware inside a transaction per request: the local setting holds for the request's queries.
    `import { Hono } from 'hono';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
const db = drizzle(new pg.Pool());
const app = new Hono();
app.use(async (c, next) => {
  await db.transaction(async (tx) => { await tx.execute(sql\`select set_config('app.tenant', \${c.req.header('x-tenant')}, true)\`); c.set('tx', tx); await next(); });
});`,
    // Neon over HTTP: sql.transaction([...]) runs the array in one transaction.
    `import { neon } from '@neondatabase/serverless';
const sql = neon('');
await sql.transaction([sql\`select set_config('app.tenant', \${t}, true)\`, sql\`select * from invoices\`]);`,
    // A Prisma extension with the batch transaction of Prisma's documentation.
    `import { PrismaClient } from '@prisma/client';
const prisma = new PrismaClient();
export const forTenant = (t: string) => prisma.$extends({ query: { $allModels: { async $allOperations({ args, query }) {
  const [, result] = await prisma.$transaction([prisma.$executeRaw\`select set_config('app.tenant', \${t}, true)\`, query(args)]);
  return result;
} } } });`,
    // A local clear outside a transaction: nothing carries a tenant, nothing is lost ('', NULL, DEFAULT).
    `${header}await pool.query("select set_config('app.tenant', '', true)");\nawait pool.query('SET LOCAL app.tenant TO DEFAULT');\nawait sql\`select set_config('app.tenant', null, true)\`;`,
    // Regression (bindings decide, not names): an untyped parameter called pool is not known to be a pool.
    `export async function enter(pool: any, t: string) { await pool.query("select set_config('app.tenant', $1, true)", [t]); }`,
    // set_config(..., true) inside BEGIN..COMMIT with a rollback on error.
    `${header}export async function run(t: string) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("select set_config('app.tenant', $1, true)", [t]);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
}`,
    // sql.begin(async sql => ...) with the local form (the callback's sql shadows the pool).
    `${header}await sql.begin(async (sql) => { await sql\`select set_config('app.tenant', \${t}, true)\`; });`,
    // Knex, Drizzle, pg-promise, TypeORM, Prisma and Kysely transaction callbacks.
    `import knex from 'knex';\nconst db = knex({});\nawait db.transaction(async (trx) => { await trx.raw("select set_config('app.tenant', ?, true)", [t]); });`,
    `import { sql } from 'drizzle-orm';\nimport { drizzle } from 'drizzle-orm/node-postgres';\nconst db = drizzle(pool);\nawait db.transaction(async (tx) => { await tx.execute(sql\`select set_config('app.tenant', \${t}, true)\`); });`,
    `import pgPromise from 'pg-promise';\nconst pgp = pgPromise();\nconst db = pgp('');\nawait db.tx(async (t) => { await t.none("select set_config('app.tenant', $1, true)", [id]); });`,
    `import { DataSource } from 'typeorm';\nconst ds = new DataSource({ type: 'postgres' });\nawait ds.transaction(async (m) => { await m.query("select set_config('app.tenant', $1, true)", [t]); });`,
    `import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nawait prisma.$transaction(async (tx) => { await tx.$executeRaw\`select set_config('app.tenant', \${t}, true)\`; });`,
    `import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nawait prisma.$transaction([prisma.$executeRaw\`select set_config('app.tenant', \${t}, true)\`, prisma.$executeRaw\`update invoices set amount_cents = 1\`]);`,
    `import { Kysely, sql } from 'kysely';\nconst db = new Kysely<any>({} as any);\nawait db.transaction().execute(async (trx) => { await sql\`select set_config('app.tenant', \${t}, true)\`.execute(trx); });`,
    `import { createPool, sql } from 'slonik';\nconst pool = await createPool('');\nawait pool.transaction(async (tx) => { await tx.query(sql.unsafe\`select set_config('app.tenant', \${t}, true)\`); });`,
    `import { DataSource } from 'typeorm';\nconst ds = new DataSource({ type: 'postgres' });\nconst qr = ds.createQueryRunner();\nawait qr.startTransaction();\nawait qr.query("select set_config('app.tenant', $1, true)", [t]);\nawait qr.commitTransaction();`,
    // A client passed in: the caller may have opened the transaction (unknown is not a finding).
    `import type { PoolClient } from 'pg';\nexport async function enter(client: PoolClient, t: string) { await client.query("select set_config('app.tenant', $1, true)", [t]); }`,
    // A query we cannot resolve is unknown.
    `${header}const c = await pool.connect();\nawait c.query(buildQuery(t));`,
    // The handle that opened the transaction, where it may itself be a transaction: a class given it by its caller, a parameter.
    `import { sql } from 'drizzle-orm';
export class Repo { constructor(private readonly db: any) {} async enter(t: string) { await this.db.transaction(async () => { await this.db.execute(sql\`select set_config('app.tenant', \${t}, true)\`); }); } }`,
    `import type { Knex } from 'knex';
export async function enter(db: any, t: string) { await db.transaction(async (trx: Knex.Transaction) => { await db.raw("select set_config('app.tenant', ?, true)", [t]); }); }`,
    // The callback's parameter shadows the client: the setting runs in the transaction.
    `import { PrismaClient } from '../generated/client';
const prisma = new PrismaClient();
await prisma.$transaction(async (prisma) => { await prisma.$executeRaw\`select set_config('app.tenant', \${t}, true)\`; });`,
    // A helper that opens its own transaction on the client it is handed, before the local setting.
    `${header}async function enter(client: pg.PoolClient, t: string) {\n  await client.query('BEGIN');\n  await client.query("select set_config('app.tenant', $1, true)", [t]);\n}\nexport async function run(t: string) {\n  const c = await pool.connect();\n  try { await enter(c, t); await c.query('COMMIT'); } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }\n}`,
    // The caller hands the client in after its BEGIN.
    `${header}async function enter(client: pg.PoolClient, t: string) { await client.query("select set_config('app.tenant', $1, true)", [t]); }\nexport async function run(t: string) {\n  const c = await pool.connect();\n  try { await c.query('BEGIN'); await enter(c, t); await c.query('COMMIT'); } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }\n}`,
    // Regression: a callback handed with the client to a helper that BEGINs first runs inside that transaction (it was read as autocommit).
    `${header}async function inTxn(client: pg.PoolClient, action: () => Promise<void>) { await client.query('BEGIN'); try { await action(); await client.query('COMMIT'); } catch (e) { await client.query('ROLLBACK'); throw e; } }\nexport async function run(t: string) {\n  const c = await pool.connect();\n  try { await inTxn(c, async () => { await c.query("select set_config('app.tenant', $1, true)", [t]); }); } finally { c.release(); }\n}`,
    // The helper hands the client to a function the scan does not follow first: it may have opened the transaction.
    `${header}import { begin } from './elsewhere';\nasync function enter(client: pg.PoolClient, t: string) { await begin(client); await client.query("select set_config('app.tenant', $1, true)", [t]); }\nexport async function run(t: string) {\n  const c = await pool.connect();\n  try { await enter(c, t); } finally { c.release(); }\n}`,
    // A parameter typed with a driver's database type its transaction handle also satisfies: the callers decide.
    `import { sql, type Kysely } from 'kysely';\nexport async function enter<DB>(db: Kysely<DB>, t: string) { await sql\`select set_config('app.tenant', \${t}, true)\`.execute(db); }`,
    `import type { Knex } from 'knex';\nexport async function enter(db: Knex, t: string) { await db.raw("select set_config('app.tenant', ?, true)", [t]); }`,
    `import type { Sql } from 'postgres';\nexport async function enter(sql: Sql, t: string) { await sql\`select set_config('app.tenant', \${t}, true)\`; }`,
    // Handed a transaction by the one caller here.
    `import { Kysely, sql } from 'kysely';\nconst db = new Kysely<any>({} as any);\nasync function enter<DB>(h: Kysely<DB>, t: string) { await sql\`SET LOCAL app.tenant = '1'\`.execute(h); }\nexport async function run(t: string) { await db.transaction().execute(async (trx) => { await enter(trx, t); }); }`,
  ],
  invalid: [
    {
      // A Kysely-typed parameter whose only caller hands it the database the file made: autocommit.
      code: `import { Kysely, sql } from 'kysely';\nconst db = new Kysely<any>({} as any);\nasync function enter<DB>(h: Kysely<DB>, t: string) { await sql\`select set_config('app.tenant', \${t}, true)\`.execute(h); }\nexport async function run(t: string) { await enter(db, t); }`,
      errors: [{ messageId: 'parameterOutsideTransaction' }],
    },
    {
      // No transaction is a node-postgres Pool: a parameter typed so runs each statement in autocommit.
      code: `import pg from 'pg';\nexport async function enter(pool: pg.Pool, t: string) { await pool.query("select set_config('app.tenant', $1, true)", [t]); }`,
      errors: [{ messageId: 'outsideTransaction' }],
    },
    {
      // Hono middleware on the app's shared Drizzle instance, outside any transaction.
      code: `import { Hono } from 'hono';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
const db = drizzle(new pg.Pool());
const app = new Hono();
app.use(async (c, next) => {
  await db.execute(sql\`select set_config('app.tenant', \${c.req.header('x-tenant')}, true)\`);
  await next();
});`,
      errors: [{ messageId: 'outsideTransaction', line: 8, column: 31, endLine: 8, endColumn: 41 }],
    },
    {
      // Neon over HTTP: each call is its own connection and transaction.
      code: `import { neon } from '@neondatabase/serverless';
const sql = neon('');
export async function f(t: string) {
  await sql\`select set_config('app.tenant', \${t}, true)\`;
  return sql\`select * from invoices\`;
}`,
      errors: [{ messageId: 'outsideTransaction', line: 4, column: 20, endLine: 4, endColumn: 30 }],
    },
    {
      code: `${header}const client = await pool.connect();\nawait client.query("select set_config('app.tenant', $1, true)", [t]);`,
      errors: [{ messageId: 'outsideTransaction', line: 6, column: 28, endLine: 6, endColumn: 38 }],
    },
    {
      // After COMMIT the client is back in autocommit.
      code: `${header}const client = await pool.connect();\nawait client.query('BEGIN');\nawait client.query('COMMIT');\nawait client.query('SET LOCAL app.tenant = 1');`,
      errors: [{ messageId: 'outsideTransaction', line: 8, column: 21, endLine: 8, endColumn: 45 }],
    },
    {
      // postgres.js on the pool, outside sql.begin (also a pool write: no-session-tenant-setting).
      code: `${header}await sql\`select set_config('app.tenant', \${t}, true)\`;`,
      errors: [{ messageId: 'outsideTransaction', line: 5, column: 18, endLine: 5, endColumn: 28 }],
    },
    {
      // A constant resolved in the same file is reported where it is used.
      code: `${header}const SET_TENANT = "select set_config('app.tenant', $1, true)";\nconst client = await pool.connect();\nawait client.query(SET_TENANT, [t]);`,
      errors: [{ messageId: 'outsideTransaction', line: 7, column: 20, endLine: 7, endColumn: 30 }],
    },
    {
      // A helper that sets the local form on the client it is handed and opens no transaction; its caller hands it a client it just checked out.
      code: `${header}async function enter(client: pg.PoolClient, t: string) { await client.query("select set_config('app.tenant', $1, true)", [t]); }\nexport async function run(t: string) {\n  const c = await pool.connect();\n  try { await enter(c, t); } finally { c.release(); }\n}`,
      errors: [{ messageId: 'parameterOutsideTransaction', line: 5, column: 85, endLine: 5, endColumn: 95 }],
    },
    {
      // Knex raw on the pool, with ? placeholders.
      code: `import knex from 'knex';\nconst db = knex({});\nawait db.raw("select set_config('app.tenant', ?, true)", [t]);`,
      errors: [{ messageId: 'outsideTransaction', line: 3, column: 22, endLine: 3, endColumn: 32 }],
    },
    {
      // A Knex instance a factory of an unread module made, sent the setting inside the transaction it opened.
      code: `import type { Knex } from 'knex';
import { open } from './db-factory';
const db = await open();
await db.transaction(async (trx: Knex.Transaction) => { await db.raw("select set_config('app.tenant', ?, true)", [t]); });`,
      errors: [{ messageId: 'outsideTransaction', line: 4, column: 78, endLine: 4, endColumn: 88 }],
    },
    {
      // A Drizzle database a NestJS container injects: made before any job, not a transaction.
      code: `import { Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import type { Db } from './db';
@Injectable()
export class Scope { constructor(private readonly db: Db) {} async enter(t: string) { await this.db.execute(sql\`select set_config('app.tenant', \${t}, true)\`); } }`,
      errors: [{ messageId: 'outsideTransaction', line: 5, column: 120, endLine: 5, endColumn: 130 }],
    },
    {
      // Prisma generated into the project: the import is the client by what it exports.
      code: `import { PrismaClient } from '../generated/client';
const prisma = new PrismaClient();
await prisma.$executeRaw\`select set_config('app.tenant', \${t}, true)\`;`,
      errors: [{ messageId: 'outsideTransaction', line: 3, column: 33, endLine: 3, endColumn: 43 }],
    },
    {
      // A Prisma extension's client, the setting beside the query in Promise.all: two connections, no transaction.
      code: `import { Prisma } from '@prisma/client';
export const scope = (t: string) => Prisma.defineExtension((client) => client.$extends({ query: { $allModels: { async $allOperations({ args, query }) {
  const [, result] = await Promise.all([client.$executeRaw\`select set_config('app.tenant', \${t}, true)\`, query(args)]);
  return result;
} } } }));`,
      errors: [{ messageId: 'outsideTransaction', line: 3, column: 67, endLine: 3, endColumn: 77 }],
    },
  ],
});
