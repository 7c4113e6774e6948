// RuleTester-style cases for the rules SQL alone decides: valid snippets stay
// quiet, invalid ones are reported with their exact position.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runSqlRule, summarize, type ExpectedError } from '../helpers/sql-rule.ts';

interface Cases {
  valid: (string | { code: string; options: Record<string, unknown> })[];
  invalid: { code: string; options?: Record<string, unknown>; errors: ExpectedError[]; note?: string }[];
}

function ruleCases(ruleId: string, cases: Cases): void {
  describe(ruleId, () => {
    for (const valid of cases.valid) {
      const { code, options } = typeof valid === 'string' ? { code: valid, options: undefined } : valid;
      test(`valid: ${code.slice(0, 70)}`, () => {
        assert.deepEqual(summarize(runSqlRule(ruleId, code, options)), []);
      });
    }
    for (const invalid of cases.invalid) {
      test(`invalid: ${invalid.note ?? invalid.code.slice(0, 70)}`, () => {
        assert.deepEqual(summarize(runSqlRule(ruleId, invalid.code, invalid.options)), invalid.errors);
      });
    }
  });
}

ruleCases('no-session-tenant-setting', {
  valid: [
    "SET LOCAL app.tenant = '1'",
    "select set_config('app.tenant', '1', true)",
    "select set_config('app.tenant', $1, $2)", // level unknown: not reported
    'RESET app.tenant',
    'RESET ALL',
    "SET search_path = ''", // a script's own session (pg_dump header)
    "SET statement_timeout = '5s'",
    "SET pg_stat_statements.track = 'all'",
    "create function f() returns int language sql set search_path = public as 'select 1'",
    "alter role worker set app.tenant = '0'",
    { code: "SET app.tenant = '1'", options: { settings: ['app.org*'] } },
    // A query file that also offers the reset of what it writes: the application pairs them (checkout / release).
    "-- name: Enter :exec\nselect set_config('app.tenant', $1, false);\n-- name: Leave :exec\nRESET app.tenant;",
    "-- name: Enter :exec\nSET app.tenant = '1';\n-- name: Leave :exec\nselect set_config('app.tenant', NULL, false);",
    "-- name: enter\nselect set_config('app.tenant', $1, false);\n-- name: leave\nDISCARD ALL;",
    "-- name: enter\nselect set_config('app.tenant', $1, false);\n-- name: leave\nRESET ALL;",
  ],
  invalid: [
    {
      code: "-- name: Enter :exec\nselect set_config('app.tenant', $1, false);\n-- name: Leave :exec\nRESET app.org;",
      errors: [{ messageId: 'session', line: 2, column: 8, endLine: 2, endColumn: 18 }],
      note: "a query file's reset of another setting does not pair with this write",
    },
    {
      code: "SET app.tenant = '1';\nRESET app.tenant;",
      errors: [{ messageId: 'session', line: 1, column: 1, endLine: 1, endColumn: 21 }],
      note: 'a plain script: the RESET is not a query the application runs on its own',
    },
    {
      code: "-- name: enter\nselect set_config('app.tenant', $1, false);\n-- name: leave\nselect set_config('app.tenant', $1, false);",
      errors: [
        { messageId: 'session', line: 2, column: 8, endLine: 2, endColumn: 18 },
        { messageId: 'session', line: 4, column: 8, endLine: 4, endColumn: 18 },
      ],
      note: 'a write of a value the caller passes is no reset',
    },
    { code: "SET app.tenant = '1'", errors: [{ messageId: 'session', line: 1, column: 1, endLine: 1, endColumn: 21 }] },
    { code: "SET SESSION app.tenant TO '1'", errors: [{ messageId: 'session', line: 1, column: 1, endLine: 1, endColumn: 30 }] },
    {
      code: "select 1;\nselect set_config('app.tenant', $1, false)",
      errors: [{ messageId: 'session', line: 2, column: 8, endLine: 2, endColumn: 18 }],
      note: 'set_config with false, position on the second line',
    },
    {
      code: "select set_config('app.tenant', 'x', 'off')",
      errors: [{ messageId: 'session', line: 1, column: 8, endLine: 1, endColumn: 18 }],
      note: "a text 'off' is false to PostgreSQL",
    },
    {
      code: "SET app.org_id = '1'",
      options: { settings: ['app.org*'] },
      errors: [{ messageId: 'session', line: 1, column: 1, endLine: 1, endColumn: 21 }],
    },
    {
      code: "do $$ begin perform set_config('app.tenant', '1', false); end $$",
      errors: [{ messageId: 'routine', line: 1, column: 21, endLine: 1, endColumn: 31 }],
      note: 'PERFORM in a DO block',
    },
    {
      code: "create function f() returns void language plpgsql as $$\nbegin\n  set role tenant_7;\nend $$",
      errors: [{ messageId: 'routine', line: 3, column: 3, endLine: 3, endColumn: 20 }],
      note: 'SET ROLE in a function body',
    },
    {
      code: "select 'é', set_config('app.tenant', 'x', false)",
      errors: [{ messageId: 'session', line: 1, column: 13, endLine: 1, endColumn: 23 }],
      note: 'UTF-8 byte offsets map back to UTF-16 columns',
    },
  ],
});

