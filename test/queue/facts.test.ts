// What the queue rules stand on: the analyzer's claim predicates, lease
// intervals and aliases, and the classification of queue statements.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { parseIntervalText } from '../../src/sql/interval.ts';
import { CADENCE_COLUMN, isRowId } from '../../src/model/queue-columns.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

await loadSqlParser();

const only = (sql: string) => {
  const { statements, errors } = analyzeSql(sql);
  assert.deepEqual(errors, []);
  assert.equal(statements.length, 1);
  return statements[0];
};
const facts = (sql: string) => queueFactsOf(sqlFrontEnd.parse(sql, 'q.sql', {}));

test('interval texts in seconds', () => {
  assert.equal(parseIntervalText('30 seconds'), 30);
  assert.equal(parseIntervalText('2s'), 2);
  assert.equal(parseIntervalText('5 min'), 300);
  assert.equal(parseIntervalText('1 hour 30 minutes'), 5400);
  assert.equal(parseIntervalText('4 hours'), 14400);
  assert.equal(parseIntervalText('00:05:00'), 300);
  assert.equal(parseIntervalText('45'), 45);
  assert.equal(parseIntervalText('@ 1 day'), 86400);
  assert.equal(parseIntervalText('1 fortnight'), undefined);
  assert.equal(parseIntervalText(''), undefined);
});

test('lease intervals in assignments and comparisons, and placeholders', () => {
  const claim = only("update jobs set locked_until = now() + interval '30 seconds', visible_at = now() + make_interval(secs => 5), lease_until = now() + $1::interval where locked_at < now() - '4 hours'::interval").rowWrites[0];
  const [a, b, c] = claim.assignments.map((x) => x.value);
  assert.equal(a.kind === 'expression' && a.intervalSeconds, 30);
  assert.equal(b.kind === 'expression' && b.intervalSeconds, 5);
  assert.equal(c.kind === 'expression' && c.intervalSeconds, undefined);
  assert.equal(c.kind === 'expression' && c.params, true);
  const where = claim.where[0].value;
  assert.equal(where.kind === 'expression' && where.intervalSeconds, 14400);
});

test('an interval scaled by a column or a routine parameter is as long as the run says; by a number, that many', () => {
  const claim = only(
    "update jobs set locked_until = now() + timeout_secs * interval '1 second', visible_at = now() + interval '1 minute' / slots, lease_until = now() + 3 * interval '1 minute' where id = 1",
  ).rowWrites[0];
  const [a, b, c] = claim.assignments.map((x) => x.value);
  assert.equal(a.kind === 'expression' && a.intervalSeconds, undefined);
  assert.equal(b.kind === 'expression' && b.intervalSeconds, undefined);
  assert.equal(c.kind === 'expression' && c.intervalSeconds, 180);
  // A constant next to a length the run computes is not the length either.
  const cutoff = only("update jobs set status = 'queued' where started_at < now() - timeout_secs * interval '1 second' - interval '30 seconds'").rowWrites[0].where[0].value;
  assert.equal(cutoff.kind === 'expression' && cutoff.intervalSeconds, undefined);
});

test("a routine's parameter compared in its body is the caller's value; a column of the same name stays a column", () => {
  const { statements } = analyzeSql(
    'create function finish(p_id bigint, attempts int) returns void language sql as $$ update jobs set status = \'done\' where id = p_id and attempts = attempts and jobs.owner = p_id $$',
  );
  const where = statements.flatMap((s) => s.rowWrites)[0].where.map((c) => `${c.column} ${c.value.kind}`);
  assert.deepEqual(where, ['id param', 'attempts column', 'owner param']);
  // Outside a routine the same names are columns.
  assert.deepEqual(only('update jobs set status = \'done\' where id = p_id').rowWrites[0].where.map((c) => c.value.kind), ['column']);
});

test('the locking read carries its own WHERE: the claim predicate', () => {
  const statement = only(
    "update jobs set status = 'running' where id = (select id from jobs where (status = 'queued' or (status = 'running' and locked_until < now())) and attempts < max_attempts for update skip locked limit 1)",
  );
  assert.deepEqual(
    statement.lockingReads[0].where.map((c) => [c.column, c.op, c.underOr]),
    [['status', '=', true], ['status', '=', true], ['locked_until', '<', true], ['attempts', '<', false]],
  );
});

