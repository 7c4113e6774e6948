// Proof for no-attempts-in-rollback-scope's countedBeforeRollback, on
// PostgreSQL 17.10, with the fixtures' own code (node-postgres and psycopg 3):
// a catch that counts the failure on the claim's client before ROLLBACK never
// counts it. A job that throws in its own code: the UPDATE runs inside the
// open transaction and ROLLBACK takes it back. A job that fails on a SQL
// error: the UPDATE fails with 25P02 (current transaction is aborted) and the
// ROLLBACK after it never runs. The good fixtures (count after ROLLBACK) count.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { PYTHON, requirePsycopg } from './python/run-python.ts';

const fixtures = join(import.meta.dirname, '../../fixtures/queue/no-attempts-in-rollback-scope');

let db: TestDatabase;
let owner: pg.Client;
let bad: { workOnce(): Promise<boolean>; pool: pg.Pool };
let good: { workOnce(): Promise<boolean>; pool: pg.Pool };
let failure: 'throw' | 'sql' = 'throw';
const errors: string[] = [];

before(async () => {
  db = await startTestDatabase();
  owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  (globalThis as Record<string, unknown>).run = async (client: pg.PoolClient) => {
    if (failure === 'sql') await client.query('select 1 / 0');
    else throw new Error('poison payload');
  };
  process.env.DATABASE_URL = db.workerUrl;
  bad = await import(pathToFileURL(join(fixtures, 'bad-count-before-rollback.ts')).href);
  good = await import(pathToFileURL(join(fixtures, 'good-count-after-rollback.ts')).href);
});
after(async () => {
  await Promise.all([bad?.pool.end(), good?.pool.end()]);
  await owner?.end();
  await db?.stop();
});
beforeEach(async () => {
  errors.length = 0;
  await owner.query('truncate jobs restart identity cascade');
  await owner.query("insert into jobs (kind, tenant_id) values ('poison', 1)");
});

async function fiveTimes(workOnce: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 5; i++) await workOnce().then(() => errors.push('none'), (e: { code?: string; message: string }) => errors.push(e.code ?? e.message));
}
const job = async () => (await owner.query('select status, attempts from jobs')).rows[0];

test('node-postgres, the job throws: the count in the catch runs inside the transaction and ROLLBACK takes it back', { timeout: 30_000 }, async () => {
  failure = 'throw';
  await fiveTimes(bad.workOnce);
  assert.deepEqual(errors, Array(5).fill('poison payload'));
  assert.deepEqual(await job(), { status: 'queued', attempts: 0 });
});

test('node-postgres, the job fails on SQL: the count fails with 25P02 and ROLLBACK never runs', { timeout: 30_000 }, async () => {
  failure = 'sql';
  await fiveTimes(bad.workOnce);
  // The catch's UPDATE threw "current transaction is aborted" before its ROLLBACK.
  assert.deepEqual(errors, Array(5).fill('25P02'));
  assert.deepEqual(await job(), { status: 'queued', attempts: 0 });
});

test('node-postgres good fixture: ROLLBACK, then the count commits: the job stops at max_attempts (3)', { timeout: 30_000 }, async () => {
  for (const way of ['throw', 'sql'] as const) {
    failure = way;
    await owner.query('update jobs set attempts = 0');
    await fiveTimes(good.workOnce);
    assert.deepEqual(await job(), { status: 'queued', attempts: 3 }, way);
    assert.deepEqual(errors.slice(-2), ['none', 'none'], 'after 3 attempts the job is no longer taken');
    errors.length = 0;
  }
});

// The Python fixtures, run as they are: the poison job's `run` raises in Python, or runs failing SQL.
const PY = `
import importlib.util, json, sys
path, failure = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("fixture", path)
fixture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixture)
def run(conn, payload):
    if failure == "sql":
        conn.execute("select 1 / 0")
    raise RuntimeError("poison payload")
fixture.run = run
fixture.pool.open(wait=True)
errors = []
for _ in range(5):
    try:
        fixture.work_one()
        errors.append("none")
    except Exception as error:
        errors.append(type(error).__name__)
fixture.pool.close()
print(json.dumps(errors))
`;

function python(fixture: string, failureWay: 'throw' | 'sql'): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', PY, join(fixtures, fixture), failureWay], { env: { ...process.env, DATABASE_URL: db.workerUrl }, timeout: 30_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

test('psycopg 3: the count before rollback() is lost both ways; after rollback() it commits', { timeout: 60_000 }, async () => {
  await requirePsycopg();
  assert.deepEqual(await python('bad-count-before-rollback.py', 'throw'), Array(5).fill('RuntimeError'));
  assert.deepEqual(await job(), { status: 'queued', attempts: 0 });
  assert.deepEqual(await python('bad-count-before-rollback.py', 'sql'), Array(5).fill('InFailedSqlTransaction'));
  assert.deepEqual(await job(), { status: 'queued', attempts: 0 });
  assert.deepEqual(await python('good-count-after-rollback.py', 'sql'), ['DivisionByZero', 'DivisionByZero', 'DivisionByZero', 'none', 'none']);
  assert.deepEqual(await job(), { status: 'queued', attempts: 3 });
});
