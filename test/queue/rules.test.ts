// The queue rules on small SQL snippets, one file or several: each finding at
// its statement, the per-file pass (what ESLint sees) reporting only what one
// file proves, and the project pass adding the cross-file findings once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { brief, runFileOnly, runProject } from './support/run.ts';

const CLAIM = (opts: { limit?: boolean; increment?: boolean; lease?: string; reclaim?: boolean } = {}) => {
  const { limit = true, increment = true, lease = "interval '2 seconds'", reclaim = true } = opts;
  const predicate = reclaim ? "((status = 'queued') or (status = 'running' and locked_until < now()))" : "status = 'queued'";
  return (
    `update jobs set status = 'running',${increment ? ' attempts = attempts + 1,' : ''} locked_until = now() + ${lease}\n` +
    ` where id = (select id from jobs where ${predicate}${limit ? ' and attempts < max_attempts' : ''} order by id for update skip locked limit 1)\n` +
    ' returning id, attempts;\n'
  );
};
const HEARTBEAT = "update jobs set locked_until = now() + interval '2 seconds' where id = $1 and attempts = $2;\n";
const FINISH = "update jobs set status = 'done', locked_until = null where id = $1 and attempts = $2;\n";
const SWEEP = "update jobs set status = 'dead' where status = 'running' and locked_until < now() and attempts >= max_attempts;\n";
const HEALTHY = HEARTBEAT + FINISH + SWEEP;