test('column IN (subquery) and casts of placeholders are read', () => {
  const write = only('update jobs set status = $2::text where id in (select unnest($1::bigint[])) and attempts = $3::int').rowWrites[0];
  assert.deepEqual(write.where.map((c) => [c.column, c.op, c.value.kind]), [['id', 'in', 'subquery'], ['attempts', '=', 'param']]);
  assert.equal(write.assignments[0].value.kind, 'param');
});

test('FOR UPDATE OF an alias locks the aliased table', () => {
  const statement = only('select * from procrastinate_jobs as jobs where jobs.status = \'todo\' for update of jobs skip locked');
  assert.deepEqual(statement.lockingReads[0].tables, ['procrastinate_jobs']);
});

test('the lease design of DESIGN.md: claim, heartbeat, fenced finish and fail, dead sweep', () => {
  const q = queueFactsOf(sqlFrontEnd.parse(readFixture('queue/good/lease-design.sql'), 'lease-design.sql', {}));
  assert.equal(q.claims.length, 1);
  const [claim] = q.claims;
  assert.equal(claim.design, 'lease');
  assert.equal(claim.leaseColumn, 'locked_until');
  assert.equal(claim.leaseSeconds, 2);
  assert.ok(claim.reclaimAt && claim.limitAt && claim.increments);
  assert.deepEqual(q.heartbeats.map((h) => [h.column, h.compared]), [['locked_until', ['id', 'attempts']]]);
  assert.deepEqual(q.finishes.map((f) => [f.kind, f.compared, f.setsDead]), [['finish', ['id', 'attempts'], false], ['fail', ['id', 'attempts'], true]]);
  assert.deepEqual(claim.writes, ['attempts', 'locked_until', 'locked_by']);
  assert.deepEqual(q.sweeps.map((s) => [s.dead, s.requeue, Boolean(s.limitAt), Boolean(s.reclaimAt)]), [[true, false, true, true]]);
});

test('the one-transaction dequeue has no lease claim and no finish of its own', () => {
  const q = queueFactsOf(sqlFrontEnd.parse(readFixture('queue/designs/one-transaction.sql'), 'one-transaction.sql', {}));
  assert.deepEqual(q, { claims: [], finishes: [], heartbeats: [], sweeps: [], futureTimes: [] });
});

test('a claim whose transaction also finishes the job is the one-transaction design', () => {
  const q = facts(
    "begin; update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '1 minute' where id = (select id from jobs where status = 'queued' for update skip locked limit 1) returning id; update jobs set status = 'done' where id = $1; commit;",
  );
  assert.deepEqual(q.claims.map((c) => c.design), ['one-transaction']);
});

test('a claim in two statements of a PL/pgSQL function: SELECT ... FOR UPDATE SKIP LOCKED INTO, then UPDATE by id', () => {
  const q = facts(`create function claim(worker text) returns bigint language plpgsql as $$
declare v_id bigint;
begin
  select id into v_id from jobs where status = 'queued' or (status = 'running' and locked_until < now()) order by id for update skip locked limit 1;
  update jobs set status = 'running', locked_until = now() + interval '10 seconds', locked_by = worker where id = v_id;
  return v_id;
end $$;`);
  assert.equal(q.claims.length, 1);
  assert.equal(q.claims[0].leaseSeconds, 10);
  assert.ok(q.claims[0].reclaimAt);
  assert.equal(q.claims[0].increments, false);
});

test('an update of the rows its own SKIP LOCKED read picks is no finish, even where its new state is unknown', () => {
  const q = facts(
    'with picked as (select id from outbox where state = $1 order by id limit 1 for update skip locked) update outbox o set state = $2, updated_at = now() from picked p where o.id = p.id returning o.id',
  );
  assert.deepEqual(q, { claims: [], finishes: [], heartbeats: [], sweeps: [], futureTimes: [] });
  const finish = facts("update outbox set state = $2 where id = $1");
  assert.equal(finish.finishes.length, 1);
});

test('graphile-worker: the lease length comes from the stale-lock sweep', () => {
  const q = queueFactsOf(sqlFrontEnd.parse(readFixture('queue/good/graphile-worker.sql'), 'g.sql', {}));
  assert.equal(q.claims.length, 1);
  assert.equal(q.claims[0].reclaimAt, undefined);
  assert.deepEqual(q.sweeps.map((s) => [s.requeue, s.dead, s.leaseSeconds]), [[true, false, 14400]]);
  assert.deepEqual(q.finishes.map((f) => [f.kind, f.compared]), [['finish', ['id']], ['fail', ['id', 'locked_by']]]);
  assert.deepEqual(q.claims[0].writes, ['attempts', 'locked_by', 'locked_at']);
});

