// Proof: a retry made by copying the job into a new row (`insert ... select
// ..., attempt + 1 ... from render_tasks where id = $1`, or through a CTE that
// deletes the old row), with the fixtures' own statements on PostgreSQL
// 17.10. A render that fails every time is claimed, failed and retried, ten
// times over:
// - require-claim-attempt-limit/bad-retry-copy.sql and bad-retry-moved.sql
//   stop nowhere: the render is claimed 10 times of 10, its attempt counting
//   up past max_attempts (3), and a copy is still queued at the end;
// - good-retry-copy.sql and good-retry-moved.sql copy only under the limit:
//   3 runs, then no copy, nothing left queued, the last attempt left 'failed'.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const DIR = 'queue/require-claim-attempt-limit';

let db: TestDatabase;
let client: pg.Client;
before(async () => {
  db = await startTestDatabase({ seed: false });
  client = new pg.Client(db.ownerUrl);
  await client.connect();
  await client.query(`create table render_tasks (
    id bigserial primary key,
    source_url text not null,
    size int not null default 256,
    status text not null default 'queued',
    attempt int not null default 1,
    max_attempts int not null default 3,
    locked_until timestamptz,
    locked_by text,
    last_error text)`);
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('truncate render_tasks restart identity');
  await client.query("insert into render_tasks (source_url) values ('https://example.test/broken.png')");
});

/** Ten rounds of: a worker claims, the render throws, the fail path records it and retries. The attempts claimed. */
async function failEveryTime(fixture: string, failPath: string[]): Promise<number[]> {
  const claimed: number[] = [];
  for (let round = 0; round < 10; round++) {
    const worker = `worker-${round}`;
    const { rows } = await client.query(namedStatement(fixture, 'take_render'), [worker]);
    if (!rows[0]) break;
    claimed.push(rows[0].attempt);
    for (const name of failPath) {
      const statement = namedStatement(fixture, name);
      await client.query(statement, name === 'fail_render' ? [rows[0].id, worker, 'decoder crashed'] : statement.includes('$2') ? [rows[0].id, worker] : [rows[0].id]);
    }
  }
  return claimed;
}

const queued = async () => Number((await client.query("select count(*) from render_tasks where status = 'queued'")).rows[0].count);

test('copy without a limit: claimed 10 times of 10, attempt 1 to 10, a copy still queued', { timeout: 30_000 }, async () => {
  assert.deepEqual(await failEveryTime(`${DIR}/bad-retry-copy.sql`, ['fail_render', 'retry_render']), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(await queued(), 1);
});

test('copy under the limit: 3 runs, then nothing queued and the last attempt failed', { timeout: 30_000 }, async () => {
  assert.deepEqual(await failEveryTime(`${DIR}/good-retry-copy.sql`, ['fail_render', 'retry_render']), [1, 2, 3]);
  assert.equal(await queued(), 0);
  const { rows } = await client.query('select status, attempt from render_tasks order by id desc limit 1');
  assert.deepEqual(rows[0], { status: 'failed', attempt: 3 });
});

test('moved back without a limit (delete ... returning, then the copy): claimed 10 times of 10', { timeout: 30_000 }, async () => {
  assert.deepEqual(await failEveryTime(`${DIR}/bad-retry-moved.sql`, ['requeue_render']), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(await queued(), 1);
});

test('moved back under the limit: 3 runs, then the render stays failed', { timeout: 30_000 }, async () => {
  assert.deepEqual(await failEveryTime(`${DIR}/good-retry-moved.sql`, ['fail_render', 'requeue_render']), [1, 2, 3]);
  assert.equal(await queued(), 0);
  assert.equal(Number((await client.query('select count(*) from render_tasks')).rows[0].count), 1, 'the render was moved, not copied');
});