describe('require-claim-attempt-limit', () => {
  const rule = 'require-claim-attempt-limit';
  test('valid: the lease design, a state-only claim, the one-transaction design', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + HEALTHY })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ reclaim: false, increment: false, limit: false }) + FINISH })), []);
    const oneTransaction =
      "begin;\nselect id from jobs where status = 'queued' or (status = 'running' and locked_until < now()) for update skip locked limit 1;\n" +
      "update jobs set status = 'running', locked_until = now() + interval '1 minute' where id = $1;\nupdate jobs set status = 'done' where id = $1;\ncommit;";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': oneTransaction })), []);
  });
  test('invalid: no limit, at the expired-lease comparison', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ limit: false }) + HEALTHY })), ['a.sql:2:88 noLimit']);
  });
  test('invalid: no increment, at the first SET column', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ increment: false }) + HEALTHY })), ['a.sql:1:17 noIncrement']);
  });
  test('a counter that counts down stops at zero: retries_left > 0 is its limit, retries_left < max_attempts is none', () => {
    const claim = (limit: string) => CLAIM({ limit: false }).replace('attempts = attempts + 1', 'retries_left = retries_left - 1').replace('order by', `and ${limit} order by`);
    const healthy = HEARTBEAT + FINISH + SWEEP.replace('attempts >= max_attempts', 'retries_left <= 0');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim('retries_left > 0') + healthy })), []);
    const findings = runProject(rule, { 'a.sql': claim('retries_left < max_attempts') + healthy });
    assert.deepEqual(brief(findings), ['a.sql:2:88 noLimit']);
    assert.match(findings[0].message, /`and retries_left > 0`/);
  });
  test("the message names the table's own counter and limit columns, from its CREATE TABLE in another file", () => {
    const table = 'create table jobs (id bigint primary key, status text, tries int default 0, max_tries int default 5, locked_until timestamptz);\n';
    const claim = CLAIM({ limit: false, increment: false });
    const findings = runProject(rule, { 'schema.sql': table, 'a.sql': claim + HEALTHY.replaceAll('attempts', 'tries') });
    assert.deepEqual(brief(findings), ['a.sql:1:17 noIncrement', 'a.sql:2:88 noLimit']);
    assert.match(findings[0].message, /`tries = tries \+ 1`/);
    assert.match(findings[1].message, /`and tries < max_tries`/);
    // With no CREATE TABLE in the project, the usual names.
    assert.match(runProject(rule, { 'a.sql': claim + HEALTHY })[1].message, /`and attempts < max_attempts`/);
    // A limit named after the counter wins over another limit column.
    const two = table.replace('max_tries int default 5', 'max_runs int, max_tries int default 5');
    const limited = runProject(rule, { 'schema.sql': two, 'a.sql': CLAIM({ limit: false }).replace('attempts = attempts + 1', 'tries = tries + 1') + HEALTHY.replaceAll('attempts', 'tries') });
    assert.match(limited[0].message, /`and tries < max_tries`/);
  });
  test('the limit written limit-first counts: max_attempts > attempts', () => {
    const claim = CLAIM({ limit: false }).replace('order by', 'and max_attempts > attempts order by');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim + HEALTHY })), []);
  });
  test('cross-file: a claim without increment and a sweep elsewhere that re-queues expired jobs', () => {
    const files = {
      'claim.sql': CLAIM({ reclaim: false, increment: false }) + HEARTBEAT + FINISH,
      'sweep.sql': "update jobs set status = 'queued', locked_until = null where status = 'running' and locked_until < now();\n",
    };
    const findings = runProject(rule, files);
    assert.deepEqual(brief(findings), ['claim.sql:1:17 noIncrement']);
    assert.match(findings[0].message, /the sweep at sweep\.sql:1 puts jobs whose lease expired back in the queue/);
    assert.deepEqual(brief(runFileOnly(rule, 'claim.sql', files['claim.sql'])), [], 'one file alone proves nothing');
  });
  test('a retry by copy counts in the copy and stops at the limit in its WHERE, or in a claim of the table', () => {
    const copy = (where: string, from = 'jobs', count = 'attempts + 1', counter = 'attempts') =>
      `insert into jobs (payload, ${counter}, max_attempts)\nselect payload, ${count}, max_attempts from ${from} where ${where};\n`;
    const claim = CLAIM({ reclaim: false, increment: false, limit: false }) + FINISH;
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim, 'b.sql': copy('id = $1 and attempts < max_attempts') })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claim, 'b.sql': copy('id = $1') })), ['b.sql:2:17 noCopyLimit']);
    assert.deepEqual(brief(runProject(rule, { 'b.sql': copy('id = $1') })), ['b.sql:2:17 noCopyLimit'], 'the copy alone says it is a retry');
    assert.deepEqual(brief(runFileOnly(rule, 'b.sql', copy('id = $1'))), [], 'a claim elsewhere may hold the limit');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ reclaim: false }) + FINISH, 'b.sql': copy('id = $1') })), [], 'the claim stops at the limit');
    // From the table that keeps the failed jobs; counting down.
    assert.deepEqual(brief(runProject(rule, { 'b.sql': copy('id = $1', 'dead_jobs') })), ['b.sql:2:17 noCopyLimit']);
    assert.deepEqual(brief(runProject(rule, { 'b.sql': copy('id = $1 and retries_left > 0', 'jobs', 'retries_left - 1', 'retries_left') })), []);
    const down = runProject(rule, { 'b.sql': copy('id = $1 and retries_left < max_attempts', 'jobs', 'retries_left - 1', 'retries_left') });
    assert.deepEqual(brief(down), ['b.sql:2:17 noCopyLimit']);
    assert.match(down[0].message, /`retries_left - 1`.*`and retries_left > 0`/);
    // Not a retry: a copy of another table, a copy that moves no counter, a copy into an archive.
    assert.deepEqual(brief(runProject(rule, { 'b.sql': copy('id = $1', 'imports') })), []);
    assert.deepEqual(brief(runProject(rule, { 'b.sql': copy('id = $1', 'jobs', 'attempts') })), []);
    assert.deepEqual(brief(runProject(rule, { 'b.sql': 'insert into jobs_archive (payload, attempts) select payload, attempts + 1 from jobs where id = $1;' })), []);
  });
});

