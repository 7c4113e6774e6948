import { defineRule, IDENTITY_SETTINGS, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { quoteIdent, quoteSettingName } from '../src/model/identifiers.ts';
import { bareTable, refMaker, type Ref } from '../src/model/queue.ts';

interface Options {
  settings?: string[];
}

interface DefaultsFacts {
  /** Defaults stored with ALTER ROLE / ALTER DATABASE ... SET (and removed with RESET). */
  defaults: { name: string; value?: string; role?: string; database?: string; action: 'set' | 'reset'; at: Ref }[];
  /** Settings a policy reads: the evidence that a setting carries the tenant. */
  policyReads: { setting: string; policy: string; table: string }[];
}

/** A setting whose name says it carries the tenant (app.tenant, app.current_tenant_id). */
const TENANT_NAME = /tenant/;

function read(file: FileModel): DefaultsFacts {
  const ref = refMaker(file.text);
  const facts: DefaultsFacts = { defaults: [], policyReads: [] };
  for (const { statement } of statementsOf(file)) {
    for (const d of statement.roleSettings ?? []) {
      if (d.name === undefined && d.action === 'set') continue;
      facts.defaults.push({
        name: d.name ?? '*',
        ...(d.value !== undefined ? { value: d.value } : {}),
        ...(d.role !== undefined ? { role: d.role } : {}),
        ...(d.database !== undefined ? { database: d.database } : {}),
        action: d.action,
        at: ref(d.span),
      });
    }
    for (const policy of statement.policies) {
      for (const r of policy.settingsRead) if (r.setting) facts.policyReads.push({ setting: r.setting, policy: policy.name, table: bareTable(policy.table) });
    }
  }
  return facts;
}

/** A name filled in at run time, as the analyzer shows it: `{current_database()}` (src/sql/dynamic.ts). */
const RUN_TIME_NAME = /^\{(.+)\}$/s;

/**
 * The statement that removes the default, to paste. A role or database named at run time
 * (`format('ALTER DATABASE %I SET ...', current_database())`) is named the same way again.
 */
function resetStatement(setting: string, role: string | undefined, database: string | undefined): string {
  const names: string[] = [];
  const name = (n: string) => {
    const runTime = RUN_TIME_NAME.exec(n)?.[1];
    if (runTime === undefined) return quoteIdent(n);
    names.push(runTime);
    return '%I';
  };
  const target = role !== undefined ? `ALTER ROLE ${name(role)}${database !== undefined ? ` IN DATABASE ${name(database)}` : ''}` : database !== undefined ? `ALTER DATABASE ${name(database)}` : 'ALTER ROLE ALL';
  const statement = `${target} RESET ${quoteSettingName(setting)}`;
  if (names.length === 0) return statement;
  return `DO $$ BEGIN EXECUTE format('${statement.replace(/'/g, "''")}', ${names.join(', ')}); END $$`;
}

/** Role or database per tenant: `ALTER ROLE tenant_42 SET app.tenant = '42'` gives that role its own tenant. */
function namesItsOwnTenant(value: string, ...names: (string | undefined)[]): boolean {
  const v = value.toLowerCase();
  return names.some((name) => name !== undefined && (name.toLowerCase() === v || name.toLowerCase().split(/[^a-z0-9]+/).includes(v)));
}

export default defineRule<Options, DefaultsFacts>({
  id: 'no-tenant-setting-default',
  description: 'Disallow role and database defaults for tenant settings',
  messages: {
    roleDefault:
      "Role {{role}} has '{{setting}}' = '{{value}}' as a default{{inDatabase}} ({{evidence}}): every new connection of {{role}} starts as tenant '{{value}}', and RESET, DISCARD ALL and the end of each SET LOCAL transaction put it back to '{{value}}', not to no tenant, so a query that sets no tenant reads the rows of tenant '{{value}}'. Remove it ({{reset}}) and set the tenant in each job's transaction.",
    databaseDefault:
      "Database {{database}} has '{{setting}}' = '{{value}}' as a default ({{evidence}}): every new connection to it, of any role, starts as tenant '{{value}}', and RESET, DISCARD ALL and the end of each SET LOCAL transaction put it back to '{{value}}', not to no tenant, so a query that sets no tenant reads the rows of tenant '{{value}}'. Remove it ({{reset}}) and set the tenant in each job's transaction.",
    allRolesDefault:
      "Every role has '{{setting}}' = '{{value}}' as a default (ALTER ROLE ALL; {{evidence}}): every new connection starts as tenant '{{value}}', and RESET, DISCARD ALL and the end of each SET LOCAL transaction put it back to '{{value}}', not to no tenant, so a query that sets no tenant reads the rows of tenant '{{value}}'. Remove it ({{reset}}) and set the tenant in each job's transaction.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: {
    type: 'object',
    properties: {
      settings: {
        ...settingsOptionSchema,
        description:
          "Globs of the settings that carry tenant context. Default: custom settings whose name contains 'tenant', and any custom setting a row level security policy reads.",
      },
    },
    additionalProperties: false,
  },
  defaultOptions: {},
  triggers: ['alter role', 'alter user', 'alter database', 'create policy'],
  // The default is in one migration (or in the catalog), the policy that reads the setting in another.
  ...crossFileParts<Options, DefaultsFacts>(read, (files, { options }) => {
    const configured = options.settings && options.settings.length > 0 ? tenantSettingMatcher(options.settings) : undefined;
    const isDefaultTenant = tenantSettingMatcher(undefined);
    const reads = files.flatMap(({ facts }) => facts.policyReads);
    const resets = files.flatMap(({ facts }) => facts.defaults.filter((d) => d.action === 'reset'));
    const out: Decision[] = [];
    for (const { file, facts } of files) {
      for (const d of facts.defaults) {
        if (d.action !== 'set' || d.value === undefined || d.value.trim() === '') continue; // '' is no tenant
        let evidence: string | undefined;
        if (configured) {
          if (configured(d.name)) evidence = 'a tenant setting by the settings option';
        } else if (isDefaultTenant(d.name) && !IDENTITY_SETTINGS.includes(d.name)) {
          const policy = reads.find((r) => r.setting === d.name);
          if (policy) evidence = `policy ${policy.policy} on ${policy.table} filters rows by it`;
          else if (TENANT_NAME.test(d.name)) evidence = 'its name says it holds the tenant';
        }
        if (!evidence) continue;
        if (namesItsOwnTenant(d.value, d.role, d.database)) continue;
        // A later migration may take the default back out; which runs last is not known, so stay quiet.
        const undone = resets.some((r) => (r.name === d.name || r.name === '*') && r.role === d.role && r.database === d.database);
        if (undone) continue;
        const data = {
          setting: d.name,
          value: d.value,
          evidence,
          role: d.role ?? '',
          database: d.database ?? '',
          inDatabase: d.role !== undefined && d.database ? ` in database ${d.database}` : '',
          reset: resetStatement(d.name, d.role, d.database || undefined),
        };
        const messageId = d.role !== undefined ? 'roleDefault' : d.database !== undefined ? 'databaseDefault' : 'allRolesDefault';
        out.push({ file, at: d.at, messageId, data });
      }
    }
    return out;
  }),
});
