// Proof for the SQL part of no-discard-all-with-prepared-statements
// (DESIGN.md F10): the bad fixture's DISCARD ALL fails inside the transaction
// and inside the procedure; the good fixture's reset runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture, statementOf } from '../helpers/fixture-sql.ts';

let db: TestDatabase;
let worker: pg.Client;
before(async () => {
  db = await startTestDatabase();
  worker = new pg.Client(db.workerUrl);
  await worker.connect();
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  await owner.query("insert into jobs (tenant_id) values (1)");
  await owner.query(statementOf(readFixture('sql/no-discard-all-with-prepared-statements/bad.sql'), (s) => s.kind === 'CreateFunctionStmt'));
  await owner.query('grant execute on procedure reset_session() to pgq_worker');
  await owner.end();
});
after(async () => {
  await worker?.end();
  await db?.stop();
});

/** Runs the fixture's top-level statements one by one, as a migration runner or worker would. */
async function runStatements(text: string): Promise<string[]> {
  const errors: string[] = [];
  const { analyzeSql } = await import('../../src/sql/index.ts');
  for (const statement of analyzeSql(text).statements.filter((s) => !s.routine && s.kind !== 'CreateFunctionStmt')) {
    try {
      await worker.query(text.slice(statement.span.start, statement.span.end), statement.rowWrites.length ? [1] : []);
    } catch (error) {
      errors.push((error as Error).message);
    }
  }
  return errors;
}

test('bad fixture: DISCARD ALL in the job transaction fails, and so does the procedure', async () => {
  const errors = await runStatements(readFixture('sql/no-discard-all-with-prepared-statements/bad.sql'));
  assert.deepEqual(errors, ['DISCARD ALL cannot run inside a transaction block']);
  await worker.query('rollback');
  await assert.rejects(worker.query('call reset_session()'), /DISCARD ALL cannot (run inside a transaction block|be executed from a function)/);
});

test('good fixture: RESET inside the transaction and DISCARD TEMP/PLANS run', async () => {
  await worker.query("select set_config('app.tenant', '3', false)");
  const errors = await runStatements(readFixture('sql/no-discard-all-with-prepared-statements/good.sql'));
  assert.deepEqual(errors, []);
  assert.equal((await worker.query("select current_setting('app.tenant', true) as t")).rows[0].t, '');
});
