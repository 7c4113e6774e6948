// The lease rules on the shapes real queues write: counters and lease columns
// by their role in the claim (not their names), stale ages, visibility
// timeouts, failed rows taken back, recovery through the workers' heartbeat,
// and each finding at the statement where the fix goes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { brief, runProject } from './support/run.ts';

await loadSqlParser();
const facts = (sql: string) => queueFactsOf(sqlFrontEnd.parse(sql, 'q.sql', {}));

describe('reading by role', () => {
  test('several SKIP LOCKED reads of the table in one claim are one predicate: what every read tests holds, the rest as under an OR', () => {
    const claim = (freshLimit: string, staleLimit: string) =>
      facts(
        `with fresh as (select id from jobs where state = 'ready'${freshLimit} for update skip locked limit 5), ` +
          `stale as (select id from jobs where state = 'busy' and beat_at < now() - interval '1 minute'${staleLimit} for update skip locked limit 5) ` +
          "update jobs set state = 'busy', beat_at = now() where id in (select id from fresh union all select id from stale);",
      ).claims[0];
    const both = claim(' and attempts < 5', ' and attempts < 5');
    assert.deepEqual(both.takes, ['ready', 'busy']);
    assert.ok(both.reclaimAt && both.limitAt);
    const one = claim(' and attempts < 5', '');
    assert.ok(one.reclaimAt);
    assert.deepEqual(one.takes, ['ready', 'busy']);
  });
  test('the column the claim increments is the counter; its limit and its exhausted test follow it', () => {
    const q = facts(
      "update q set vt = now() + interval '30 seconds', delivery_total = delivery_total + 1 where id = (select id from q where vt <= now() and delivery_total < 5 for update skip locked limit 1) returning id;\n" +
        'delete from q where delivery_total >= 5 and vt < now();\n',
    );
    assert.equal(q.claims[0].counter, 'delivery_total');
    assert.ok(q.claims[0].limitAt && q.claims[0].reclaimAt);
    assert.deepEqual(q.sweeps.map((s) => [s.dead, Boolean(s.limitAt)]), [[true, true]]);
  });
  test('a lease-only update that hands no one its rows (no RETURNING, no value of a worker) is no claim; returning them makes it one', () => {
    const touch = (returning: string) =>
      facts(
        `with idle as (select id from queues where last_active <= now() - interval '1 day' for update skip locked) update queues q set last_active = now() from idle where q.id = idle.id${returning};`,
      ).claims;
    assert.deepEqual(touch(''), []);
    assert.equal(touch(' returning q.id').length, 1);
  });
  test('a column the claim sets to now() + interval and takes back once passed is a lease end (available_at)', () => {
    const [claim] = facts(
      "update messages set available_at = now() + interval '45 seconds' where id = (select id from messages where available_at <= now() for update skip locked limit 1) returning id;",
    ).claims;
    assert.equal(claim.leaseColumn, 'available_at');
    assert.equal(claim.leaseSeconds, 45);
    assert.ok(claim.reclaimAt);
  });
  test('available_at alone is a schedule, not a lease: a claim of due jobs takes nothing back', () => {
    const [claim] = facts(
      "update jobs set status = 'running', reserved_at = now() where id = (select id from jobs where status = 'queued' and available_at <= now() for update skip locked limit 1);",
    ).claims;
    assert.equal(claim.reclaimAt, undefined);
  });
  test('a stale age: running jobs whose updated_at is older than a cutoff, computed in SQL or passed in', () => {
    for (const cutoff of ["now() - interval '10 minutes'", '$2']) {
      const [claim] = facts(
        `update jobs set status = 'running' where id = (select id from jobs where status = 'queued' or (status = 'running' and updated_at < ${cutoff}) for update skip locked limit 1);`,
      ).claims;
      assert.ok(claim.reclaimAt, cutoff);
    }
    // The same comparison on queued jobs only is a schedule.
    const [due] = facts("update jobs set status = 'running' where id = (select id from jobs where status = 'queued' and updated_at < $2 for update skip locked limit 1);").claims;
    assert.equal(due.reclaimAt, undefined);
  });
  test('what the claim writes, and what a finish compares: the fence is their overlap', () => {
    const q = facts(
      "update jobs set status = 'running', locked_by = $1, lease_token = gen_random_uuid() where id = (select id from jobs where status = 'queued' for update skip locked limit 1);\n" +
        "update jobs set status = 'done' where id = $1 and owner_id = $2 and lease_token = $3;\n",
    );
    assert.deepEqual(q.claims[0].writes, ['locked_by', 'lease_token']);
    assert.deepEqual(q.finishes[0].compared, ['id', 'owner_id', 'lease_token']);
  });
  test("a sweep that re-queues the jobs of workers whose heartbeat is stale: IN, NOT EXISTS, a joined workers table", () => {
    for (const where of [
      "worker_id in (select id from workers where last_seen < now() - interval '1 minute')",
      "not exists (select 1 from workers w where w.id = jobs.worker_id and w.last_seen > now() - interval '1 minute')",
      "worker_id not in (select id from workers where last_seen >= now() - interval '1 minute')",
    ]) {
      const [sweep] = facts(`update jobs set status = 'queued', worker_id = null where status = 'running' and ${where};`).sweeps;
      assert.ok(sweep?.reclaimAt && sweep.requeue, where);
      assert.equal(sweep.leaseSeconds, 60, where);
      assert.deepEqual(sweep.byWorkerBeat, { table: 'workers', column: 'last_seen' }, where);
    }
    const [joined] = facts("update jobs j set status = 'queued' from workers w where j.worker_id = w.id and j.status = 'running' and w.last_seen < now() - interval '1 minute';").sweeps;
    assert.deepEqual(joined?.byWorkerBeat, { column: 'last_seen' });
  });
  test('a sweep that re-queues the jobs of the workers a CTE or subquery of its FROM finds stale (one that deletes them too)', () => {
    for (const sql of [
      "with gone as (delete from runners where beat_at < now() - interval '10 minutes' returning id) update tasks t set state = 'waiting' from gone g where t.state = 'busy' and t.runner_id = g.id;",
      "with gone as (select id from runners where beat_at < now() - interval '10 minutes') update tasks set state = 'waiting' from gone where tasks.runner_id = gone.id and tasks.state = 'busy';",
      "update tasks set state = 'waiting' from (select id from runners where beat_at < now() - interval '10 minutes') g where runner_id = g.id and state = 'busy';",
      // The other table's column first: still the tasks of those runners, not a write of one task by its id.
      "with gone as (delete from runners where beat_at < now() - interval '10 minutes' returning id) update tasks set state = 'waiting' from gone where gone.id = tasks.runner_id and tasks.state = 'busy';",
      "with gone as (delete from runners where beat_at < now() - interval '10 minutes' returning id) update tasks t set state = 'waiting' from gone g where g.id = t.runner_id and t.state = 'busy';",
    ]) {
      const q = facts(sql);
      assert.deepEqual(q.finishes, [], sql);
      const sweep = q.sweeps.find((s) => s.table === 'tasks');
      assert.ok(sweep?.reclaimAt && sweep.requeue, sql);
      assert.equal(sweep.leaseSeconds, 600, sql);
      assert.deepEqual(sweep.byWorkerBeat, { table: 'runners', column: 'beat_at' }, sql);
    }
    const fresh = "with live as (select id from runners where beat_at > now() - interval '10 minutes') update tasks t set state = 'waiting' from live l where t.state = 'busy' and t.runner_id = l.id;";
    assert.deepEqual(facts(fresh).sweeps.filter((s) => s.table === 'tasks'), [], 'the jobs of live workers are not taken back');
  });
  test('a sweep that picks the jobs by a subquery joining them to their workers, by the age of the beat (`now() - r.beat_at > ...`)', () => {
    const sweepOf = (where: string) =>
      facts(`update tasks set state = 'waiting', runner_id = null where id in (select t.id from tasks t join runners r on t.runner_id = r.id where t.state = 'busy' and ${where});`).sweeps[0];
    for (const where of ["now() - r.beat_at > interval '2 minutes'", "interval '2 minutes' < now() - r.beat_at", "r.beat_at < now() - interval '2 minutes'"]) {
      const sweep = sweepOf(where);
      assert.ok(sweep?.reclaimAt && sweep.requeue, where);
      assert.equal(sweep.leaseSeconds, 120, where);
      assert.deepEqual(sweep.byWorkerBeat, { table: 'runners', column: 'beat_at' }, where);
    }
    const fromCode = sweepOf('now() - r.beat_at >= $1');
    assert.ok(fromCode?.reclaimAt && fromCode.leaseSeconds === undefined, 'a window the code binds');
    // A young beat is a live worker; a time stamp of the job itself is not its worker's beat; a join on nothing ties no job to a worker.
    assert.equal(sweepOf("now() - r.beat_at < interval '2 minutes'"), undefined, 'the jobs of live workers are not taken back');
    assert.equal(sweepOf("now() - t.queued_at > interval '2 minutes'")?.byWorkerBeat, undefined, "the job's own time stamp");
    const unjoined = facts("update tasks set state = 'waiting' where id in (select t.id from tasks t, runners r where t.state = 'busy' and now() - r.beat_at > interval '2 minutes');").sweeps[0];
    assert.equal(unjoined?.byWorkerBeat, undefined, 'no join ties the job to the runner');
  });
  test("a claim that takes back a job by its lease's age (`now() - locked_at > interval '10 minutes'`) takes back expired leases", () => {
    const claimOf = (age: string) =>
      facts(
        "update jobs set status = 'running', locked_at = now(), attempts = attempts + 1 where id = (select id from jobs " +
          `where (status = 'queued' or (status = 'running' and ${age})) and attempts < max_attempts order by id for update skip locked limit 1) returning id;`,
      ).claims[0];
    const aged = claimOf("now() - locked_at > interval '10 minutes'");
    assert.ok(aged?.reclaimAt && aged.limitAt);
    assert.equal(aged.leaseSeconds, 600);
    assert.equal(claimOf("now() - locked_at < interval '10 minutes'")?.reclaimAt, undefined, 'a young lease is not taken back');
  });
  test("a sweep's own counter: the column it counts as it takes jobs back and stops below; not a limit it raises", () => {
    const requeue = (set: string, where: string) =>
      facts(`update tasks set state = 'queued', started_at = null${set} where state = 'started' and started_at < now() - interval '5 minutes'${where};`).sweeps[0];
    const counted = requeue(', requeues = requeues + 1', ' and requeues < max_requeues');
    assert.ok(counted.increments && counted.limitAt);
    const raised = requeue(', max_attempts = max_attempts + 1', '');
    assert.ok(!raised.increments && !raised.limitAt, 'raising the limit counts nothing');
    // A per-row timeout (`now() - k.timeout * interval '1 second'`) is still a time before now: expired leases are taken back.
    const perRow = facts(
      "with s as (select t.id from tasks t join kinds k on k.name = t.kind where t.state = 'started' and t.started_at < now() - k.timeout * interval '1 second' for update of t skip locked) update tasks t set state = 'queued' from s where t.id = s.id;",
    ).sweeps[0];
    assert.ok(perRow?.reclaimAt && perRow.requeue);
  });
  test('a fresh heartbeat in a positive subquery is no reclaim (jobs of live workers)', () => {
    const q = facts("update jobs set status = 'queued' where status = 'running' and worker_id in (select id from workers where last_seen > now() - interval '1 minute');");
    assert.deepEqual(q.sweeps, []);
  });
});