describe('require-dead-sweep', () => {
  const rule = 'require-dead-sweep';
  test('valid: a dead sweep, in the same file or another; a delete into a dead-letter table', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + HEALTHY })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + HEARTBEAT + FINISH, 'b.sql': SWEEP })), []);
    const deleteSweep = 'with d as (delete from jobs where locked_until < now() and attempts >= max_attempts returning *) insert into dead_jobs select * from d;';
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + HEARTBEAT + FINISH, 'b.sql': deleteSweep })), []);
  });
  test('valid: a claim without the limit leaves nothing behind (require-claim-attempt-limit speaks)', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ limit: false }) + HEARTBEAT + FINISH })), []);
  });
  test('invalid: no dead sweep in the project, at the claim\'s limit, naming the fail path', () => {
    const fail = "update jobs set status = case when attempts >= max_attempts then 'dead' else 'queued' end where id = $1 and attempts = $2;\n";
    const findings = runProject(rule, { 'claim.sql': CLAIM(), 'worker.sql': HEARTBEAT + FINISH + fail });
    assert.deepEqual(brief(findings), ['claim.sql:2:115 noDeadSweep']);
    assert.match(findings[0].message, /the fail update at worker\.sql:3 marks a job dead only when its worker lives/);
  });
  test('invalid: a re-queue sweep that stops at the limit and nothing that kills', () => {
    const sweep = "update jobs set status = 'queued' where status = 'running' and locked_until < now() and attempts < max_attempts;";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ reclaim: false }) + HEARTBEAT + FINISH, 'b.sql': sweep })), ['b.sql:1:89 noDeadSweep']);
  });
  test('ESLint sees one file: quiet', () => {
    assert.deepEqual(brief(runFileOnly(rule, 'a.sql', CLAIM())), []);
  });
});

