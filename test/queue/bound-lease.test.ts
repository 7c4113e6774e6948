// Lease lengths bound from code (issue #25): when the front end read the value
// bound to a placeholder as a literal (SqlSite.params), the lease length is that
// value read through the interval around the placeholder; otherwise it stays
// "from code". The Python and TypeScript front ends are exercised end to end by
// fixtures/queue/require-fenced-finish/*-bound-lease.*.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import type { HostParam } from '../../src/model/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

/** The claim of `lease` with the values the host code binds to $1, $2, ... */
function claimWith(lease: string, params: HostParam[] | undefined) {
  const model = sqlFrontEnd.parse(
    `update jobs set status = 'running', attempts = attempts + 1, locked_until = ${lease} where id = (select id from jobs where status = 'queued' or (status = 'running' and locked_until < now()) for update skip locked limit 1);`,
    'q.sql',
    {},
  );
  for (const site of model.sites) site.params = params;
  return queueFactsOf(model).claims[0];
}

const literal = (value: string | number): HostParam => ({ kind: 'literal', value });

describe('a lease length bound from code', () => {
  const shapes: [string, HostParam[]][] = [
    ['now() + make_interval(mins => $1)', [literal(30)]],
    ['now() + make_interval(0, 0, 0, 0, 0, $1)', [literal(30)]],
    ["now() + $1 * interval '1 minute'", [literal(30)]],
    ["now() + interval '1 minute' * $1", [literal('30')]],
    ["now() + ($1 || ' minutes')::interval", [literal(30)]],
    ['now() + $1::interval', [literal('30 minutes')]],
    ["now() + $2 * '1 second'::interval", [literal('w1'), literal(1800)]],
  ];
  for (const [lease, params] of shapes) {
    test(`${lease} with ${JSON.stringify(params.map((p) => (p.kind === 'literal' ? p.value : p.kind)))} is a 30 min lease`, () => {
      const claim = claimWith(lease, params);
      assert.equal(claim.leaseSeconds, 1800);
      assert.equal(claim.leaseFromCode, undefined);
    });
  }
  test('a value the front end could not read (a caller parameter, unknown, no params) stays a length from code', () => {
    for (const params of [[{ kind: 'caller-parameter', name: 'minutes' }], [{ kind: 'unknown' }], undefined] as (HostParam[] | undefined)[]) {
      const claim = claimWith('now() + make_interval(mins => $1)', params);
      assert.equal(claim.leaseSeconds, undefined);
      assert.equal(claim.leaseFromCode, true);
    }
  });
  test("the constant interval next to a placeholder is not the length: $1 * interval '1 minute' unbound is from code, not 60 s", () => {
    const claim = claimWith("now() + $1 * interval '1 minute'", undefined);
    assert.equal(claim.leaseSeconds, undefined);
    assert.equal(claim.leaseFromCode, true);
  });
  test('a bound text that is no interval stays unknown rather than a guess', () => {
    const claim = claimWith('now() + $1::interval', [literal('soon')]);
    assert.equal(claim.leaseSeconds, undefined);
  });
  test('an expiry cutoff bound from code gives the length when the claim writes none', () => {
    const model = sqlFrontEnd.parse(
      "update jobs set status = 'running', locked_at = now() where id = (select id from jobs where status = 'queued' or (status = 'running' and locked_at < now() - make_interval(hours => $1)) for update skip locked limit 1);",
      'q.sql',
      {},
    );
    for (const site of model.sites) site.params = [literal(4)];
    const claim = queueFactsOf(model).claims[0];
    assert.equal(claim.leaseSeconds, 4 * 3600);
  });
});
