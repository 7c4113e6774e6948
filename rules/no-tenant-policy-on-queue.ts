import { defineRule, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { bareTable, refMaker, type Ref } from '../src/model/queue.ts';

interface Options {
  settings?: string[];
  queueTables?: string[];
}

/** Table names that read as a queue when no claim of the table is seen. */
const QUEUE_NAME = /(^|_)(jobs|job_queue|queue|queues|tasks|task_queue|messages|outbox)$/;

interface PolicyFacts {
  /** Tables claimed with FOR UPDATE SKIP LOCKED. */
  claims: { table: string; at: Ref }[];
  /** ENABLE ROW LEVEL SECURITY. */
  rls: { table: string; at: Ref }[];
  /** Policies that read a tenant setting. */
  policies: { name: string; table: string; setting: string; at: Ref }[];
}

function read(file: FileModel, options: Options): PolicyFacts {
  const isTenant = tenantSettingMatcher(options.settings);
  const ref = refMaker(file.text);
  const facts: PolicyFacts = { claims: [], rls: [], policies: [] };
  for (const { statement } of statementsOf(file)) {
    for (const read of statement.lockingReads) {
      if (read.skipLocked) for (const t of read.tables) facts.claims.push({ table: bareTable(t), at: ref(read.span) });
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
        description: 'Names of the queue tables. Default: tables the code claims with FOR UPDATE SKIP LOCKED, else tables named like jobs, queue or tasks.',
      },
    },
    additionalProperties: false,
  },
  defaultOptions: {},
  triggers: ['create policy', 'skip locked', 'row level security'],
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
        const claim = claims.find((c) => c.table === policy.table && c.file === file) ?? claims.find((c) => c.table === policy.table);
        const isQueue = queueTables ? queueTables.includes(policy.table) : claim !== undefined || (claims.length === 0 && QUEUE_NAME.test(policy.table));
        if (!isQueue) continue;
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
