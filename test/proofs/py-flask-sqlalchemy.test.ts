// Flask-SQLAlchemy 3.0.3 (Flask 2.2, SQLAlchemy 1.4, psycopg2) on PostgreSQL
// 17.10, run on the Flask fixtures of no-session-tenant-setting and
// no-local-setting-outside-transaction (Debian's python3-flask-sqlalchemy,
// fetched as the other proofs' packages are). db.session is a
// scoped_session over a QueuePool engine that rolls back at checkin; with
// pool_size=1 every job gets the same backend. A committed session setting
// (set_config(..., false), SET, on db.session or db.engine.begin()) is what
// the next job and the next app context read: tenant 1's 20,000 rows. SET
// LOCAL / set_config(..., true) in the Session's own transaction, a SET
// rolled back by db.session.remove(), or a NullPool engine leave nothing:
// 0 rows. An AUTOCOMMIT connection as the Session's first use, or an
// AUTOCOMMIT engine, ends the local setting with its own statement: the job
// reads 0 rows; once the Session has a connection,
// connection(execution_options=...) is ignored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Leak = {
  session: string;
  pool: string;
  reset_on_return: string;
  one_connection: boolean;
  bad: Record<string, number[]>;
  good: Record<string, number[]>;
};
type Local = Record<'autocommit_connection' | 'late_options_ignored' | 'autocommit_engine' | 'session' | 'serializable', number>;

let db: TestDatabase;
let leak: ProofOutput<Leak>;
let local: ProofOutput<Local>;

before(async () => {
  db = await startTestDatabase();
  leak = await runProof('session-leak', db.workerUrl, 'flask');
  local = await runProof('local-autocommit', db.workerUrl, 'flask');
});
after(async () => {
  await db?.stop();
});

test('db.session is a scoped_session over a QueuePool that rolls back at checkin, one backend for every job here', { timeout: 180_000 }, () => {
  assert.match(String(leak.flask_sqlalchemy), /^3\./);
  assert.match(String(leak.sqlalchemy), /^1\.4\./);
  assert.equal(leak.result.session, 'sqlalchemy.orm.scoping.scoped_session');
  assert.equal(leak.result.pool, 'QueuePool');
  assert.match(leak.result.reset_on_return, /rollback/);
  assert.equal(leak.result.one_connection, true);
});

test('a committed session setting reaches the next job and the next app context: 20,000 rows of tenant 1', { timeout: 180_000 }, () => {
  assert.deepEqual(leak.result.bad.bill, [20000, 20000], 'set_config(..., false) and commit() on db.session');
  assert.deepEqual(leak.result.bad.archive, [20000, 20000], 'SET through db.text, committed by the loop');
  assert.deepEqual(leak.result.bad.export, [20000, 20000], 'db.engine.begin()');
  assert.deepEqual(leak.result.bad.next_context, [20000], 'a new app context checks out the same connection');
});

test('a local setting in the Session\'s transaction, or a NullPool engine, leaves the next job no tenant', { timeout: 180_000 }, () => {
  assert.deepEqual(leak.result.good.bill, [20000, 0]);
  assert.deepEqual(leak.result.good.archive, [20000, 0]);
  assert.deepEqual(leak.result.good.removed, [20000, 0], 'a SET never committed is rolled back by db.session.remove()');
  assert.deepEqual(leak.result.good.next_context, [0]);
  assert.deepEqual(leak.result.good.null_pool, [20000, 0]);
});

test('an AUTOCOMMIT connection as the Session\'s first use, or an AUTOCOMMIT engine, ends the local setting at once: 0 rows', { timeout: 180_000 }, () => {
  assert.equal(local.result.autocommit_connection, 0);
  assert.equal(local.result.autocommit_engine, 0);
  assert.equal(local.result.session, 20000, 'the Session autobegins: the local setting holds for the next query');
  assert.equal(local.result.serializable, 20000);
  assert.equal(local.result.late_options_ignored, 20000, 'options asked for after the first statement are ignored');
});
