import { pgqRule, ruleTester } from './rule-tester.ts';

ruleTester.run('no-discard-all-with-prepared-statements', pgqRule('no-discard-all-with-prepared-statements'), {
  valid: [
    // node-postgres without named queries prepares nothing.
    `import pg from 'pg';\nconst pool = new pg.Pool();\nconst c = await pool.connect();\nawait c.query('select 1');\nawait c.query('DISCARD ALL');\nc.release();`,
    // postgres.js outside any transaction: its retry recovers (F8).
    `import postgres from 'postgres';\nconst sql = postgres();\nawait sql\`select 1\`;\nawait sql\`DISCARD ALL\`;`,
    // postgres.js with prepare: false caches nothing.
    `import postgres from 'postgres';\nconst sql = postgres({ prepare: false });\nawait sql.begin(async (tx) => { await tx\`select 1\`; });\nawait sql\`DISCARD ALL\`;`,
  ],
  invalid: [
    {
      code: `import pg from 'pg';\nconst pool = new pg.Pool();\nconst c = await pool.connect();\nawait c.query({ name: 'cnt', text: 'select count(*) from invoices' });\nawait c.query('DISCARD ALL');\nc.release();`,
      errors: [{ messageId: 'preparedStatements', line: 5, column: 16, endLine: 5, endColumn: 27 }],
    },
    {
      // A named query anywhere in the file, on a pool made elsewhere.
      code: `import { pool } from './db';\nimport type { PoolClient } from 'pg';\nexport const count = (c: PoolClient) => c.query({ name: 'cnt', text: 'select 1' });\nexport async function reset(c: PoolClient) { await c.query('DEALLOCATE ALL'); }`,
      errors: [{ messageId: 'preparedStatements', line: 4, column: 61, endLine: 4, endColumn: 75 }],
    },
    {
      // postgres.js, and the same pool runs sql.begin: the retry cannot succeed there.
      code: `import postgres from 'postgres';\nconst sql = postgres();\nawait sql.begin(async (tx) => { await tx\`select 1\`; });\nawait sql\`DISCARD ALL\`;`,
      errors: [{ messageId: 'preparedStatements', line: 4, column: 11, endLine: 4, endColumn: 22 }],
    },
    {
      // Inside a transaction it fails outright.
      code: `import postgres from 'postgres';\nconst sql = postgres({ prepare: false });\nawait sql.begin(async (tx) => { await tx\`DISCARD ALL\`; });`,
      errors: [{ messageId: 'inTransaction', line: 3, column: 42, endLine: 3, endColumn: 53 }],
    },
  ],
});
