// F3 with psycopg 3: in autocommit (the pool's kwargs={"autocommit": True}),
// set_config('app.tenant', '1', true) ends with its own statement, so the
// job's next query sees no tenant: 0 rows under RLS. Inside
// `with conn.transaction():` it sees tenant 1's 20,000. Rule:
// no-local-setting-outside-transaction. Runs the run_job of
// fixtures/python/no-local-setting-outside-transaction/bad.py and good.py.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './python/run-python.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
});
after(async () => {
  await db?.stop();
});

test('psycopg autocommit: a local tenant setting is gone by the next statement; in conn.transaction() it holds', async () => {
  const { result } = await runProof<{ autocommit: { rows: number }; transaction: { rows: number } }>('local-autocommit', db.workerUrl);
  assert.equal(result.autocommit.rows, 0);
  assert.equal(result.transaction.rows, 20000);
});
