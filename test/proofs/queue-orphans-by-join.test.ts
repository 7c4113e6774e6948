// Proof: the tasks of a runner whose beat is stale are put back by a sweep that
// joins them to the runners table (require-fenced-finish/bad-orphans-by-join.sql).
// A runner that stalled past the window but is still alive finishes late: the
// finish by id only overwrites the result of the runner that took the task
// again; the finish that compares the holder (good-orphans-by-join.sql)
// matches no row. The stall is written as a beat 2 minutes old, not waited for.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const BAD = 'queue/require-fenced-finish/bad-orphans-by-join.sql';
const GOOD = 'queue/require-fenced-finish/good-orphans-by-join.sql';
const [beat, take, requeue] = ['beat', 'take_tasks', 'requeue_silent'].map((name) => namedStatement(BAD, name));
const unfenced = namedStatement(BAD, 'finish_task');
const fenced = namedStatement(GOOD, 'finish_task');

let db: TestDatabase;
let client: pg.Client;
let taskId: number;
before(async () => {
  db = await startTestDatabase({ seed: false });
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  await owner.query(`
    create table runners (id text primary key, pinged_at timestamptz not null default now());
    create table tasks (id bigserial primary key, body text, state text not null default 'waiting',
      holder text references runners (id), taken_at timestamptz, tries int not null default 0, max_tries int not null default 5, output text);
    grant select, insert, update, delete on runners, tasks to ${WORKER_ROLE};
    grant usage on sequence tasks_id_seq to ${WORKER_ROLE};`);
  await owner.end();
  client = new pg.Client(db.workerUrl);
  await client.connect();
});
after(async () => {
  await client?.end();
  await db?.stop();
});
beforeEach(async () => {
  await client.query('delete from tasks');
  await client.query('delete from runners');
  await client.query("insert into runners (id) values ('A'), ('B')");
  taskId = Number((await client.query("insert into tasks (body) values ('render') returning id")).rows[0].id);
});

/** A takes the task, then stalls: its last beat is 2 minutes old, the sweep hands the task to B, and B finishes it. */
async function stallAndRetake(): Promise<void> {
  assert.deepEqual((await client.query(take, ['A'])).rows.map((r) => Number(r.id)), [taskId]);
  await client.query("update runners set pinged_at = now() - interval '2 minutes' where id = 'A'");
  assert.equal((await client.query(beat, ['B'])).rowCount, 1);
  assert.equal((await client.query(requeue)).rowCount, 1, "the sweep puts A's task back");
  assert.deepEqual((await client.query(take, ['B'])).rows.map((r) => Number(r.id)), [taskId]);
  assert.equal((await client.query(fenced, [taskId, 'result of B', 'B'])).rowCount, 1);
}

const stored = async () => (await client.query('select state, output, holder from tasks where id = $1', [taskId])).rows[0];

test("a stalled runner's late finish by id only overwrites the result of the runner that took the task again", { timeout: 30_000 }, async () => {
  await stallAndRetake();
  assert.equal((await client.query(unfenced, [taskId, 'result of A'])).rowCount, 1);
  assert.deepEqual(await stored(), { state: 'finished', output: 'result of A', holder: 'B' });
});

test("the finish that compares the holder matches no row: B's result stays", { timeout: 30_000 }, async () => {
  await stallAndRetake();
  assert.equal((await client.query(fenced, [taskId, 'result of A', 'A'])).rowCount, 0);
  assert.deepEqual(await stored(), { state: 'finished', output: 'result of B', holder: 'B' });
});

test('a runner that keeps beating keeps its task: the sweep takes nothing back', { timeout: 30_000 }, async () => {
  await client.query(take, ['A']);
  assert.equal((await client.query(beat, ['A'])).rowCount, 1);
  assert.equal((await client.query(requeue)).rowCount, 0);
});