ruleCases('require-nullif-on-setting-cast', {
  valid: [
    "select nullif(current_setting('app.tenant', true), '')::int",
    "select coalesce(nullif(current_setting('app.tenant', true), ''), '0')::int",
    "select current_setting('app.tenant', true)",
    "select current_setting('app.tenant', true)::text",
    "select current_setting('max_connections')::int",
    "create policy p on t using (tenant_id = nullif(current_setting('app.tenant', true), '')::int)",
    // Guards that keep '' from the cast.
    "select case when current_setting('app.tenant', true) = '' then null else current_setting('app.tenant', true)::int end",
    "select case current_setting('app.tenant', true) when '' then null else current_setting('app.tenant', true)::int end",
    "do $$ declare t int; begin t := current_setting('app.tenant', true)::int; exception when others then t := null; end $$",
    // PostgREST sets request.jwt.claims in every request, and before v10 the role claim too.
    "select (current_setting('request.jwt.claims', true)::jsonb ->> 'sub')::uuid",
    "select current_setting('request.jwt.claim.role', true)::regrole",
    // A policy that fails loudly: without missing_ok and without a cast, an unset setting is an error, never '' cast.
    "create policy p on t using (tenant_id::text = current_setting('app.tenant'))",
    // Column defaults that fail loudly: NOT NULL, or no missing_ok.
    "create table t (id int, tenant_id uuid not null default current_setting('app.tenant')::uuid)",
    "create table t (id int, tenant_id int default current_setting('app.tenant')::int)",
    "create table t (id int, tenant_id uuid primary key default nullif(current_setting('app.tenant', true), '')::uuid)",
    "create table t (tenant_id uuid default current_setting('app.tenant', true)::uuid); alter table t alter column tenant_id set not null",
  ],
  invalid: [
    {
      code: "select current_setting('app.tenant', true)::int",
      errors: [{ messageId: 'castWithoutNullif', line: 1, column: 8, endLine: 1, endColumn: 48 }],
    },
    {
      code: "select cast(current_setting('app.tenant', true) as uuid)",
      errors: [{ messageId: 'castWithoutNullif', line: 1, column: 8, endLine: 1, endColumn: 56 }],
    },
    {
      code: "create policy p on t using (tenant_id = current_setting('app.tenant')::int)",
      errors: [{ messageId: 'policyCastWithoutNullif', line: 1, column: 41, endLine: 1, endColumn: 75 }],
      note: 'one finding per cast: a policy cast without missing_ok and without nullif',
    },
    {
      code: "select case when current_setting('app.tenant', true) is null then null else current_setting('app.tenant', true)::int end",
      errors: [{ messageId: 'castWithoutNullif', line: 1, column: 77, endLine: 1, endColumn: 117 }],
      note: 'a CASE on IS NULL does not keep the empty string out',
    },
    {
      code: "select (current_setting('request.jwt.claims', true)::jsonb ->> 'sub')::uuid",
      options: { requestSettings: [] },
      errors: [{ messageId: 'castWithoutNullif', line: 1, column: 9, endLine: 1, endColumn: 59 }],
      note: 'requestSettings: [] checks request.* like any custom setting',
    },
    {
      code: "select current_setting('request.jwt.claim.user_id', true)::int, current_setting('request.header.x-org', true)::uuid",
      errors: [
        { messageId: 'castWithoutNullif', line: 1, column: 8, endLine: 1, endColumn: 63 },
        { messageId: 'castWithoutNullif', line: 1, column: 65, endLine: 1, endColumn: 116 },
      ],
      note: "PostgREST's per-claim and per-header settings are written only in the requests that carry them: the others read ''",
    },
    {
      code: "create table t (id int,\n  tenant_id uuid default current_setting('app.tenant', true)::uuid,\n  org text default current_setting('app.org'))",
      errors: [
        { messageId: 'defaultSilentNull', line: 2, column: 26, endLine: 2, endColumn: 67 },
        { messageId: 'defaultEmptyString', line: 3, column: 20, endLine: 3, endColumn: 35 },
      ],
      note: 'defaults that store a row of no tenant without an error, once per expression',
    },
  ],
});

