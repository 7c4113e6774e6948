import { defineRule, resolveWrite, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel, type SqlSite } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { bareTable, queueFactsOf, refMaker, type Ref } from '../src/model/queue.ts';
import type { Span, StatementFacts } from '../src/sql/index.ts';
import { UPDATE_SET } from '../src/model/triggers.ts';

interface Options {
  settings?: string[];
  queueTables?: string[];
}

interface PolicyFacts {
  /** Tables the code claims rows from (FOR UPDATE SKIP LOCKED, a lease UPDATE ... RETURNING), and whether the tenant is set first. */
  claims: { table: string; at: Ref; tenantFirst: boolean }[];
  /** ENABLE ROW LEVEL SECURITY. */
  rls: { table: string; at: Ref }[];
  /** Policies that read a tenant setting. */
  policies: { name: string; table: string; setting: string; at: Ref }[];
}

const sameSpan = (a: Span, b: Span) => a.start === b.start && a.end === b.end;

function read(file: FileModel, options: Options): PolicyFacts {
  const isTenant = tenantSettingMatcher(options.settings);
  const ref = refMaker(file.text);
  const facts: PolicyFacts = { claims: [], rls: [], policies: [] };
  const statements = [...statementsOf(file)];
  const leaseClaims = queueFactsOf(file).claims;
  // A per-tenant worker: the tenant is set in the same transaction (or the same call) before the claim.
  const tenantSetBefore = (site: SqlSite, statement: StatementFacts) =>
    statements.some(
      (other) =>
        other.statement.span.start < statement.span.start &&
        (other.site === site || (site.scope.kind === 'transaction' && other.site.scope.kind === 'transaction' && other.site.scope.id === site.scope.id)) &&
        other.statement.settingWrites.some((w) => {
          if (w.via !== 'set' && w.via !== 'set_config') return false;
          const resolved = resolveWrite(w, other.site.params);
          return isTenant(resolved.name) && !resolved.clears;
        }),
    );
  for (const { site, statement } of statements) {
    const claimed = new Set<string>();
    for (const lock of statement.lockingReads) {
      if (!lock.skipLocked) continue;
      for (const t of lock.tables) {
        claimed.add(bareTable(t));
        facts.claims.push({ table: bareTable(t), at: ref(lock.span), tenantFirst: tenantSetBefore(site, statement) });
      }
    }
    for (const claim of leaseClaims) {
      if (claimed.has(claim.table) || !statement.rowWrites.some((w) => sameSpan(w.span, claim.at.span))) continue;
      facts.claims.push({ table: claim.table, at: claim.at, tenantFirst: tenantSetBefore(site, statement) });
    }
    for (const rls of statement.rowSecurity) if (rls.action === 'enable') facts.rls.push({ table: bareTable(rls.table), at: ref(rls.span) });
    for (const policy of statement.policies) {
      const setting = policy.settingsRead.find((r) => isTenant(r.setting));
      if (setting) facts.policies.push({ name: policy.name, table: bareTable(policy.table), setting: setting.setting ?? '', at: ref(policy.span) });
    }
  }
  return facts;
}

export default defineRule<Options, PolicyFacts>({
  id: 'no-tenant-policy-on-queue',
  description: 'Disallow row-level security policies that filter a job queue by tenant setting',
  messages: {
    tenantPolicyOnQueue:
      "Policy '{{policy}}' filters queue table '{{table}}' by '{{setting}}': a worker claims jobs before it knows their tenant, so under this policy it sees an empty queue and no job runs. Let the worker role bypass it (a permissive policy for the worker, or a queue table without tenant RLS) and set the tenant after the claim.",
    tenantPolicyOnQueueAcross:
      "Policy '{{policy}}' filters queue table '{{table}}' by '{{setting}}' ({{where}}): a worker claims jobs before it knows their tenant, so under this policy it sees an empty queue and no job runs. Let the worker role bypass it (a permissive policy for the worker, or a queue table without tenant RLS) and set the tenant after the claim.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: {
    type: 'object',
    properties: {
      settings: settingsOptionSchema,
      queueTables: {
        type: 'array',
        items: { type: 'string' },
        description: 'Names of the queue tables. Default: the tables the code claims rows from (FOR UPDATE SKIP LOCKED, a lease UPDATE ... RETURNING); a name alone never makes a queue.',
      },
    },
    additionalProperties: false,
  },
  defaultOptions: {},
  // pgpolicy, skiplocked, skip_locked: Drizzle's pgPolicy(...), the builders' .skipLocked(), the Python ORMs' skip_locked=True.
  triggers: ['create policy', 'skip locked', 'row level security', UPDATE_SET, 'pgpolicy', 'skiplocked', 'skip_locked'],
  // The policy, the ENABLE ROW LEVEL SECURITY and the claim may be in three files (migrations/ and queue.ts).
  ...crossFileParts<Options, PolicyFacts>(read, (files, { options, place }) => {
    const claims = files.flatMap(({ file, facts }) => facts.claims.map((c) => ({ file, ...c })));
    const rls = files.flatMap(({ file, facts }) => facts.rls.map((r) => ({ file, ...r })));
    const queueTables = options.queueTables?.map(bareTable);
    const out: Decision[] = [];
    for (const { file, facts } of files) {
      for (const policy of facts.policies) {
        const enabled = rls.find((r) => r.table === policy.table && r.file === file) ?? rls.find((r) => r.table === policy.table);
        if (!enabled) continue;
        const tableClaims = claims.filter((c) => c.table === policy.table);
        // A per-tenant worker sets the tenant before it claims: the policy is what it wants. Quiet when every claim does.
        const blind = tableClaims.filter((c) => !c.tenantFirst);
        const isQueue = queueTables ? queueTables.includes(policy.table) : blind.length > 0;
        if (!isQueue) continue;
        const claim = blind.find((c) => c.file === file) ?? blind[0];
        const data = { policy: policy.name, table: policy.table, setting: policy.setting };
        const elsewhere = [
          claim && claim.file !== file && !queueTables ? `claimed at ${place(claim.file, claim.at, file)}` : undefined,
          enabled.file !== file ? `row level security enabled at ${place(enabled.file, enabled.at, file)}` : undefined,
        ].filter(Boolean);
        out.push(
          elsewhere.length === 0
            ? { file, at: policy.at, messageId: 'tenantPolicyOnQueue', data }
            : { file, at: policy.at, messageId: 'tenantPolicyOnQueueAcross', data: { ...data, where: elsewhere.join(', ') } },
        );
      }
    }
    return out;
  }),
});
