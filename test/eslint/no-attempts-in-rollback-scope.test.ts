import { pgqRule, ruleTester } from './rule-tester.ts';

const claim = "select id, kind from jobs where status = 'queued' order by id limit 1 for update skip locked";

ruleTester.run('no-attempts-in-rollback-scope', pgqRule('no-attempts-in-rollback-scope'), {
  valid: [
    // The lease claim commits the attempt before the work.
    `import pg from 'pg';
const pool = new pg.Pool();
declare function work(id: number): Promise<void>;
const { rows } = await pool.query("update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '1 minute' where id = (select id from jobs where status = 'queued' and attempts < max_attempts order by id limit 1 for update skip locked) returning id");
await work(rows[0].id);
await pool.query("update jobs set status = 'done' where id = $1 and attempts = $2", [rows[0].id, rows[0].attempts]);`,
    // A claim transaction with no work in it (BEGIN, claim, mark running, COMMIT).
    `import pg from 'pg';
const pool = new pg.Pool();
const c = await pool.connect();
await c.query('BEGIN');
const { rows } = await c.query("${claim}");
await c.query("update jobs set status = 'running', attempts = attempts + 1 where id = $1", [rows[0].id]);
await c.query('COMMIT');
c.release();`,
    // One transaction, and the catch counts the failure after ROLLBACK, in autocommit.
    `import pg from 'pg';
const pool = new pg.Pool();
declare function work(id: number): Promise<void>;
const c = await pool.connect();
let id: number | undefined;
try {
  await c.query('BEGIN');
  const { rows } = await c.query("${claim}");
  id = rows[0].id;
  await work(rows[0].id);
  await c.query("update jobs set status = 'done' where id = $1", [id]);
  await c.query('COMMIT');
} catch (e) {
  await c.query('ROLLBACK');
  await c.query('update jobs set attempts = attempts + 1 where id = $1', [id]);
} finally {
  c.release();
}`,
      // A batch in one transaction whose catch counts each failure on the claim's client and goes on: it commits with the batch.
    `import pg from 'pg';
const pool = new pg.Pool();
declare function work(id: number): Promise<void>;
const c = await pool.connect();
try {
  await c.query('BEGIN');
  const { rows } = await c.query("select id from jobs where status = 'queued' and attempts < 5 order by id limit 10 for update skip locked");
  for (const r of rows) {
    try {
      await work(r.id);
      await c.query("update jobs set status = 'done' where id = $1", [r.id]);
    } catch (e) {
      await c.query('update jobs set attempts = attempts + 1 where id = $1', [r.id]);
    }
  }
} finally {
  await c.query('COMMIT');
  c.release();
}`,
],
  invalid: [
    {
      // A batch whose catch counts and goes on, the work handed the claim's client: no ROLLBACK on that path,
      // the work's SQL failing aborts the transaction and the count with it.
      code: `import pg from 'pg';
const pool = new pg.Pool();
declare function work(client: pg.PoolClient, id: number): Promise<void>;
const c = await pool.connect();
try {
  await c.query('BEGIN');
  const { rows } = await c.query("select id from jobs where status = 'queued' order by id limit 10 for update skip locked");
  for (const r of rows) {
    try {
      await work(c, r.id);
      await c.query("update jobs set status = 'done' where id = $1", [r.id]);
    } catch {
      await c.query('update jobs set attempts = attempts + 1 where id = $1', [r.id]);
    }
  }
} finally {
  await c.query('COMMIT');
  c.release();
}`,
      errors: [{ messageId: 'countedInAbortedTransaction' }],
    },
    {
      // The same batch, its catch rethrowing after the count: the outer catch rolls the count back.
      code: `import pg from 'pg';
const pool = new pg.Pool();
declare function work(id: number): Promise<void>;
const c = await pool.connect();
try {
  await c.query('BEGIN');
  const { rows } = await c.query("select id from jobs where status = 'queued' and attempts < 5 order by id limit 10 for update skip locked");
  for (const r of rows) {
    try {
      await work(r.id);
      await c.query("update jobs set status = 'done' where id = $1", [r.id]);
    } catch (e) {
      await c.query('update jobs set attempts = attempts + 1 where id = $1', [r.id]);
      throw e;
    }
  }
  await c.query('COMMIT');
} catch (e) {
  await c.query('ROLLBACK');
  throw e;
} finally {
  c.release();
}`,
      errors: [{ messageId: 'countedBeforeRollback' }],
    },
    {
      code: `import pg from 'pg';
const pool = new pg.Pool();
declare function work(id: number): Promise<void>;
const c = await pool.connect();
try {
  await c.query('BEGIN');
  const { rows } = await c.query("${claim}");
  await c.query('update jobs set attempts = attempts + 1 where id = $1', [rows[0].id]);
  await work(rows[0].id);
  await c.query("update jobs set status = 'done' where id = $1", [rows[0].id]);
  await c.query('COMMIT');
} catch (e) {
  await c.query('ROLLBACK');
  throw e;
} finally {
  c.release();
}`,
      errors: [{ messageId: 'rolledBack', line: 8, column: 34, endLine: 8, endColumn: 42 }],
    },
    {
      // Knex: the claim, the work and the finish in one knex.transaction; nothing counts the attempt.
      code: `import knex from 'knex';
const db = knex({});
declare function work(id: number): Promise<void>;
await db.transaction(async (trx) => {
  const { rows } = await trx.raw("${claim}");
  await work(rows[0].id);
  await trx.raw("update jobs set status = 'done' where id = ?", [rows[0].id]);
});`,
      errors: [{ messageId: 'notCounted', line: 5, column: 35, endLine: 5, endColumn: 127 }],
    },
    {
      // postgres.js: claim by DELETE ... RETURNING in sql.begin, then the work.
      code: `import postgres from 'postgres';
const sql = postgres();
declare function work(id: number): Promise<void>;
await sql.begin(async (tx) => {
  const [job] = await tx\`delete from jobs where id = (select id from jobs order by id limit 1 for update skip locked) returning id\`;
  await work(job.id);
});`,
      errors: [{ messageId: 'notCounted', line: 5, column: 26, endLine: 5, endColumn: 131 }],
    },
  ],
});
