// Catalog rows -> object texts: the SQL each object is read as, its name in
// reports, and where a table's or a role's finding goes. A pure function of
// the rows, so every shape is checked here, also those the fixture database
// cannot hold without touching the whole server (ALTER ROLE ALL).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CatalogSnapshot } from '../../src/db/catalog.ts';
import { analyseObjects, catalogObjects, quoteIdent } from '../../src/db/index.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

const snapshot = (over: Partial<CatalogSnapshot>): CatalogSnapshot => ({
  database: 'app',
  serverVersion: '17.10',
  schemas: ['public'],
  routines: [],
  otherRoutines: 0,
  policies: [],
  tables: [],
  settings: [],
  ...over,
});

test('identifiers are quoted where SQL needs it', { timeout: 10_000 }, () => {
  assert.equal(quoteIdent('jobs'), 'jobs');
  assert.equal(quoteIdent('Jobs'), '"Jobs"');
  assert.equal(quoteIdent('my "odd" table'), '"my ""odd"" table"');
});

test('role, database and ALTER ROLE ALL defaults, each an object whose text parses to the defaults it holds', { timeout: 10_000 }, () => {
  const { settings } = catalogObjects(
    snapshot({
      settings: [
        { role: null, database: null, config: ['app.tenant=1'] },
        { role: null, database: 'app', config: ['app.current_tenant=7', 'search_path="$user", public'] },
        { role: 'Worker', database: null, config: ["app.tenant=it's"] },
        { role: 'Worker', database: 'app', config: ['statement_timeout=30s'] },
      ],
    }),
  );
  assert.deepEqual(
    settings.map((s) => [s.object.display, s.filePath, s.text]),
    [
      ['role "Worker"', 'db:role "Worker"', `ALTER ROLE "Worker" SET app.tenant TO 'it''s';\nALTER ROLE "Worker" IN DATABASE app SET statement_timeout TO '30s';\n`],
      ['database app', 'db:database app', `ALTER DATABASE app SET app.current_tenant TO '7';\nALTER DATABASE app SET search_path TO '"$user", public';\n`],
      ['all roles', 'db:all roles', `ALTER ROLE ALL SET app.tenant TO '1';\n`],
    ],
  );
  for (const s of settings) assert.deepEqual(analyzeSql(s.text).errors, [], s.text);
  const defaults = analyzeSql(settings[0].text).statements.flatMap((s) => s.roleSettings ?? []);
  assert.deepEqual(defaults.map((d) => [d.role, d.database, d.name, d.value]), [['Worker', undefined, 'app.tenant', "it's"], ['Worker', 'app', 'statement_timeout', '30s']]);
});

test('ALTER ROLE ALL with a tenant default is reported as such', { timeout: 10_000 }, () => {
  const { results } = analyseObjects(snapshot({ settings: [{ role: null, database: null, config: ['app.tenant=1'] }] }), activeRules(undefined, allRules));
  assert.deepEqual(results.flatMap((r) => r.messages.map((m) => [r.filePath, m.ruleId, m.messageId, m.line])), [['db:all roles', 'no-tenant-setting-default', 'allRolesDefault', 1]]);
});

test('the removal a default finding suggests names the role and the database as SQL needs them written', { timeout: 10_000 }, () => {
  const { results } = analyseObjects(
    snapshot({
      database: 'My App',
      settings: [
        { role: null, database: 'My App', config: ['app.tenant=1'] },
        { role: 'Worker', database: 'My App', config: ['app.tenant=2'] },
      ],
    }),
    activeRules(undefined, allRules),
  );
  const fixes = results.flatMap((r) => r.messages.map((m) => /Remove it \((.*)\) and set/.exec(m.message)?.[1])).sort();
  assert.deepEqual(fixes, ['ALTER DATABASE "My App" RESET app.tenant', 'ALTER ROLE "Worker" IN DATABASE "My App" RESET app.tenant']);
});

test('a policy is its CREATE POLICY, with the state of its table first; a table finding goes on the line to fix', { timeout: 10_000 }, () => {
  const objects = catalogObjects(
    snapshot({
      policies: [{ schema: 'public', table: 'Orders', name: 'by tenant', permissive: false, cmd: 'r', roles: ['app', '"Odd Role"'], qual: "(tenant_id = 1)", with_check: null }],
      tables: [
        { schema: 'public', name: 'Orders', rls: true, force: false, owner: 'app', app_role_owns: 'owner' },
        { schema: 'public', name: 'drafts', rls: false, force: false, owner: 'app', app_role_owns: null },
      ],
    }),
  );
  const [policy] = objects.policies;
  assert.equal(policy.object.display, 'policy "by tenant" on public."Orders"');
  assert.equal(policy.object.fullyQualifiedName, 'public."Orders"."by tenant"');
  assert.equal(policy.text, 'ALTER TABLE public."Orders" ENABLE ROW LEVEL SECURITY;\nCREATE POLICY "by tenant" ON public."Orders" AS RESTRICTIVE FOR SELECT TO app, "Odd Role"\n  USING ((tenant_id = 1));\n');
  assert.deepEqual(analyzeSql(policy.text).errors, []);
  const [orders, drafts] = objects.tables;
  assert.equal(orders.text.slice(orders.span.start, orders.span.end), 'ALTER TABLE public."Orders" NO FORCE ROW LEVEL SECURITY;');
  assert.equal(drafts.text.slice(drafts.span.start, drafts.span.end), 'ALTER TABLE public.drafts DISABLE ROW LEVEL SECURITY;');
  assert.deepEqual(analyzeSql(orders.text).errors, []);
});

test('a routine is its pg_get_functiondef text, named by its argument types', { timeout: 10_000 }, () => {
  const [routine] = catalogObjects(
    snapshot({ routines: [{ schema: 'billing', name: 'enter', args: 'integer, text', kind: 'p', language: 'plpgsql', definition: 'CREATE OR REPLACE PROCEDURE billing.enter(t integer, s text)\n LANGUAGE plpgsql\nAS $procedure$ begin null; end $procedure$' }] }),
  ).routines;
  assert.deepEqual(routine.object, {
    kind: 'procedure',
    name: 'enter(integer, text)',
    fullyQualifiedName: 'billing.enter(integer, text)',
    display: 'procedure billing.enter(integer, text)',
    artifactPath: 'pgq-audit-db/procedure/billing.enter(integer, text)',
  });
  assert.ok(routine.text.endsWith('$procedure$\n'));
});
