// pgmq's API read as queue facts (src/model/pgmq.ts): a read is a claim that
// counts in read_ct and takes back messages whose visibility timeout passed,
// with no limit of its own; set_vt is a heartbeat; delete and archive finish
// by msg_id, which is all pgmq has.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { brief, runFileOnly, runProject } from './support/run.ts';

/** A consumer in PL/pgSQL: reads, runs, deletes; the read is at line 4, column 39. */
const CONSUMER = (run = '') =>
  'create function app.consume() returns void language plpgsql as $$\ndeclare m record;\nbegin\n' +
  `  for m in select msg_id, message from pgmq.read('mail', 30, 5) loop\n${run}    perform pgmq.delete('mail', m.msg_id);\n  end loop;\nend $$;\n`;
const READ = CONSUMER();
const DELETE = '';

describe('require-claim-attempt-limit on pgmq', () => {
  const rule = 'require-claim-attempt-limit';
  test('a read with no read_ct comparison anywhere in the project, at the read', () => {
    const findings = runProject(rule, { 'a.sql': READ + DELETE });
    assert.deepEqual(brief(findings), ['a.sql:4:40 noReadLimit']);
    assert.match(findings[0].message, /queue 'mail' it hands out for 30 s/);
  });
  test('the per-file pass (ESLint) reports nothing: the consumer may be another file', () => {
    assert.deepEqual(brief(runFileOnly(rule, 'a.sql', READ + DELETE)), []);
  });
  test('a consumer in another file that compares the read count is a limit', () => {
    const consumer = 'export function run(m: { read_ct: number }) {\n  if (m.read_ct >= 5) return archive(m);\n}\n';
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE, 'b.ts': consumer })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE, 'b.ts': 'const n = 5 < msg.readCount;\n' })), []);
  });
  test('a consumer that counts attempts in a job table of its own has its limit there: unknown, quiet', () => {
    const consumer =
      'create function claim_render() returns jsonb language plpgsql as $$ declare m record; begin\n' +
      "  select * into m from pgmq.read('render', 300, 1);\n" +
      "  update render_jobs set status = 'processing', attempt_count = attempt_count + 1 where id = (m.message->>'job_id')::uuid;\n" +
      '  return m.message; end $$;\n';
    assert.deepEqual(brief(runProject(rule, { 'a.sql': consumer })), []);
    assert.equal(runProject(rule, { 'a.sql': consumer.replace('attempt_count = attempt_count + 1', 'started_at = now()') }).length, 1);
  });
  test("pgmq's read written out on its queue table (inlined, or a vendored copy that formats the table) is pgmq's read", () => {
    const statement =
      'with next as (select msg_id from pgmq.q_mail where vt <= clock_timestamp() order by msg_id limit 5 for update skip locked)\n' +
      "update pgmq.q_mail m set vt = clock_timestamp() + interval '30 seconds', read_ct = m.read_ct + 1 from next where m.msg_id = next.msg_id returning m.*;\n";
    const inlined = `create function app.take_mail() returns setof pgmq.q_mail language sql as $$\n${statement}$$;\n`;
    const findings = runProject(rule, { 'a.sql': inlined });
    assert.deepEqual(brief(findings), ['a.sql:2:1 noReadLimit']);
    assert.match(findings[0].message, /queue 'mail' it hands out for 30 s/);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': inlined, 'b.py': 'if msg.read_ct >= 3:\n    archive(msg)\n' })), []);
    const vendored =
      'create function q.read(queue_name text, vt int, qty int) returns setof record language plpgsql as $f$ begin return query execute format(\n' +
      "$q$ with c as (select msg_id from pgmq.%I where vt <= clock_timestamp() limit $1 for update skip locked) update pgmq.%I m set vt = clock_timestamp() + %L, read_ct = read_ct + 1 from c where m.msg_id = c.msg_id returning m.* $q$,\n" +
      "'q_' || queue_name, 'q_' || queue_name, make_interval(secs => vt)) using qty; end $f$;\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': vendored })).map((f) => f.split(' ')[1]), ['noReadLimit'], 'not the noLimit of a job table');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': vendored, 'b.ts': 'if (m.read_ct > 5) archive(m);\n' })), []);
  });
  test('a read at the top level of a .sql file is a query some program runs: its consumer is that program (sqlc, psql, pgTAP)', () => {
    const queries = '-- name: PollMessages :many\nselect msg_id, read_ct, message from pgmq.read(queue_name => $1, vt => $2, qty => $3);\n';
    assert.deepEqual(brief(runProject(rule, { 'queries.sql': queries })), []);
    const inlined = "update pgmq.q_mail m set vt = clock_timestamp() + interval '30 seconds', read_ct = m.read_ct + 1 where m.msg_id in (select msg_id from pgmq.q_mail where vt <= clock_timestamp() limit 1 for update skip locked) returning m.*;\n";
    assert.deepEqual(brief(runProject(rule, { 'queries.sql': inlined })), []);
    const host = 'import { Pool } from "pg";\nconst pool = new Pool();\nexport const poll = () => pool.query("select * from pgmq.read($1, 30, 5)", ["mail"]);\n';
    assert.deepEqual(brief(runProject(rule, { 'poll.ts': host })), ['poll.ts:3:53 noReadLimit'], 'in host code the consumer is the program itself');
  });
  test('reading the count is no comparison: an arrow, a JSON path, a type', () => {
    const reads = "const counts = msgs.map((m) => m.read_ct);\nconst c = `select message->>'read_ct' from t`;\ninterface M { read_ct: number }\n";
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ, 'b.ts': reads })), ['a.sql:4:40 noReadLimit']);
  });
  test('pop deletes as it reads; a wrapper that passes its own parameters on consumes nothing', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': "select * from pgmq.pop('mail');\n" })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': 'select count(*) from pgmq.read(q.queue_name, 0, 0) , pgmq.list_queues() q;\n' })), [], 'vt 0: a peek');
    const wrapper = 'create function api.read(q text, vt int, n int) returns setof pgmq.message_record language sql as $$ select * from pgmq.read(q, vt, n) $$;\n';
    assert.deepEqual(brief(runProject(rule, { 'a.sql': wrapper })), []);
  });
  test("named arguments, and Supabase's pgmq_public.read(queue_name, sleep_seconds, n)", () => {
    const inFunction = (statement: string) => `create function app.take() returns setof pgmq.message_record language sql as $$\n${statement}$$;\n`;
    const named = inFunction("select * from pgmq_public.read(queue_name => 'mail', sleep_seconds => 30, n => 1);\n");
    assert.deepEqual(brief(runProject(rule, { 'a.sql': named })), ['a.sql:2:15 noReadLimit']);
    const withPoll = inFunction("select * from pgmq.read_with_poll(queue_name => 'mail', vt => 60, qty => 1, max_poll_seconds => 5);\n");
    assert.match(runProject(rule, { 'a.sql': withPoll })[0].message, /for 1 min/);
  });
  test('supabase-js: client.schema(pgmq_public).rpc(read) is a read of the queue it names', () => {
    const edge =
      "import { createClient } from '@supabase/supabase-js';\nconst supabase = createClient('u', 'k');\n" +
      "export async function run() {\n  const { data } = await supabase.schema('pgmq_public').rpc('read', { queue_name: 'mail', sleep_seconds: 30, n: 5 });\n  return data;\n}\n";
    const findings = runProject(rule, { 'edge.ts': edge });
    assert.deepEqual(brief(findings), ['edge.ts:4:26 noReadLimit']);
    assert.match(findings[0].message, /queue 'mail'/);
  });
});