test('River, Oban, pg-boss: claims without a lease to take back, finishes by state', () => {
  for (const design of ['river', 'oban', 'pg-boss']) {
    const q = queueFactsOf(sqlFrontEnd.parse(readFixture(`queue/good/${design}.sql`), `${design}.sql`, {}));
    assert.equal(q.claims.length, 1, design);
    assert.equal(q.claims[0].reclaimAt, undefined, design);
    assert.equal(q.claims[0].increments, true, design);
    assert.ok(q.finishes.some((f) => f.by === 'id and state'), design);
  }
});

test('a write of the row a plain read of its table picked (id = (select id ... limit 1), no row lock): the read filter is the claim predicate', () => {
  const [claim] = facts(`update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '1 minute'
    where id = (select id from jobs where (status = 'queued' or (status = 'running' and locked_until < now())) and attempts < max_attempts order by id limit 1)
      and status = $1`).claims;
  assert.ok(claim, 'a claim');
  assert.ok(claim.reclaimAt, 'it takes expired leases back, by the read');
  assert.ok(claim.limitAt, 'the limit is in the read');
  assert.deepEqual(claim.takes.sort(), ['queued', 'running']);
  // By role: a move from the state the read takes to another live one that writes a lease start.
  const [moves] = facts(`update exports set state = 'rendering', claimed_at = now() where id = (select id from exports where state = 'pending' limit 1)`).claims;
  assert.ok(moves, 'pending -> rendering with claimed_at is a claim');
  // A subquery of another table picks no job of this one.
  assert.deepEqual(facts(`update jobs set status = 'running' where id = (select job_id from assignments where worker = $1 limit 1)`).claims, []);
});

test("a routine's named parameters are the caller's values: a finish by the caller's id, a sweep by the caller's cutoff", () => {
  const q = facts(`create function finish_job(p_job_id bigint, p_worker text) returns void language plpgsql as $$
begin
  update jobs set status = 'done' where id = p_job_id and locked_by = p_worker;
end $$;
create function requeue_stale(p_cutoff timestamptz) returns void language sql as $$
  update jobs set status = 'queued', locked_by = null where status = 'running' and locked_at < p_cutoff;
$$;
create function finish_by_name(p_job_id bigint) returns void language sql as $$
  update jobs set status = 'done' where id = finish_by_name.p_job_id;
$$;`);
  assert.deepEqual(q.finishes.map((f) => [f.by, f.compared]), [['id', ['id', 'locked_by']], ['id', ['id']]]);
  assert.deepEqual(q.sweeps.map((s) => [s.requeue, s.reclaimColumn]), [[true, 'locked_at']]);
  // A SQL-language body resolves a name it also writes as a column to the column: `status` here is the row's.
  const [write] = analyzeSql(`create function set_status(status text, p_id bigint) returns void language sql as $$
  update jobs set status = 'done' where id = p_id and status = status;
$$;`).statements.flatMap((s) => s.rowWrites);
  assert.deepEqual(write.where.map((c) => [c.column, c.value.kind]), [['id', 'param'], ['status', 'column']]);
});

test('the row id by the table: id, <noun>_id of its last word, <table>_id of its whole name', () => {
  assert.ok(isRowId('id', 'jobs'));
  assert.ok(isRowId('delivery_id', 'alert_deliveries'));
  assert.ok(isRowId('job_queue_id', 'job_queue'));
  assert.ok(isRowId('outbox_event_id', 'public.outbox_events'));
  assert.ok(!isRowId('tenant_id', 'jobs'));
  assert.ok(!isRowId('queue_id', 'job_runs'));
});

test('a cadence column names a recurring row\'s last or next turn, by time or by date; not a lease, lock or attempt', () => {
  for (const column of ['last_alerted_at', 'next_report_at', 'next_nag_date', 'last_digest_date', 'nextReminderDate']) assert.ok(CADENCE_COLUMN.test(column), column);
  for (const column of ['next_attempt_date', 'next_lock_date', 'last_heartbeat_date', 'run_date', 'locked_until', 'next_run_after_at']) assert.ok(!CADENCE_COLUMN.test(column), column);
});