describe('require-fenced-finish', () => {
  const rule = 'require-fenced-finish';
  const unfenced = "update jobs set status = 'done' where id = $1;\n";
  test("a write that ends the job in a state no claim takes and that is not dead ('approved') is named a finish", () => {
    const findings = runProject(rule, { 'a.sql': CLAIM() + HEARTBEAT + SWEEP + "update jobs set status = 'approved' where id = $1;\n" });
    assert.deepEqual(brief(findings), ['a.sql:6:43 unfenced']);
    assert.match(findings[0].message, /^This finish of 'jobs'/);
  });
  test('an optimistic claim (compare and set on the lease, no row lock) is a claim; a heartbeat that compares the old lease is not', () => {
    const cas = "update jobs set locked_until = now() + interval '5 minutes', locked_by = $1 where id = $2 and locked_until = $3;\n";
    const beat = "update jobs set locked_until = now() + interval '5 minutes' where id = $1 and locked_by = $2;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': cas + beat + unfenced })), ['a.sql:3:39 unfenced']);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': cas + beat + "update jobs set status = 'done' where id = $1 and locked_by = $2;\n" })), []);
    // Only a lease extended where it still holds the value read: no token written, so no claim, and nothing to fence against.
    const fencedBeat = "update jobs set locked_until = now() + interval '5 minutes' where id = $1 and locked_until = $2;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': fencedBeat + unfenced })), []);
    // The host decided to take the job back: whether it counts and stops there is not in the SQL.
    assert.deepEqual(brief(runProject('require-claim-attempt-limit', { 'a.sql': cas + beat + unfenced })), []);
  });
  test('valid: fenced by attempts or by lock token', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + HEALTHY })), []);
    const byToken = "update jobs set status = 'done' where id = $1 and locked_by = $2;\n";
    const claimWithToken = CLAIM().replace('locked_until = now()', 'locked_by = $1, locked_until = now()');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': claimWithToken + byToken })), []);
    // Counters by role: the column the claim increments fences, whatever its name.
    const tries = CLAIM().replace('attempts = attempts + 1', 'tries = tries + 1');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': tries + "update jobs set status = 'done' where id = $1 and tries = $2;\n" })), []);
  });
  test('invalid: a compared column the claim does not write fences nothing (owner_id, a token of another statement)', () => {
    const byOwner = "update jobs set status = 'done' where id = $1 and owner_id = $2;\n";
    const findings = runProject(rule, { 'a.sql': CLAIM() + byOwner });
    assert.deepEqual(brief(findings), ['a.sql:4:39 unfenced']);
    assert.match(findings[0].message, /`owner_id` is not written by the claim: the same for every run/);
    const byToken = "update jobs set status = 'done' where id = $1 and locked_by = $2;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + byToken })), ['a.sql:4:39 unfenced']);
  });
  test('invalid: a column both the row lock and the write compare is named once', () => {
    const underLock =
      'begin;\nselect * from jobs where id = $1 and owner_id = $2 for update;\n' +
      "update jobs set status = 'done' where id = $1 and owner_id = $2;\ncommit;\n";
    const findings = runProject(rule, { 'a.sql': CLAIM() + underLock });
    assert.equal(findings.length, 1);
    assert.match(findings[0].message, /\(`owner_id` is not written by the claim/);
  });
  test('valid: quiet where no run can outlive its lease', () => {
    // A lease of an hour or more: longer than any job.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: "interval '1 hour'" }) + unfenced })), []);
    // A lease the code passes in: not weighed.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: '$1::interval' }) + unfenced })), []);
    // No expired lease is taken back.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ reclaim: false }) + unfenced })), []);
    // The workers stop a job before its lease ends.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + unfenced }, { maxJobSeconds: 1 })), []);
  });
  test('invalid: a lease the code passes in, where another write of the job is fenced', () => {
    const fromCode = CLAIM({ lease: '$1::interval' });
    // The heartbeat compares the claimed attempt: the project expects runs to outlive their lease.
    const findings = runProject(rule, { 'claim.sql': fromCode, 'worker.sql': HEARTBEAT + unfenced });
    assert.deepEqual(brief(findings), ['worker.sql:2:39 unfencedBesideFence']);
    assert.match(findings[0].message, /while the heartbeat at line 1 compares `attempts`, a value the claim at claim\.sql:1 wrote/);
    // A fenced fail beside an unfenced finish, in one file.
    const fail = "update jobs set status = 'queued' where id = $1 and attempts = $2;\n";
    assert.deepEqual(brief(runFileOnly(rule, 'a.sql', fromCode + fail + unfenced)), ['a.sql:5:39 unfencedBesideFence']);
    // Nothing fenced anywhere, or the workers' own timeout: unknown, quiet.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': fromCode + unfenced })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': fromCode + HEARTBEAT + unfenced }, { maxJobSeconds: 60 })), []);
    // A compared column the claim does not write is no fence elsewhere either.
    assert.deepEqual(brief(runProject(rule, { 'a.sql': fromCode + "update jobs set status = 'queued' where id = $1 and owner_id = $2;\n" + unfenced })), []);
  });
  test('invalid: id only and id and state, at the WHERE', () => {
    const state = "update jobs set status = 'done' where id = $1 and status = 'running';\n";
    const findings = runProject(rule, { 'a.sql': CLAIM() + unfenced + state });
    assert.deepEqual(brief(findings), ['a.sql:4:39 unfenced', 'a.sql:5:39 unfenced']);
    assert.match(findings[0].message, /by id only, and the claim at line 1 gives a 2 s lease and takes back expired leases/);
    assert.match(findings[1].message, /by id and state only/);
  });
  test('invalid: longLeaseSeconds lowers the bar', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: "interval '30 minutes'" }) + unfenced }, { longLeaseSeconds: 3600 })), ['a.sql:4:39 unfenced']);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: "interval '30 minutes'" }) + unfenced }, { longLeaseSeconds: 600 })), []);
  });
  test('cross-file: reported once, at the finish, naming the claim\'s file; the finish\'s file alone is quiet', () => {
    const files = { 'queue.sql': CLAIM(), 'worker.sql': unfenced };
    const findings = runProject(rule, files);
    assert.deepEqual(brief(findings), ['worker.sql:1:39 unfenced']);
    assert.match(findings[0].message, /the claim at queue\.sql:1/);
    assert.deepEqual(brief(runFileOnly(rule, 'worker.sql', unfenced)), []);
  });
  test('same file: the per-file pass reports it and the project pass does not repeat it', () => {
    assert.deepEqual(brief(runFileOnly(rule, 'a.sql', CLAIM() + unfenced)), ['a.sql:4:39 unfenced']);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + unfenced, 'b.sql': CLAIM() })), ['a.sql:4:39 unfenced']);
  });
  test('a finish inside the claim\'s own transaction runs under its row lock', () => {
    const sql = "begin;\nselect id from jobs where status = 'queued' for update skip locked limit 1;\nupdate jobs set status = 'done' where id = $1;\ncommit;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + sql })), []);
  });
});