const CLAIM_QUEUED = "update jobs set status = 'running', locked_until = now() + interval '5 minutes', locked_by = $1 where id = (select id from jobs where status = 'queued' and attempts < max_attempts for update skip locked limit 1);\n";
const BEAT = "update jobs set locked_until = now() + interval '5 minutes' where id = $1 and locked_by = $2;\n";
const FAIL_COUNTS = "update jobs set attempts = attempts + 1, status = 'queued', locked_until = null where id = $1 and locked_by = $2;\n";
const REQUEUE = "update jobs set status = 'queued', locked_by = null where status = 'running' and locked_until < now();\n";

describe('require-claim-attempt-limit: reported where the fix goes', () => {
  const rule = 'require-claim-attempt-limit';
  test('failures counted on the fail path, the sweep re-queues uncounted: at the sweep, naming the claim and the fail path', () => {
    const findings = runProject(rule, { 'claim.sql': CLAIM_QUEUED + BEAT + FAIL_COUNTS, 'sweep.sql': REQUEUE });
    assert.deepEqual(brief(findings), ['sweep.sql:1:82 noIncrementAtSweep']);
    assert.match(findings[0].message, /the claim at claim\.sql:1 does not count it either \(the fail update at claim\.sql:3 counts only the failures a live worker reports\)/);
  });
  test('nothing counts failures: at the claim, naming the sweep', () => {
    const findings = runProject(rule, { 'claim.sql': CLAIM_QUEUED + BEAT, 'sweep.sql': REQUEUE });
    assert.deepEqual(brief(findings), ['claim.sql:1:17 noIncrement']);
    assert.match(findings[0].message, /the sweep at sweep\.sql:1 puts jobs whose lease expired back in the queue/);
  });
  test('the sweep counts the crash: quiet', () => {
    const counting = "update jobs set status = 'queued', attempts = attempts + 1, locked_by = null where status = 'running' and locked_until < now();\n";
    assert.deepEqual(brief(runProject(rule, { 'claim.sql': CLAIM_QUEUED + BEAT + FAIL_COUNTS, 'sweep.sql': counting })), []);
  });
  test('the claim counts, and neither the claim nor the re-queue sweep stops at a limit: at the sweep', () => {
    const claim = CLAIM_QUEUED.replace(" and attempts < max_attempts", '').replace("status = 'running',", "status = 'running', attempts = attempts + 1,");
    const findings = runProject(rule, { 'claim.sql': claim + BEAT, 'sweep.sql': REQUEUE });
    assert.deepEqual(brief(findings), ['sweep.sql:1:82 noLimitSweep']);
    assert.match(findings[0].message, /and the claim at claim\.sql:1 takes them with none either/);
  });
  test('a flag the analysis cannot read (graphile-worker\'s is_available) may hold the limit: quiet', () => {
    const claim = "update jobs set attempts = attempts + 1, locked_at = now(), locked_by = $1 where id = (select id from jobs where is_available = true for update skip locked limit 1);\n";
    const sweep = "update jobs set locked_at = null, locked_by = null where locked_at < now() - interval '4 hours';\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim + sweep })), []);
  });
  test('failed rows taken back without a limit: at the state comparison', () => {
    const claim = "update jobs set status = 'running', attempts = attempts + 1 where id = (select id from jobs where status in ('queued', 'failed') for update skip locked limit 1);\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim })), ['a.sql:1:99 noRetryLimit']);
  });
});

