// SQLAlchemy 1.4 + psycopg2 on PostgreSQL 17.10, run on the fixtures of
// no-session-tenant-setting: the pool rolls back a returned connection, so
// what decides whether a session setting reaches the next checkout is
// whether it was committed. Committed (engine.begin(), Session.commit(),
// AUTOCOMMIT): the next job, setting nothing, reads tenant 1's 20,000 rows.
// Not committed (engine.connect() left without commit()), SET LOCAL, or a
// NullPool connection (closed at checkin): no tenant, 0 rows. An engine a
// function makes checks out the setting in its own loop, but not in the next
// call's engine (good-function-engine.py).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { setting: string | null; rows: number };
let db: TestDatabase;
let out: ProofOutput<{ bad: Record<string, Seen>; good: Record<string, Seen>; listener_search_path: string }>;
let functionEngine: ProofOutput<{ after_tenant: Record<string, number>; next_call: Record<string, number> }>;

before(async () => {
  db = await startTestDatabase();
  out = await runProof('session-leak', db.workerUrl, 'sqlalchemy');
  functionEngine = await runProof('function-engine', db.workerUrl, 'sqlalchemy');
});
after(async () => {
  await db?.stop();
});

test('a committed session setting survives the pool\'s rollback at checkin: the next job reads tenant 1', { timeout: 180_000 }, () => {
  assert.match(String(out.sqlalchemy), /^1\.4\./);
  assert.deepEqual(Object.keys(out.result.bad).sort(), ['run_job_autocommit', 'run_job_begin', 'run_job_session']);
  for (const [job, seen] of Object.entries(out.result.bad)) assert.deepEqual(seen, { setting: '1', rows: 20000 }, job);
});

test('an uncommitted, local or NullPool setting does not reach the next checkout', { timeout: 180_000 }, () => {
  assert.deepEqual(out.result.good.run_job_local, { setting: '', rows: 0 });
  assert.deepEqual(out.result.good.run_job_set_local, { setting: '', rows: 0 });
  assert.deepEqual(out.result.good.run_report_uncommitted, { setting: '', rows: 0 }, 'rolled back at checkin');
  assert.deepEqual(out.result.good.run_job_null_pool, { setting: null, rows: 0 }, 'a new connection: the setting was never set there');
  assert.equal(out.result.listener_search_path, 'public', 'the connect listener re-applies its constant on the reused connection');
});

test("an engine a function checks out in a loop hands the turn with no tenant the last tenant's connection; a new call's engine does not", { timeout: 180_000 }, () => {
  assert.deepEqual(functionEngine.result.after_tenant, { '1': 20000, None: 20000 }, 'bad-function-engine.py: the turn without a tenant counts tenant 1');
  assert.deepEqual(functionEngine.result.next_call, { None: 0, '1': 20000 }, 'the next call makes its own engine: no tenant, no rows');
});
