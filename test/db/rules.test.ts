// The two rules pgq-audit db brought: no-tenant-setting-default across the
// files of a project (the policy that makes a setting a tenant setting may be
// in another migration), and require-forced-row-security on the catalog
// facts of a table and a role.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import type { CatalogFacts } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { runSqlRule } from '../helpers/sql-rule.ts';

test('no-tenant-setting-default: a default of a setting that a policy in another migration reads', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-defaults-'));
  try {
    writeFileSync(join(dir, '001_policy.sql'), "alter table invoices enable row level security;\ncreate policy by_org on invoices using (org_id = nullif(current_setting('app.org', true), '')::int);\n");
    writeFileSync(join(dir, '002_default.sql'), "alter role app_worker set app.org = '7';\n");
    const only = { 'no-tenant-setting-default': 'error' as const };
    const rules = Object.fromEntries(activeRules().map(({ rule }) => [rule.id, rule.id in only ? 'error' : 'off'])) as Record<string, 'error' | 'off'>;
    const both = await scan({ paths: [dir], rules, concurrency: 'off' });
    const messages = both.results.flatMap((r) => r.messages.map((m) => ({ file: r.filePath.slice(dir.length + 1), line: m.line, messageId: m.messageId, message: m.message })));
    assert.equal(messages.length, 1, JSON.stringify(messages));
    assert.equal(messages[0].file, '002_default.sql');
    assert.equal(messages[0].messageId, 'roleDefault');
    assert.match(messages[0].message, /policy by_org on invoices filters rows by it/);
    // Alone, nothing says app.org holds the tenant.
    const alone = await scan({ paths: [join(dir, '002_default.sql')], rules, concurrency: 'off' });
    assert.deepEqual(alone.results.flatMap((r) => r.messages), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no-tenant-setting-default: the settings option replaces the evidence', { timeout: 10_000 }, () => {
  assert.equal(runSqlRule('no-tenant-setting-default', "alter role app_worker set app.org = '7';").length, 0);
  assert.deepEqual(
    runSqlRule('no-tenant-setting-default', "alter role app_worker set app.org = '7';", { settings: ['app.org'] }).map((f) => [f.messageId, f.line, f.column]),
    [['roleDefault', 1, 1]],
  );
  assert.equal(runSqlRule('no-tenant-setting-default', "alter role app_worker set app.tenant = '7';", { settings: ['app.org'] }).length, 0);
});

function withCatalog(catalog: CatalogFacts, options?: Record<string, unknown>) {
  const text = 'ALTER TABLE public.t ENABLE ROW LEVEL SECURITY;\n';
  const model = sqlFrontEnd.parse(text, 'db:table public.t', {});
  model.catalog = catalog;
  const rules = Object.fromEntries(activeRules().map(({ rule }) => [rule.id, rule.id === 'require-forced-row-security' ? { severity: 'error' as const, options } : ('off' as const)]));
  return runRules(model, activeRules(rules, allRules)).map((f) => f.messageId);
}

const span = { start: 0, end: 10 };
const tenantPolicy = { name: 'tenant_isolation', settingsRead: ['app.tenant'] };

test('require-forced-row-security: owner not forced, forced, not a tenant policy, not enabled', { timeout: 10_000 }, () => {
  const table = { name: 'public.t', rowSecurity: true, forceRowSecurity: false, owner: 'app', policies: [tenantPolicy], span };
  assert.deepEqual(withCatalog({ tables: [{ ...table, ownedByAppRole: { role: 'app' } }], roles: [] }), ['ownerNotForced']);
  assert.deepEqual(withCatalog({ tables: [{ ...table, ownedByAppRole: { role: 'app' }, forceRowSecurity: true }], roles: [] }), []);
  assert.deepEqual(withCatalog({ tables: [table], roles: [] }), [], 'the app role does not own it');
  assert.deepEqual(withCatalog({ tables: [{ ...table, ownedByAppRole: { role: 'app' }, policies: [{ name: 'own_rows', settingsRead: [] }] }], roles: [] }), []);
  assert.deepEqual(withCatalog({ tables: [{ ...table, rowSecurity: false }], roles: [] }), ['notEnabled']);
  assert.deepEqual(withCatalog({ tables: [{ ...table, ownedByAppRole: { role: 'app' } }], roles: [] }, { settings: ['request.jwt.*'] }), [], 'app.tenant is not a tenant setting by this option');
});

test('require-forced-row-security: a role that bypasses row level security, where tenant policies exist', { timeout: 10_000 }, () => {
  const role = { name: 'app', superuser: false, bypassRls: true, rlsTables: [{ name: 'public.t', policies: [tenantPolicy] }], span };
  assert.deepEqual(withCatalog({ tables: [], roles: [role] }), ['roleBypassesRls']);
  assert.deepEqual(withCatalog({ tables: [], roles: [{ ...role, bypassRls: false, superuser: true }] }), ['roleBypassesRls']);
  assert.deepEqual(withCatalog({ tables: [], roles: [{ ...role, bypassRls: false }] }), []);
  assert.deepEqual(withCatalog({ tables: [], roles: [{ ...role, rlsTables: [] }] }), [], 'no tenant policy to bypass');
});

test('require-forced-row-security: SQL alone never reports (only the catalog knows owners)', { timeout: 10_000 }, () => {
  assert.deepEqual(runSqlRule('require-forced-row-security', "alter table orders owner to app_worker;\nalter table orders enable row level security;\ncreate policy p on orders using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);"), []);
});