describe('require-dead-sweep and the states a claim takes back', () => {
  const rule = 'require-dead-sweep';
  const claim = "update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '1 minute' where id = (select id from jobs where (status in ('queued', 'failed') or (status = 'running' and locked_until < now())) and attempts < max_attempts for update skip locked limit 1);\n";
  test("a sweep to 'failed' retires exhausted jobs when the claim takes failed rows back only under the limit", () => {
    const toFailed = "update jobs set status = 'failed' where status = 'running' and locked_until < now() and attempts >= max_attempts;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim + toFailed })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim })), ['a.sql:1:229 noDeadSweep']);
  });
  test("a sweep to 'failed' puts jobs back in the queue when the claim takes failed rows: it needs the count", () => {
    const uncounted = claim.replace('attempts = attempts + 1, ', '').replace(" or (status = 'running' and locked_until < now())", '');
    const toFailed = "update jobs set status = 'failed' where status = 'running' and locked_until < now();\n";
    assert.deepEqual(brief(runProject('require-claim-attempt-limit', { 'a.sql': uncounted + toFailed })), ['a.sql:1:17 noIncrement']);
  });
});

describe('require-lease-heartbeat on other lease designs', () => {
  const rule = 'require-lease-heartbeat';
  test("recovery through the workers' heartbeat: the worker's beat is the design's, no job heartbeat asked for", () => {
    const claim = "update jobs set status = 'running', attempts = attempts + 1, worker_id = $1 where id = (select id from jobs where status = 'queued' and attempts < max_attempts for update skip locked limit 1);\n";
    const sweep = "update jobs set status = case when attempts >= max_attempts then 'dead' else 'queued' end where status = 'running' and worker_id in (select id from workers where last_seen < now() - interval '30 seconds');\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim + sweep })), []);
  });
  test('a sweep re-queueing through a CTE that deletes stale workers, with no limit anywhere: reported at the sweep', () => {
    const claim = "update tasks set state = 'busy', tries = tries + 1, runner_id = $1 from (select id from tasks where state = 'waiting' limit 1 for update skip locked) picked where tasks.id = picked.id returning tasks.id;\n";
    const sweep = "with gone as (delete from runners where beat_at < now() - interval '10 minutes' returning id)\nupdate tasks t set state = 'waiting' from gone g where t.state = 'busy' and t.runner_id = g.id;\n";
    const findings = runProject('require-claim-attempt-limit', { 'claim.sql': claim, 'sweep.sql': sweep });
    assert.deepEqual(brief(findings), ['sweep.sql:1:41 noLimitSweep']);
    assert.match(findings[0].message, /whose worker stopped beating \(`runners\.beat_at` unchanged for 10 min\)/);
  });
  test('a stale-age lease is extended by touching its column by id', () => {
    const claim = "update jobs set status = 'running', attempts = attempts + 1, updated_at = now() where id = (select id from jobs where (status = 'queued' or (status = 'running' and updated_at < now() - interval '2 minutes')) and attempts < max_attempts for update skip locked limit 1);\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim })), ['a.sql:1:62 noHeartbeat']);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim, 'b.sql': 'update jobs set updated_at = now() where id = $1 and attempts = $2;' })), []);
  });
  test('a reschedule by id (run_at = now() + ...) is no heartbeat of a locked_until lease', () => {
    const claim = "update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '30 seconds' where id = (select id from jobs where (status = 'queued' or (status = 'running' and locked_until < now())) and attempts < max_attempts for update skip locked limit 1);\n";
    const findings = runProject(rule, { 'a.sql': claim, 'b.sql': "update jobs set run_at = now() + interval '1 minute' where id = $1;" });
    assert.deepEqual(brief(findings), ['a.sql:1:62 noHeartbeat']);
  });
});

