// How a routine's statements are read where their meaning is outside the statement: a PL/pgSQL variable set
// once by its declaration, a write by the row of a FOR loop over a query, and a counter read through coalesce.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSql, loadSqlParser, type Comparison, type SqlAnalysis } from '../../src/sql/index.ts';

await loadSqlParser();

const writes = (analysis: SqlAnalysis) => {
  assert.deepEqual(analysis.errors, []);
  return analysis.statements.flatMap((s) => s.rowWrites);
};
const shown = (where: readonly Comparison[]) =>
  where.map((c) => {
    const v = c.value;
    const value = v.kind === 'literal' ? String(v.value) : v.kind === 'column' ? v.column : v.kind === 'expression' ? `f(${v.functions.join(',')})${v.intervalSeconds ?? ''}` : v.kind;
    return `${c.negated ? 'not ' : ''}${c.column} ${c.op} ${value}${c.underOr ? ' (or)' : ''}`;
  });

test('a PL/pgSQL variable set once by its declaration is read as its expression where a statement names it', () => {
  const sql = `create function f(p_worker text) returns void language plpgsql as $$
declare
  v_now timestamptz := now();
  v_until timestamptz := v_now + interval '5 minutes';
begin
  update jobs set status = 'running', locked_until = v_until, locked_by = p_worker
   where status = 'running' and locked_until < v_now;
end $$;`;
  const [w] = writes(analyzeSql(sql));
  assert.deepEqual(shown(w.where), ['status = running', 'locked_until < f(now)']);
  const until = w.assignments.find((a) => a.column === 'locked_until')!.value;
  assert.equal(until.kind === 'expression' && until.intervalSeconds, 300);
  // Spans stay inside the statement: the comparison is where the name stands.
  assert.equal(sql.slice(w.where[1].span.start, w.where[1].span.end), 'locked_until');
});

test('a variable that is assigned, read INTO, or declared twice keeps its name: its value is unknown', () => {
  const sql = `create function f() returns void language plpgsql as $$
declare
  a timestamptz := now();
  b timestamptz := now();
  c timestamptz := now();
begin
  a := a - interval '1 day';
  select max(t) into b from marks;
  declare c timestamptz := now() - interval '1 hour'; begin
    update jobs set status = 'queued' where locked_until < a and started_at < b and created_at < c;
  end;
end $$;`;
  const [w] = writes(analyzeSql(sql));
  assert.deepEqual(shown(w.where), ['locked_until < a', 'started_at < b', 'created_at < c']);
});

test('a write by the row of a FOR loop over a query writes the rows the loop found, under the IF that leads to it', () => {
  const sql = `create function reap() returns void language plpgsql as $$
declare r record;
begin
  for r in select * from jobs j where j.status = 'running' and j.locked_until < now() for update skip locked loop
    if r.attempts >= r.max_attempts then
      update jobs set status = 'dead' where id = r.id;
    else
      update jobs set status = 'queued' where jobs.id = r.id;
    end if;
    update other_table set seen = true where id = r.id;
  end loop;
end $$;`;
  const [dead, queued, other] = writes(analyzeSql(sql));
  assert.deepEqual(shown(dead.where), ['id = id', 'status = running', 'locked_until < f(now)', 'attempts >= max_attempts']);
  assert.deepEqual(shown(queued.where), ['id = id', 'status = running', 'locked_until < f(now)', 'attempts < max_attempts']);
  // Another table than the loop's: its own WHERE only.
  assert.deepEqual(shown(other.where), ['id = id']);
});

test('an IF on anything but the loop row adds nothing; a %ROWTYPE loop variable is the loop row too', () => {
  const sql = `create function reap(p_all boolean) returns void language plpgsql as $$
declare r jobs%rowtype;
begin
  for r in select * from jobs where status = 'running' loop
    if p_all and r.attempts is not null then
      update jobs set status = 'queued' where id = r.id;
    end if;
  end loop;
end $$;`;
  const [w] = writes(analyzeSql(sql));
  assert.deepEqual(shown(w.where), ['id = id', 'status = running']);
});

test('coalesce(column, constant) is compared, and counted, as the column', () => {
  const sql = `update mails set retries = coalesce(retries, 0) + 1, owner = coalesce($1, owner)
  where coalesce(retries, 0) < 3 and 5 > coalesce(tries, 0) and coalesce(a, b) = 1`;
  const [w] = writes(analyzeSql(sql));
  assert.deepEqual(shown(w.where), ['retries < 3', 'tries < 5']);
  assert.deepEqual(w.assignments[0].value, { kind: 'increment', by: 1 });
  // The caller's value or the column left as it is: nothing computed from the column.
  const owner = w.assignments[1].value;
  assert.ok(owner.kind === 'expression' && !owner.columns.includes('owner'));
});

test("a pg_cron job's command is read as the body of a routine named after the job, where it stands in the text", () => {
  const sql = `select cron.schedule('requeue', '* * * * *', $$update jobs set status = 'queued' where locked_until < now()$$);
select cron.schedule('*/5 * * * *', $job$delete from jobs where status = 'done'$job$);
select other.schedule('x', '* * * * *', $$update jobs set status = 'queued'$$);`;
  const analysis = analyzeSql(sql);
  const read = analysis.statements.filter((s) => s.routine).map((s) => [s.routine!.name, s.routine!.kind, sql.slice(s.span.start, s.span.end)]);
  assert.deepEqual(read, [
    ['cron job requeue', 'function', "update jobs set status = 'queued' where locked_until < now()"],
    ['cron job */5 * * * *', 'function', "delete from jobs where status = 'done'"],
  ]);
});
