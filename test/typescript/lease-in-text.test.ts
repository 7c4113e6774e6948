// A lease whose length the host puts into the interval's text
// (`interval '${seconds} seconds'`), and a claim that stamps both ends of its
// lease (`locked_at = now()`, `lock_expires_at = now() + ...`): the lease is
// the end its take-back tests, as long as the value the host puts there.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parseStatements } from '../../src/sql/parser.ts';
import { intervalOf } from '../../src/sql/interval.ts';

before(() => loadSqlParser());

const claimOf = (text: string) => queueFactsOf(typescriptFrontEnd.parse(text, 'queue.ts', {})).claims[0];

const claim = (lengthParam: string, columns = `locked_at = now(), lock_expires_at = now() + interval '\${seconds} seconds'`) => `
import pg from 'pg';
const pool = new pg.Pool();
export async function take(worker: string, ${lengthParam}) {
  return pool.query(\`update jobs set status = 'running', locked_by = $1, ${columns}, attempts = attempts + 1
    where id = (select id from jobs where (status = 'queued' or (status = 'running' and lock_expires_at < now()))
                and attempts < max_attempts order by id for update skip locked limit 1) returning id\`, [worker]);
}`;

test('a hole in an interval literal is as long as the constant bound there, and unknown otherwise', () => {
  const parsed = parseStatements(`select now() + interval '$2 minutes', now() + 'pgq_param_3 seconds'::interval`);
  assert.ok(parsed.ok);
  const targets = (parsed.ok ? parsed.statements[0].stmt : undefined)?.SelectStmt?.targetList ?? [];
  const [byDollar, byName] = targets.map((t: { ResTarget: { val: { A_Expr: { rexpr: unknown } } } }) => t.ResTarget.val.A_Expr.rexpr);
  assert.equal(intervalOf(byDollar, (n) => (n === 2 ? 5 : undefined)), 300);
  assert.equal(intervalOf(byName, (n) => (n === 3 ? '90' : undefined)), 90);
  // Nothing bound, or not a constant: no length.
  assert.equal(intervalOf(byDollar), undefined);
  assert.equal(intervalOf(byDollar, () => undefined), undefined);
});

test("the lease is the end the take-back tests, as long as the length parameter's default", () => {
  const c = claimOf(claim('seconds = 300'));
  assert.equal(c?.leaseColumn, 'lock_expires_at');
  assert.equal(c?.leaseSeconds, 300);
});

test('a length the callers always give stays unknown', () => {
  const c = claimOf(claim('seconds: number'));
  assert.equal(c?.leaseColumn, 'lock_expires_at');
  assert.equal(c?.leaseSeconds, undefined);
});

test('with the end stamped first, the same lease', () => {
  const c = claimOf(claim('seconds = 300', `lock_expires_at = now() + interval '\${seconds} seconds', locked_at = now()`));
  assert.equal(c?.leaseColumn, 'lock_expires_at');
  assert.equal(c?.leaseSeconds, 300);
});