describe('claims written as a chain of CTEs, and deadlines computed by a function', () => {
  const read = (where = '') => `with due as (
  select m.id, m.tries + 1 as tries from box.msgs m
   where m.shown_after <= now()${where} order by m.id limit 10 for update skip locked
), timed as (
  select due.id, due.tries, box.later(due.tries) as shown_after from due
)
update box.msgs set shown_after = timed.shown_after, tries = timed.tries, token = gen_random_uuid()
  from timed where box.msgs.id = timed.id
returning box.msgs.id, box.msgs.token;`;
  const later = "create function box.later(n int) returns timestamptz language sql as $$ select now() + n * interval '10 seconds' $$;";

  test('a SET value taken from a CTE is the CTE expression: the counter increments, the deadline is the function call', () => {
    const [claim] = facts(read()).claims;
    assert.equal(claim.counter, 'tries');
    assert.equal(claim.leaseColumn, 'shown_after');
    assert.deepEqual(claim.leaseBy, ['later']);
    assert.deepEqual(facts(later).futureTimes, ['later']);
    assert.deepEqual(facts('create function box.later(n int) returns timestamptz language sql as $$ select $1::timestamptz $$;').futureTimes, []);
  });
  test('the claim counts where the project defines the function as now() plus an amount, and only there', () => {
    const RULE = 'require-claim-attempt-limit';
    assert.deepEqual(brief(runProject(RULE, { 'schema.sql': later, 'read.sql': read() })), ['read.sql:3:10 noLimit']);
    assert.deepEqual(brief(runProject(RULE, { 'read.sql': read() })), []);
    const earlier = 'create function box.later(n int) returns timestamptz language sql as $$ select now() - make_interval(secs => n) $$;';
    assert.deepEqual(brief(runProject(RULE, { 'schema.sql': earlier, 'read.sql': read() })), []);
    // A limit the queue's settings hold, read by a scalar subquery.
    assert.deepEqual(brief(runProject(RULE, { 'schema.sql': later, 'read.sql': read(' and m.tries < (select max_tries from box.settings)') })), []);
  });
  test('a fence in a CTE the write joins by id: a token compared there, also through a CTE of a CTE and a join', () => {
    const [ack] = facts('with mine as (select id from box.msgs where id = $1 and token = $2 for update) delete from box.msgs using mine where box.msgs.id = mine.id;').finishes;
    assert.ok(ack.compared.includes('token'));
    const nested = facts(
      'with picked as (select id, token from box.msgs where id = $1 for update), ok as (select id from picked where token = $2), gone as (delete from box.msgs using ok where box.msgs.id = ok.id returning 1) select count(*) from gone;',
    ).finishes;
    assert.ok(nested[0].compared.includes('token'));
    const [beat] = facts(
      "with held as (select unnest($1::bigint[]) as id, unnest($2::uuid[]) as token), live as (select m.id from held join box.msgs m on m.id = held.id and m.token = held.token) update box.msgs set shown_after = now() + interval '30 seconds' from live where box.msgs.id = live.id;",
    ).heartbeats;
    assert.ok(beat.compared.includes('token'));
    // A condition on another table of the CTE is not the job's: `w.token` is a worker's.
    const [other] = facts(
      "with live as (select m.id from box.msgs m join box.workers w on w.id = m.worker_id where w.token = $2) update box.msgs set shown_after = now() + interval '30 seconds' from live where box.msgs.id = live.id;",
    ).heartbeats;
    assert.ok(!other.compared.includes('token'));
  });
  test("the heartbeat a finding suggests fences on the table's own counter, whatever it is called", () => {
    const claim =
      "update tasks set phase = 'running', tries = tries + 1, locked_until = now() + interval '5 minutes' " +
      "where id = (select id from tasks where phase = 'queued' or (phase = 'running' and locked_until < now()) for update skip locked limit 1) returning *;\n";
    const [finding] = runProject('require-lease-heartbeat', { 'claim.sql': claim });
    assert.match(finding.message, /where id = \$1 and tries = \$2/);
    const beat = "update tasks set locked_until = now() + interval '5 minutes' where id = $1;\n";
    const [unfenced] = runProject('require-lease-heartbeat', { 'claim.sql': claim + beat });
    assert.equal(unfenced.messageId, 'unfencedHeartbeat');
    assert.match(unfenced.message, /and tries = \$2/);
  });
});
