// A boolean setting written at session level leaks a flag, not a tenant: its
// message says so (issue #28: `app.is_platform_admin = 'false'` was said to
// make the next job "run as this tenant and read its rows").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSqlRule } from '../helpers/sql-rule.ts';

test('a session-level flag is described as a flag that stays set', () => {
  for (const [code, value] of [
    ["SET app.is_platform_admin = 'false'", "'false'"],
    ["select set_config('app.is_platform_admin', 'true', false)", "'true'"],
    ['SET app.bypass_rls TO on', "'on'"],
  ]) {
    const [finding] = runSqlRule('no-session-tenant-setting', code);
    assert.equal(finding?.messageId, 'sessionFlag', code);
    assert.match(finding.message, new RegExp(`the flag stays ${value} for every later job on this pooled connection`), code);
    assert.doesNotMatch(finding.message, /runs as this tenant/, code);
  }
});

test('a tenant id is still a tenant, even a numeric one', () => {
  for (const code of ["SET app.tenant = '1'", "select set_config('app.tenant', 'acme', false)", "select set_config('app.tenant', $1, false)"]) {
    const [finding] = runSqlRule('no-session-tenant-setting', code);
    assert.equal(finding?.messageId, 'session', code);
    assert.match(finding.message, /runs as this tenant and reads its rows/, code);
  }
});
