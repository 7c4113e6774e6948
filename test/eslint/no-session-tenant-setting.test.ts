import { pgqRule, ruleTester } from './rule-tester.ts';

ruleTester.run('no-session-tenant-setting', pgqRule('no-session-tenant-setting'), {
  valid: [
    // Local writes through a pool leak nothing: each ends with its own statement's transaction.
    // That the next query runs without them is no-local-setting-outside-transaction's finding, not a leak.
    `import pg from 'pg';
const shared = new pg.Pool();
export async function scopeTo(region: string) {
  await shared.query("select set_config('app.region_id', $1, true)", [region]);
}`,
    `import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { sql } from 'drizzle-orm';
const db = drizzle(postgres(''));
export async function scopeTo(region: string) {
  await db.execute(sql\`SET LOCAL app.region_id = \${region}\`);
}`,
    `import { PrismaClient } from '@prisma/client';
const prisma = new PrismaClient();
export async function scopeTo(region: string) {
  await prisma.$executeRaw\`select set_config('app.region_id', \${region}, true)\`;
}`,
    // A constant applied in the pool's connect hook: every connection gets the same value before any job.
    `import pg from 'pg';
const pool = new pg.Pool();
pool.on('connect', (client) => { client.query('SET search_path TO app'); });`,
    // A Knex pool per tenant whose afterCreate hook points its connections at that tenant's schema.
    `import knex from 'knex';
const pools = new Map();
export function tenantDb(tenantId: string) {
  let db = pools.get(tenantId);
  if (!db) {
    db = knex({ client: 'pg', pool: { afterCreate(conn, done) { conn.query(\`SET search_path TO tenant_\${tenantId}\`, done); } } });
    pools.set(tenantId, db);
  }
  return db;
}`,
    // A one-connection script client, ended where it is made.
    `import postgres from 'postgres';
export async function migrate() {
  const sql = postgres('', { max: 1 });
  await sql\`SET search_path TO tenant_1\`;
  await sql.end();
}`,
    // The local form inside BEGIN..COMMIT with a rollback on error.
    `import pg from 'pg';
const pool = new pg.Pool();
export async function run(t: string) {
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
    // postgres.js sql.begin with the local form.
    `import postgres from 'postgres';
const sql = postgres();
await sql.begin(async (sql) => { await sql\`select set_config('app.tenant', \${t}, true)\`; });`,
    // A dedicated client the job opens and closes.
    `import { Client } from 'pg';
const client = new Client();
await client.connect();
await client.query("SET app.tenant = '1'");
await client.end();`,
    // An extension's setting is configuration, not tenant context.
    `import pg from 'pg';
const pool = new pg.Pool();
const c = await pool.connect();
await c.query("SET pg_stat_statements.track = 'all'");`,
    // Not SQL: a string that does not parse is unknown, not a finding.
    `router.query('SET app.tenant');`,
    // A helper that does more than hand its text on (it runs it in a transaction of its own client) is not read as the pool's call.
    `import pg from 'pg';
const pool = new pg.Pool();
async function inTransaction(text: string, values: unknown[]) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await client.query(text, values);
    await client.query('COMMIT');
    return result;
  } finally {
    client.release();
  }
}
export async function job(t: string) {
  await inTransaction("select set_config('app.tenant', $1, false)", [t]);
}`,
  ],
  invalid: [
    {
      // The parameter's type says it is a Knex pool, whatever it is called.
      code: `import type { Knex } from 'knex';
export async function enter(db: Knex, t: string) {
  await db.raw("select set_config('app.tenant', ?, false)", [t]);
}`,
      errors: [{ messageId: 'onPool', line: 3, column: 24, endLine: 3, endColumn: 34 }],
    },
    {
      // A module-level pool of one connection serves every job: max: 1 is not a script client.
      code: `import postgres from 'postgres';
export const sql = postgres('', { max: 1 });
export async function job(t: string) {
  await sql\`select set_config('app.tenant', \${t}, false)\`;
}`,
      errors: [{ messageId: 'onPool', line: 4, column: 20, endLine: 4, endColumn: 30 }],
    },
    {
      code: `import pg from 'pg';
const pool = new pg.Pool();
const client = await pool.connect();
await client.query("select set_config('app.tenant', $1, false)", [t]);
client.release();`,
      errors: [{ messageId: 'session', line: 4, column: 28, endLine: 4, endColumn: 38, suggestions: [] }],
    },
    {
      // In a transaction the suggestion turns it into the local form.
      code: `import pg from 'pg';
const pool = new pg.Pool();
const client = await pool.connect();
await client.query('BEGIN');
await client.query("select set_config('app.tenant', $1, false)", [t]);
await client.query('COMMIT');`,
      errors: [
        {
          messageId: 'session',
          line: 5,
          column: 28,
          endLine: 5,
          endColumn: 38,
          // ESLint accepts `desc` for a suggestion; typescript-eslint's types know only messageId.
          suggestions: [
            {
              desc: "Make it local to the job's transaction: set_config(..., true).",
              output: `import pg from 'pg';
const pool = new pg.Pool();
const client = await pool.connect();
await client.query('BEGIN');
await client.query("select set_config('app.tenant', $1, true)", [t]);
await client.query('COMMIT');`,
            } as never,
          ],
        },
      ],
    },
    {
      code: `import postgres from 'postgres';
const sql = postgres();
await sql.begin(async (tx) => {
  await tx.unsafe("SET SESSION app.tenant = '7'");
});`,
      errors: [
        {
          messageId: 'session',
          line: 4,
          column: 20,
          endLine: 4,
          endColumn: 48,
          suggestions: [
            {
              desc: "Make it local to the job's transaction: SET LOCAL.",
              output: `import postgres from 'postgres';
const sql = postgres();
await sql.begin(async (tx) => {
  await tx.unsafe("SET LOCAL app.tenant = '7'");
});`,
            } as never,
          ],
        },
      ],
    },
    {
      // Through the file's query helper, which hands its text and values on to the pool: the pool's call, at the helper's call.
      code: `import pg from 'pg';
const pool = new pg.Pool();
const query = (text: string, params?: unknown[]) => pool.query(text, params);
export async function job(t: string) {
  await query("select set_config('app.tenant', $1, false)", [t]);
}`,
      errors: [{ messageId: 'onPool', line: 5, column: 23, endLine: 5, endColumn: 33 }],
    },
    {
      // A session write through the pool: it lands on a random connection and stays for its next job.
      code: `import pg from 'pg';
const pool = new pg.Pool();
await pool.query("select set_config('app.tenant', $1, false)", [t]);`,
      errors: [{ messageId: 'onPool', line: 3, column: 26, endLine: 3, endColumn: 36 }],
    },
    {
      // Regression: a template literal's interpolation is a hole, positions stay in the host file.
      code: 'import pg from "pg";\nconst pool = new pg.Pool();\nconst c = await pool.connect();\nawait c.query(`SET app.tenant = \'${id}\'`);',
      errors: [{ messageId: 'session', line: 4, column: 16, endLine: 4, endColumn: 40, suggestions: [] }],
    },
    {
      // Regression: escapes in a string literal (\\n, \\') are mapped to the raw source.
      code: 'import pg from "pg";\nconst pool = new pg.Pool();\nconst c = await pool.connect();\nawait c.query(\'select 1;\\nselect set_config(\\\'app.tenant\\\', $1, false)\', [t]);',
      errors: [{ messageId: 'session', line: 4, column: 34, endLine: 4, endColumn: 44, suggestions: [] }],
    },
  ],
});
