// no-attempts-in-rollback-scope on PL/pgSQL dequeue functions: what the
// function does with a failing job decides the message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brief, runProject } from './support/run.ts';

const RULE = 'no-attempts-in-rollback-scope';
const fn = (loopBody: string, claimWhere = "status = 'queued'") => `create function work() returns void language plpgsql as $$
declare job record;
begin
  for job in select id, payload from jobs where ${claimWhere} order by id limit 10 for update skip locked loop
${loopBody}
  end loop;
end $$;`;

test('no handler, no count: the batch rolls back and the poison job is taken by every call', () => {
  const findings = runProject(RULE, { 'a.sql': fn('    perform deliver(job.payload);\n    delete from jobs where id = job.id;') });
  assert.deepEqual(brief(findings), ['a.sql:4:38 functionNotCounted']);
  assert.match(findings[0].message, /the whole call rolls back with every job of its batch/);
});

test('the count outside any handler rolls back with the failure', () => {
  const body = '    update jobs set attempts = attempts + 1 where id = job.id;\n    perform deliver(job.payload);\n    delete from jobs where id = job.id;';
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': fn(body) })), ['a.sql:5:21 functionRolledBack']);
});

test('a handler that writes nothing to the job: the job is taken again by every call', () => {
  const body = "    begin\n      perform deliver(job.payload);\n      delete from jobs where id = job.id;\n    exception when others then\n      raise warning 'job % failed: %', job.id, sqlerrm;\n    end;";
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': fn(body) })), ['a.sql:4:38 functionHandlerForgets']);
});

test('quiet: a handler that records the failure; a function with no work between the claim and the delete; no claim', () => {
  const handled = "    begin\n      perform deliver(job.payload);\n      delete from jobs where id = job.id;\n    exception when others then\n      update jobs set attempts = attempts + 1, status = 'failed' where id = job.id;\n    end;";
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': fn(handled, "status = 'queued' and attempts < max_attempts") })), []);
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': fn('    delete from jobs where id = job.id;') })), []);
  const noClaim = fn('    perform deliver(job.payload);\n    delete from jobs where id = job.id;').replace(' for update skip locked', '');
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': noClaim })), []);
});

test('a row of another table taken first (a worker slot) does not hide the jobs the loop takes and finishes', () => {
  const slotThenBatch = (loopBody: string) => `create function work() returns void language plpgsql as $$
declare slot record; job record;
begin
  select * into slot from slots for update skip locked limit 1;
  for job in select id, payload from jobs where status = 'queued' and attempts < 5 for update skip locked loop
${loopBody}
  end loop;
  update slots set busy = false where id = slot.id;
end $$;`;
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': slotThenBatch('    perform deliver(job.payload);\n    delete from jobs where id = job.id;') })), ['a.sql:5:38 functionNotCounted']);
  const handled = "    begin\n      perform deliver(job.payload);\n      delete from jobs where id = job.id;\n    exception when others then\n      update jobs set attempts = attempts + 1 where id = job.id;\n    end;";
  assert.deepEqual(brief(runProject(RULE, { 'a.sql': slotThenBatch(handled) })), []);
});
