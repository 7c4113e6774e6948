import { pgqRule, ruleTester } from './rule-tester.ts';

const header = `import pg from 'pg';\nconst pool = new pg.Pool();\ndeclare function work(c: pg.PoolClient): Promise<void>;\n`;

const wrap = `${header}export async function withClient<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    return await fn(c);
  } finally {
    c.release();
  }
}
`;

ruleTester.run('no-release-in-open-transaction', pgqRule('no-release-in-open-transaction'), {
  valid: [
    // release(failed) where the catch sets failed to the job's error: the connection is destroyed on the error path.
    `${header}export async function run() {
  const client = await pool.connect();
  let failed: unknown;
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (e) {
    failed = e;
    throw e;
  } finally {
    client.release(failed as Error);
  }
}`,
    // ROLLBACK in the catch, release in finally.
    `${header}export async function run() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
}`,
    // release(err) destroys the connection.
    `${header}export async function run() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
    client.release();
  } catch (e) {
    client.release(e as Error);
    throw e;
  }
}`,
    // A list of statements with no BEGIN, sent in turn: nothing is left open.
    `${header}const steps = ['VACUUM jobs', 'ANALYZE jobs'];
export async function run() {
  const client = await pool.connect();
  try { for (const sql of steps) await client.query(sql); } finally { client.release(); }
}`,
    // The loop's name declared again inside the body: not unrolled (the body's \`sql\` is another value).
    `${header}const steps = ['BEGIN', 'select 1', 'COMMIT'];
export async function run(other: string) {
  const client = await pool.connect();
  try { for (const sql of steps) { const sql2 = sql; { const sql = other; await client.query(sql); } void sql2; } } finally { client.release(); }
}`,
    // No transaction at all.
    `${header}const client = await pool.connect();\ntry { await work(client); } finally { client.release(); }`,
    // A rollback before the early return.
    `${header}export async function run(skip: boolean) {
  const client = await pool.connect();
  await client.query('BEGIN');
  if (skip) { await client.query('ROLLBACK'); client.release(); return; }
  await client.query('COMMIT');
  client.release();
}`,
    // A wrapper whose callback's transaction helper rolls back in its catch: the client comes back outside any transaction.
    `${wrap}async function inTxn<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
  await c.query('BEGIN');
  try { const r = await fn(); await c.query('COMMIT'); return r; } catch (e) { await c.query('ROLLBACK'); throw e; }
}
export const job = () => withClient((c) => inTxn(c, () => work(c)));`,
    // A wrapper handed a callback the file cannot see: nothing is known of what it does on the client.
    `${wrap}export const run = (cb: (c: pg.PoolClient) => Promise<void>) => withClient(cb);`,
    // The callback's helper opens a transaction with no rollback, but the wrapper destroys the client on error.
    `${header}export async function withClient<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try { const r = await fn(c); c.release(); return r; } catch (e) { c.release(e as Error); throw e; }
}
async function inTxn<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> { await c.query('BEGIN'); const r = await fn(); await c.query('COMMIT'); return r; }
export const job = () => withClient((c) => inTxn(c, () => work(c)));`,
    // The callback catches the helper's error and rolls back itself.
    `${wrap}async function inTxn<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> { await c.query('BEGIN'); const r = await fn(); await c.query('COMMIT'); return r; }
export const job = () => withClient(async (c) => { try { return await inTxn(c, () => work(c)); } catch (e) { await c.query('ROLLBACK'); throw e; } });`,
    // The callback opens the transaction itself and rolls back in its catch.
    `${wrap}export const job = () => withClient(async (client) => {
  await client.query('BEGIN');
  try { await work(client); await client.query('COMMIT'); } catch (e) { await client.query('ROLLBACK'); throw e; }
});`,
  ],
  invalid: [
    {
      // The callback opens the transaction itself on its untyped parameter, and an error after BEGIN leaves it open.
      code: `${wrap}export const job = () => withClient(async (client) => {
  await client.query('BEGIN');
  await work(client);
  await client.query('COMMIT');
});`,
      errors: [{ messageId: 'callLeavesOpen', data: { call: 'line 7', where: 'line 13' }, line: 9, column: 5 }],
    },
    {
      // The shape: the release sits in a wrapper that hands the client to a callback, the BEGIN in a helper the callback calls, with no ROLLBACK on throw.
      code: `${wrap}async function inTxn<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> { await c.query('BEGIN'); const r = await fn(); await c.query('COMMIT'); return r; }
export const job = () => withClient((c) => inTxn(c, () => c.query('UPDATE invoices SET seen = now()')));`,
      errors: [{ messageId: 'callLeavesOpen', data: { call: 'line 7', where: 'line 12' }, line: 9, column: 5, endLine: 9, endColumn: 16 }],
    },
    {
      // A BEGIN helper on a client parameter whose catch logs and rethrows: the wrapper's release gets the open transaction.
      code: `${wrap}async function inTxn<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
  await c.query('BEGIN');
  try { const r = await fn(); await c.query('COMMIT'); return r; } catch (e) { console.error(e); throw e; }
}
export const job = () => withClient(async (client) => { const n = await inTxn(client, () => work(client)); return n; });`,
      errors: [{ messageId: 'callLeavesOpen', line: 9, column: 5 }],
    },
    {
      // Handed on: the callback a wrapper of the wrapper is given, and a helper called through another helper.
      code: `${wrap}async function inTxn(c: pg.PoolClient, fn: () => Promise<void>): Promise<void> { await c.query('BEGIN'); await fn(); await c.query('COMMIT'); }
async function asTenant(c: pg.PoolClient, t: string, fn: () => Promise<void>) { return inTxn(c, async () => { await c.query("select set_config('app.tenant', $1, true)", [t]); await fn(); }); }
const withTenantClient = (cb: (c: pg.PoolClient) => Promise<void>) => withClient(cb);
export const job = (t: string) => withTenantClient((c) => asTenant(c, t, () => work(c)));`,
      errors: [{ messageId: 'callLeavesOpen', line: 9, column: 5 }],
    },
    {
      // A list of statements sent in turn: BEGIN opens the transaction the failing next statement leaves open.
      code: `${header}const steps = ['BEGIN', 'CREATE INDEX jobs_by_day ON jobs (created_at)', 'COMMIT'];
export async function run() {
  const client = await pool.connect();
  try {
    for (const sql of steps) {
      await client.query(sql);
    }
  } finally {
    client.release();
  }
}`,
      errors: [{ messageId: 'errorPath', line: 12, column: 5 }],
    },
    {
      // release(failed) where only an 'error' handler sets failed: still undefined when the job fails on its own.
      code: `${header}export async function run() {
  const client = await pool.connect();
  let failed: Error | undefined;
  client.on('error', (e) => { failed = e; });
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } finally {
    client.release(failed);
  }
}`,
      errors: [{ messageId: 'errorPath', line: 13, column: 5, endLine: 13, endColumn: 27 }],
    },
    {
      // Regression: ROLLBACK TO SAVEPOINT does not end the transaction (it was read as ROLLBACK).
      code: `import pg from 'pg';
const pool = new pg.Pool();
export async function run() {
  const c = await pool.connect();
  await c.query('BEGIN');
  await c.query('SAVEPOINT s');
  await c.query('ROLLBACK TO SAVEPOINT s');
  c.release();
}`,
      errors: [{ messageId: 'noEnd', line: 8, column: 3, endLine: 8, endColumn: 14 }],
    },
    {
      // An error between BEGIN and COMMIT, with only finally { release() }.
      code: `${header}export async function run() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}`,
      errors: [{ messageId: 'errorPath', data: { line: 7 }, line: 11, column: 5, endLine: 11, endColumn: 21 }],
    },
    {
      // A catch that logs and swallows: the release after it is reached with the transaction open.
      code: `${header}export async function run() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (e) {
    console.error(e);
  }
  client.release();
}`,
      errors: [{ messageId: 'errorPath', line: 13, column: 3, endLine: 13, endColumn: 19 }],
    },
    {
      // An early return that skips COMMIT.
      code: `${header}export async function run(skip: boolean) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    if (skip) return;
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
}`,
      errors: [{ messageId: 'noEnd', line: 14, column: 5, endLine: 14, endColumn: 21 }],
    },
    {
      // postgres.js: a reserved connection released inside its BEGIN.
      code: `import postgres from 'postgres';\nconst sql = postgres();\nconst reserved = await sql.reserve();\nawait reserved\`begin\`;\nreserved.release();`,
      errors: [{ messageId: 'noEnd', line: 5, column: 1, endLine: 5, endColumn: 19 }],
    },
  ],
});