const queueTable = 'create table jobs (id int, tenant_id int); alter table jobs enable row level security;\n';
ruleCases('no-tenant-policy-on-queue', {
  valid: [
    "create policy p on invoices using (tenant_id = nullif(current_setting('app.tenant', true), '')::int); alter table invoices enable row level security",
    // A policy without ENABLE ROW LEVEL SECURITY in the file filters nothing yet (cross-file: the project pass).
    "create policy p on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int)",
    `${queueTable}create policy p on jobs using (current_user = 'worker')`,
    {
      code: `${queueTable}create policy p on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int)`,
      options: { queueTables: ['outbox'] },
    },
    // A name alone never makes a queue: a table named jobs that nothing claims is a table.
    `${queueTable}create policy p on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int)`,
    // The claimed table is the queue; jobs named tables that are not claimed are not.
    "select id from work_items for update skip locked limit 1; alter table jobs enable row level security; create policy p on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int)",
  ],
  invalid: [
    {
      code: "alter table work_items enable row level security;\ncreate policy p on work_items using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);\nselect id from work_items for update skip locked limit 1",
      errors: [{ messageId: 'tenantPolicyOnQueue', line: 2, column: 1, endLine: 2, endColumn: 103 }],
      note: 'a table the file claims with SKIP LOCKED is a queue whatever its name',
    },
  ],
});

ruleCases('no-discard-all-with-prepared-statements', {
  valid: ['DISCARD ALL', 'BEGIN; DISCARD PLANS; COMMIT', 'BEGIN; COMMIT; DISCARD ALL', 'BEGIN; RESET app.tenant; COMMIT'],
  invalid: [
    { code: 'BEGIN;\nDISCARD ALL;\nCOMMIT;', errors: [{ messageId: 'inTransaction', line: 2, column: 1, endLine: 2, endColumn: 12 }] },
    { code: 'START TRANSACTION; discard all; END;', errors: [{ messageId: 'inTransaction', line: 1, column: 20, endLine: 1, endColumn: 31 }] },
    {
      code: "create procedure p() language plpgsql as $$ begin execute 'DISCARD ALL'; end $$",
      errors: [{ messageId: 'inRoutine', line: 1, column: 60, endLine: 1, endColumn: 71 }],
    },
  ],
});
