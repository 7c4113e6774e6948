import { defineRule, settingsOptionSchema, tenantSettingMatcher } from '../src/model/index.ts';

interface Options {
  settings?: string[];
}

/** The policies of a table that read a tenant setting. */
function tenantPolicies(policies: readonly { name: string; settingsRead: string[] }[], isTenant: (name: string) => boolean) {
  return policies.filter((p) => p.settingsRead.some(isTenant));
}

export default defineRule<Options>({
  id: 'require-forced-row-security',
  description: 'Require tenant policies to apply to the role the app runs as',
  messages: {
    ownerNotForced:
      "{{role}} {{owns}} {{table}} and row level security on it is not forced: PostgreSQL applies no policy to a table's owner, so {{policies}} never {{filter}} {{role}}'s queries and a job that sets no tenant, or the wrong one, reads every tenant's rows. Run ALTER TABLE {{table}} FORCE ROW LEVEL SECURITY, or run the app as a role that does not own the table. (If {{table}} is a job queue, drop the tenant policy instead: pgq/no-tenant-policy-on-queue.)",
    notEnabled:
      "{{table}} has the tenant {{policies}} but row level security is not enabled on it: no policy applies to anyone, and every role with access reads every tenant's rows. Run ALTER TABLE {{table}} ENABLE ROW LEVEL SECURITY (and FORCE, if the app's role owns it). (If {{table}} is a job queue, drop the tenant policy instead: pgq/no-tenant-policy-on-queue.)",
    roleBypassesRls:
      "{{role}} is {{attribute}}: no row level security policy applies to it, so the tenant policies on {{tables}} never filter its queries and a job that sets no tenant, or the wrong one, reads every tenant's rows. Run the app as a role without {{fix}}.",
  },
  defaultSeverity: 'error',
  recommended: true,
  // Only `pgq-audit db` knows owners and role attributes; the SQL of a repository does not say them.
  languages: ['sql'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['row level security'],
  check({ file, options, report }) {
    if (!file.catalog) return;
    const matcher = tenantSettingMatcher(options.settings);
    const isTenant = (name: string) => matcher(name);
    const names = (policies: { name: string }[]) => (policies.length === 1 ? `policy ${policies[0].name}` : `policies ${policies.map((p) => p.name).join(', ')}`);
    for (const table of file.catalog.tables) {
      const tenant = tenantPolicies(table.policies, isTenant);
      if (tenant.length === 0) continue;
      if (!table.rowSecurity) {
        report({ messageId: 'notEnabled', data: { table: table.name, policies: names(tenant) }, span: table.span });
        continue;
      }
      if (table.ownedByAppRole && !table.forceRowSecurity) {
        const { role, via } = table.ownedByAppRole;
        report({
          messageId: 'ownerNotForced',
          data: { role, owns: via ? `has the privileges of ${via}, which owns` : 'owns', table: table.name, policies: names(tenant), filter: tenant.length === 1 ? 'filters' : 'filter' },
          span: table.span,
        });
      }
    }
    for (const role of file.catalog.roles) {
      if (!role.superuser && !role.bypassRls) continue;
      const tables = role.rlsTables.filter((t) => tenantPolicies(t.policies, isTenant).length > 0).map((t) => t.name);
      if (tables.length === 0) continue;
      const shown = tables.length > 3 ? `${tables.slice(0, 3).join(', ')} and ${tables.length - 3} more` : tables.join(', ');
      report({
        messageId: 'roleBypassesRls',
        data: {
          role: role.name,
          attribute: role.superuser ? 'a superuser' : 'marked BYPASSRLS',
          tables: shown,
          fix: role.superuser ? 'SUPERUSER (and BYPASSRLS)' : `BYPASSRLS (ALTER ROLE ${role.name} NOBYPASSRLS)`,
        },
        span: role.span,
      });
    }
  },
});
