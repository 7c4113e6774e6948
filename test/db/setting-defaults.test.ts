// The SQL analyzer reads ALTER ROLE / ALTER DATABASE ... SET as setting
// defaults (what pg_db_role_setting stores), which no-tenant-setting-default
// reads in migrations and in the catalog alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

const defaultsOf = (sql: string) => analyzeSql(sql).statements.flatMap((s) => (s.roleSettings ?? []).map(({ span, ...d }) => ({ ...d, text: sql.slice(span.start, span.end) })));

test('ALTER ROLE and ALTER DATABASE ... SET are defaults, with role, database and value', { timeout: 10_000 }, () => {
  assert.deepEqual(defaultsOf("ALTER ROLE app_worker SET app.tenant = '1';"), [
    { name: 'app.tenant', value: '1', role: 'app_worker', action: 'set', text: "ALTER ROLE app_worker SET app.tenant = '1'" },
  ]);
  assert.deepEqual(defaultsOf('alter user "App" in database appdb set app.tenant to 42'), [
    { name: 'app.tenant', value: '42', role: 'App', database: 'appdb', action: 'set', text: 'alter user "App" in database appdb set app.tenant to 42' },
  ]);
  assert.deepEqual(defaultsOf('ALTER DATABASE appdb SET search_path TO app, public'), [
    { name: 'search_path', value: 'app, public', database: 'appdb', action: 'set', text: 'ALTER DATABASE appdb SET search_path TO app, public' },
  ]);
  assert.deepEqual(defaultsOf("ALTER ROLE ALL SET app.tenant = '1'").map((d) => [d.role, d.database]), [[undefined, undefined]]);
});

test('RESET, RESET ALL and SET ... TO DEFAULT remove a default', { timeout: 10_000 }, () => {
  assert.deepEqual(
    defaultsOf('ALTER ROLE a RESET app.tenant; ALTER ROLE a RESET ALL; ALTER ROLE a SET app.tenant TO DEFAULT;').map((d) => [d.name, d.action, d.value]),
    [
      ['app.tenant', 'reset', undefined],
      [undefined, 'reset', undefined],
      ['app.tenant', 'reset', undefined],
    ],
  );
});

test('statements that are not defaults have none; a plain SET is a setting write, not a default', { timeout: 10_000 }, () => {
  const [set, role, fn] = analyzeSql("SET app.tenant = '1'; ALTER ROLE a WITH BYPASSRLS; CREATE FUNCTION f() RETURNS void LANGUAGE sql SET app.tenant = '1' AS 'select 1';").statements;
  assert.equal(set.roleSettings, undefined);
  assert.equal(set.settingWrites.length, 1);
  assert.equal(role.roleSettings, undefined);
  assert.equal(fn.roleSettings, undefined, "a function's SET clause lasts for its call");
});
