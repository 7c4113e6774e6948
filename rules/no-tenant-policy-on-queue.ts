import { defineRule, resolveWrite, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel, type FunctionRef, type SqlSite } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { ATTEMPT_COLUMN, LEASE_END_COLUMN, queueFactsOf, refMaker, STATUS_COLUMN, type Ref } from '../src/model/queue.ts';
import { DEFAULT_SCHEMA, tableKey, tablesOf, writtenName, type TableName } from '../src/model/tables.ts';
import type { Span, StatementFacts } from '../src/sql/index.ts';
import { UPDATE_SET } from '../src/model/triggers.ts';

interface Options {
  settings?: string[];
  queueTables?: string[];
}

interface PolicyFacts {
  /** Tables the code claims rows from (FOR UPDATE SKIP LOCKED, a lease UPDATE ... RETURNING), and whether the tenant is set first. */
  claims: (TableName & { at: Ref; tenantFirst: boolean; inCallback?: SqlSite['runsInCallback']; tenantSettings?: string[] })[];
  /** Where a function runs its callers' callback on a connection: whether it set the tenant on it first, in the same transaction. */
  callbackRuns?: (FunctionRef & { parameter: number; connectionArgument: number; tenantFirst: boolean; tenantSettings?: string[] })[];
  /** ENABLE ROW LEVEL SECURITY. */
  rls: (TableName & { at: Ref })[];
  /** Policies that read a tenant setting. */
  policies: (TableName & { name: string; setting: string; at: Ref })[];
  /** Tables created with the lease design's shape: a status, an attempt counter and a lease end (`locked_until`). */
  leaseShaped?: TableName[];
}

/** The seed's lease design by its columns: a status, an attempt counter and a lease end. A name alone never makes a queue. */
function hasLeaseShape(columns: readonly string[]): boolean {
  return columns.some((c) => STATUS_COLUMN.test(c)) && columns.some((c) => ATTEMPT_COLUMN.test(c)) && columns.some((c) => LEASE_END_COLUMN.test(c));
}

const sameSpan = (a: Span, b: Span) => a.start === b.start && a.end === b.end;
/** The name as written, schema included when written: `billing.jobs` and `jobs` are told apart per unit later. */
const nameOf = (table: string, schema: string | undefined): TableName => (schema ? { table, schema } : { table });

function read(file: FileModel, options: Options): PolicyFacts {
  const isTenant = tenantSettingMatcher(options.settings);
  const ref = refMaker(file.text);
  const facts: PolicyFacts = { claims: [], rls: [], policies: [] };
  const statements = [...statementsOf(file)];
  // A claim that rests on a function defined elsewhere (`leaseBy`) is not known to be one here.
  const leaseClaims = queueFactsOf(file).claims.filter((c) => !c.leaseBy);
  // A per-tenant worker: the tenant is set in the same transaction (or the same call) before the claim.
  // The tenant settings a statement writes (`?` for a name the code gives): the policy's own must be among them.
  const tenantWrites = (other: (typeof statements)[number]) =>
    other.statement.settingWrites.flatMap((w) => {
      if (w.via !== 'set' && w.via !== 'set_config') return [];
      const resolved = resolveWrite(w, other.site.params);
      return isTenant(resolved.name) && !resolved.clears ? [resolved.name?.toLowerCase() ?? UNKNOWN_SETTING] : [];
    });
  const setsTenant = (other: (typeof statements)[number]) => tenantWrites(other).length > 0;
  const sameTransaction = (a: SqlSite['scope'], b: SqlSite['scope']) => a.kind === 'transaction' && b.kind === 'transaction' && a.id === b.id;
  const tenantSetBefore = (site: SqlSite, statement: StatementFacts) =>
    statements.filter((other) => other.statement.span.start < statement.span.start && (other.site === site || sameTransaction(site.scope, other.site.scope)) && setsTenant(other));
  const settingsOf = (set: typeof statements) => (set.length > 0 ? { tenantSettings: [...new Set(set.flatMap(tenantWrites))] } : {});
  for (const run of file.callbackCalls ?? []) {
    const set = statements.filter((other) => other.statement.span.start < run.span.start && sameTransaction(run.scope, other.site.scope) && setsTenant(other));
    (facts.callbackRuns ??= []).push({ ...run.function, parameter: run.parameter, connectionArgument: run.connectionArgument, tenantFirst: set.length > 0, ...settingsOf(set) });
  }
  for (const { site, statement } of statements) {
    const claimed = new Set<string>();
    for (const lock of statement.lockingReads) {
      if (!lock.skipLocked) continue;
      for (const name of tablesOf(lock)) {
        claimed.add(writtenName(name));
        const set = tenantSetBefore(site, statement);
        facts.claims.push({ ...name, at: ref(lock.span), tenantFirst: set.length > 0, ...settingsOf(set), ...inCallback(site) });
      }
    }
    for (const claim of leaseClaims) {
      const name = nameOf(claim.table, claim.schema);
      if (claimed.has(writtenName(name)) || !statement.rowWrites.some((w) => sameSpan(w.span, claim.at.span))) continue;
      const set = tenantSetBefore(site, statement);
      facts.claims.push({ ...name, at: claim.at, tenantFirst: set.length > 0, ...settingsOf(set), ...inCallback(site) });
    }
    const created = statement.createdTable;
    if (created && hasLeaseShape(created.columns)) (facts.leaseShaped ??= []).push(nameOf(created.table, created.schema));
    for (const rls of statement.rowSecurity) if (rls.action === 'enable') facts.rls.push({ ...nameOf(rls.table, rls.schema), at: ref(rls.span) });
    for (const policy of statement.policies) {
      const setting = policy.settingsRead.find((r) => isTenant(r.setting));
      if (setting) facts.policies.push({ ...nameOf(policy.table, policy.schema), name: policy.name, setting: setting.setting ?? '', at: ref(policy.span) });
    }
  }
  return facts;
}

