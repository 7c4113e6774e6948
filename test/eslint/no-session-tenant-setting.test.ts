import { pgqRule, ruleTester } from './rule-tester.ts';

ruleTester.run('no-session-tenant-setting', pgqRule('no-session-tenant-setting'), {
  valid: [
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
  ],
  invalid: [
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
      // Through the pool, at any level: it lands on a random connection.
      code: `import pg from 'pg';
const pool = new pg.Pool();
await pool.query("select set_config('app.tenant', $1, true)", [t]);`,
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