describe('require-lease-heartbeat', () => {
  const rule = 'require-lease-heartbeat';
  test('valid: a fenced heartbeat anywhere in the project; a long lease; a lease set by code', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + FINISH, 'b.sql': HEARTBEAT })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: "interval '2 hours'" }) + FINISH })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM({ lease: 'make_interval(secs => $1)' }) + FINISH })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM() + FINISH }, { maxJobSeconds: 1 })), []);
  });
  test('invalid: no heartbeat, at the lease assignment, naming the worker\'s file and the maximum runtime', () => {
    const findings = runProject(rule, { 'claim.sql': CLAIM(), 'worker.sql': FINISH });
    assert.deepEqual(brief(findings), ['claim.sql:1:62 noHeartbeat']);
    assert.match(findings[0].message, /the job is finished at worker\.sql:1/);
    assert.match(findings[0].message, /maximum runtime/);
    assert.match(findings[0].message, /set locked_until = now\(\) \+ interval '2 seconds' where id = \$1 and attempts = \$2/);
    assert.deepEqual(brief(runFileOnly(rule, 'claim.sql', CLAIM())), [], 'absence is a project fact');
  });
  test('invalid: an unfenced heartbeat, at its WHERE (where the fence goes), also per file', () => {
    const heartbeat = "update jobs set locked_until = now() + interval '2 seconds' where id = $1;\n";
    assert.deepEqual(brief(runFileOnly(rule, 'a.sql', CLAIM() + heartbeat)), ['a.sql:4:67 unfencedHeartbeat']);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': CLAIM(), 'b.sql': heartbeat })), ['b.sql:1:67 unfencedHeartbeat']);
  });
});

describe('no-tenant-policy-on-queue across files', () => {
  const rule = 'no-tenant-policy-on-queue';
  const policy = "create policy p on work_items using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);\n";
  const rls = 'alter table work_items enable row level security;\n';
  const claim = "update work_items set status = 'running' where id = (select id from work_items where status = 'queued' for update skip locked limit 1);\n";
  test('the claim names the table, the migration enables the policy', () => {
    const findings = runProject(rule, { 'migration.sql': rls + policy, 'queue.sql': claim });
    assert.deepEqual(brief(findings), ['migration.sql:2:1 tenantPolicyOnQueueAcross']);
    assert.match(findings[0].message, /claimed at queue\.sql:1/);
    assert.deepEqual(brief(runFileOnly(rule, 'migration.sql', rls + policy)), [], 'work_items is not named like a queue');
  });
  test('policy, ENABLE and claim in three files', () => {
    const findings = runProject(rule, { '001.sql': rls, '002.sql': policy, 'queue.sql': claim });
    assert.deepEqual(brief(findings), ['002.sql:1:1 tenantPolicyOnQueueAcross']);
    assert.match(findings[0].message, /claimed at queue\.sql:1, row level security enabled at 001\.sql:1/);
  });
  test('reported once when the file alone already shows it', () => {
    const jobs = "alter table jobs enable row level security;\ncreate policy p on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);\n";
    const claimJobs = "select id from jobs where status = 'queued' for update skip locked limit 1;\n";
    assert.deepEqual(brief(runProject(rule, { 'm.sql': jobs + claimJobs, 'q.sql': claimJobs })), ['m.sql:2:1 tenantPolicyOnQueue']);
  });
  test('no ENABLE ROW LEVEL SECURITY anywhere: the policy filters nothing', () => {
    assert.deepEqual(brief(runProject(rule, { 'm.sql': policy, 'q.sql': claim })), []);
  });
});