describe('require-lease-heartbeat on pgmq', () => {
  const rule = 'require-lease-heartbeat';
  test('quiet without a known job length: pgmq consumers size vt to their jobs', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE })), []);
  });
  test('a vt shorter than maxJobSeconds, and no set_vt for the queue: at the read', () => {
    const findings = runProject(rule, { 'a.sql': READ + DELETE }, { maxJobSeconds: 300 });
    assert.deepEqual(brief(findings), ['a.sql:4:40 noSetVt']);
    assert.match(findings[0].message, /pgmq\.set_vt\('mail', msg_id, 30\)/);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE }, { maxJobSeconds: 20 })), [], 'jobs end before the timeout');
  });
  test('set_vt from the running job extends it, unfenced by design; set_vt 0 hands the message back and extends nothing', () => {
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE, 'b.sql': "select pgmq.set_vt('mail', $1, 30);\n" }, { maxJobSeconds: 300 })), []);
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + DELETE, 'b.sql': 'select pgmq.set_vt($2, $1, 30);\n' }, { maxJobSeconds: 300 })), [], 'a queue the code names');
    assert.deepEqual(brief(runProject(rule, { 'a.sql': READ + "select pgmq.set_vt('mail', $1, 0);\n" }, { maxJobSeconds: 300 })), ['a.sql:4:40 noSetVt']);
  });
});

describe('require-fenced-finish on pgmq', () => {
  test('delete, archive and a delete of the queue table by msg_id after a short vt are not reported', () => {
    const finishes = DELETE + "select pgmq.archive('mail', $1);\ndelete from pgmq.q_mail where msg_id = $1;\n";
    assert.deepEqual(brief(runProject('require-fenced-finish', { 'a.sql': READ + finishes })), []);
  });
});