/** A tenant setting whose name the code gives: it may be the policy's. */
const UNKNOWN_SETTING = '?';

/** The worker set the policy's setting (or one whose name it cannot read) before it claimed. */
const setsPolicySetting = (run: { tenantFirst: boolean; tenantSettings?: string[] }, setting: string) =>
  run.tenantFirst && (!run.tenantSettings || setting === '' || run.tenantSettings.some((s) => s === UNKNOWN_SETTING || s === setting.toLowerCase()));

const inCallback = (site: SqlSite) => (site.runsInCallback ? { inCallback: site.runsInCallback } : {});

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
    // Tables by their schema-qualified name: an unqualified name is in its file's unit's default schema.
    const claims = files.flatMap(({ file, facts, defaultSchema }) => facts.claims.map((c) => ({ file, key: tableKey(c, defaultSchema), ...c })));
    const rls = files.flatMap(({ file, facts, defaultSchema }) => facts.rls.map((r) => ({ file, key: tableKey(r, defaultSchema), ...r })));
    const leaseShaped = new Set(files.flatMap(({ facts, defaultSchema }) => (facts.leaseShaped ?? []).map((t) => tableKey(t, defaultSchema))));
    // A claim in a callback of a project function (withTenant(tenantId, async (client) => claim)): per-tenant when
    // every place that function runs the callback, on the connection the claim uses, set the tenant there first.
    const callbackRuns = files.flatMap(({ facts }) => facts.callbackRuns ?? []);
    const runsWithTenant = (via: NonNullable<SqlSite['runsInCallback']>, setting: string) => {
      const runs = callbackRuns.filter(
        (r) => r.module === via.function.module && r.at === via.function.at && r.parameter === via.argument && r.connectionArgument === via.parameter,
      );
      return runs.length > 0 && runs.every((r) => setsPolicySetting(r, setting));
    };
    const out: Decision[] = [];
    for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
      // The queueTables option names tables as `jobs` or `billing.jobs`.
      const queueTables = options.queueTables?.map((t) => (t.includes('.') ? t.toLowerCase() : `${defaultSchema}.${t.toLowerCase()}`));
      for (const policy of facts.policies) {
        const key = tableKey(policy, defaultSchema);
        const enabled = rls.find((r) => r.key === key && r.file === file) ?? rls.find((r) => r.key === key);
        if (!enabled) continue;
        const tableClaims = claims.filter((c) => c.key === key);
        // A per-tenant worker sets the tenant before it claims: the policy is what it wants. Quiet when every claim does.
        // A worker that set another tenant setting than the one the policy reads is blind to it too.
        const blind = tableClaims.filter((c) => !setsPolicySetting(c, policy.setting) && !(c.inCallback && runsWithTenant(c.inCallback, policy.setting)));
        // With no claim in the scanned files (`pgq-audit scan ./migrations`), the lease design's columns make it a queue.
        const shaped = tableClaims.length === 0 && leaseShaped.has(key);
        const isQueue = queueTables ? queueTables.includes(key) : blind.length > 0 || shaped;
        if (!isQueue) continue;
        const claim = blind.find((c) => c.file === file) ?? blind[0];
        const data = { policy: policy.name, table: writtenName(policy), setting: policy.setting };
        const elsewhere = [
          claim && claim.file !== file && !queueTables ? `claimed at ${place(claim.file, claim.at, file)}` : undefined,
          claim?.tenantSettings ? `the worker sets ${claim.tenantSettings.map((t) => `'${t}'`).join(', ')} before it claims, not '${policy.setting}'` : undefined,
          shaped && !claim && !queueTables ? 'a queue by its columns: a status, an attempt counter and a lease end; its claim is not in the scanned files' : undefined,
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
