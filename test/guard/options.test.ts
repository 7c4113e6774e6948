// Option validation: a misconfigured guard must fail at guardPool() time,
// naming the option and its valid values. No database is needed: building a
// pg.Pool does not connect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createSlonikGuardInterceptor, guardPool, guardStats } from '../../src/guard/index.ts';

const newPool = () => new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });

function throwsNaming(options: unknown, option: string, valid: RegExp): void {
  assert.throws(
    () => guardPool(newPool(), options as never),
    (err: Error) => {
      assert.ok(err instanceof TypeError, `TypeError expected, got ${err}`);
      assert.match(err.message, new RegExp(`"${option}"`));
      assert.match(err.message, valid);
      return true;
    },
  );
}

test('settings is required, non-empty, and holds setting names only', () => {
  throwsNaming({}, 'settings', /non-empty array/);
  throwsNaming({ settings: [] }, 'settings', /non-empty array/);
  throwsNaming({ settings: 'app.tenant' }, 'settings', /non-empty array/);
  throwsNaming({ settings: [42] }, 'settings', /setting names/);
  // The names go into the check's SQL text: anything but an identifier path is refused.
  throwsNaming({ settings: ["app.tenant', true); drop table invoices; --"] }, 'settings', /setting names/);
  throwsNaming({ settings: ['app..tenant'] }, 'settings', /setting names/);
});

test('onViolation accepts throw, discard or a function', () => {
  throwsNaming({ settings: ['app.tenant'], onViolation: 'log' }, 'onViolation', /'throw', 'discard' or a function/);
  throwsNaming({ settings: ['app.tenant'], onViolation: null }, 'onViolation', /'throw', 'discard'/);
});

test("'discard' needs onReport, and onReport must be a function", () => {
  throwsNaming({ settings: ['app.tenant'], onViolation: 'discard' }, 'onReport', /a function/);
  throwsNaming({ settings: ['app.tenant'], onReport: 'console' }, 'onReport', /a function/);
});

test('sampleRate is a number from 0 to 1', () => {
  for (const bad of [-0.1, 1.5, Number.NaN, '0.5', null]) {
    throwsNaming({ settings: ['app.tenant'], sampleRate: bad }, 'sampleRate', /from 0 to 1/);
  }
});

test('enabled, includeValues, elide, checkTimeoutMs, factsMaxAgeMs and jobName are type-checked', () => {
  throwsNaming({ settings: ['app.tenant'], enabled: 'no' }, 'enabled', /true or false/);
  throwsNaming({ settings: ['app.tenant'], elide: 1 }, 'elide', /true or false/);
  throwsNaming({ settings: ['app.tenant'], includeValues: 1 }, 'includeValues', /true or false/);
  throwsNaming({ settings: ['app.tenant'], checkTimeoutMs: -1 }, 'checkTimeoutMs', /whole number/);
  throwsNaming({ settings: ['app.tenant'], checkTimeoutMs: 1.5 }, 'checkTimeoutMs', /whole number/);
  throwsNaming({ settings: ['app.tenant'], factsMaxAgeMs: -5 }, 'factsMaxAgeMs', /whole number/);
  throwsNaming({ settings: ['app.tenant'], factsMaxAgeMs: '1s' }, 'factsMaxAgeMs', /whole number/);
  throwsNaming({ settings: ['app.tenant'], jobName: 'worker' }, 'jobName', /a function/);
});

test('an unknown option (a typo) is refused with the list of valid ones', () => {
  assert.throws(
    () => guardPool(newPool(), { settings: ['app.tenant'], onViolations: 'throw' } as never),
    /unknown option "onViolations" \(valid options: settings, onViolation, onReport/,
  );
});

test('options are validated even when the guard is disabled', () => {
  throwsNaming({ settings: [], enabled: false }, 'settings', /non-empty array/);
});

test('enabled: false returns the pool untouched', () => {
  const pool = newPool();
  const same = guardPool(pool, { settings: ['app.tenant'], enabled: false });
  assert.equal(same, pool);
  assert.equal(Object.hasOwn(pool, 'connect'), false);
  assert.equal(Object.hasOwn(pool, 'query'), false);
  assert.equal(guardStats(pool), undefined);
});

test('the guarded pool is the same pg.Pool object; a second guardPool() is refused', () => {
  const pool = newPool();
  const guarded = guardPool(pool, { settings: ['app.tenant'] });
  assert.equal(guarded, pool);
  assert.ok(guarded instanceof pg.Pool);
  assert.ok(Object.hasOwn(pool, 'connect'));
  assert.deepEqual(guardStats(pool), { checkouts: 0, checks: 0, violations: 0, checkErrors: 0, elided: 0 });
  assert.throws(() => guardPool(pool, { settings: ['app.tenant'] }), /already guarded/);
});

test('something that is not a pg.Pool is refused', () => {
  assert.throws(() => guardPool({} as never, { settings: ['app.tenant'] }), /needs a node-postgres pg\.Pool/);
  assert.throws(() => guardPool(new pg.Client() as never, { settings: ['app.tenant'] }), /pg\.Pool/);
});

test("the Slonik interceptor needs Slonik's sql tag and cannot discard", () => {
  assert.throws(() => createSlonikGuardInterceptor({ settings: ['app.tenant'] } as never), /"sql" must be Slonik's sql tag/);
  const sql = { unsafe: () => ({}) };
  assert.throws(
    () => createSlonikGuardInterceptor({ sql, settings: ['app.tenant'], onViolation: 'discard', onReport: () => {} }),
    /"onViolation" must be 'throw' or a function .*only by throwing/,
  );
  assert.throws(
    () => createSlonikGuardInterceptor({ sql, settings: ['app.tenant'], checkTimeoutMs: 100 } as never),
    /"checkTimeoutMs" does not apply to Slonik/,
  );
  const interceptor = createSlonikGuardInterceptor({ sql, settings: ['app.tenant'] });
  assert.equal(typeof interceptor.afterPoolConnection, 'function');
  assert.equal(typeof interceptor.beforePoolConnectionRelease, 'function');
});
