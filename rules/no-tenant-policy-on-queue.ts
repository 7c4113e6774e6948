import { defineRule, settingsOptionSchema, statementsOf, tenantSettingMatcher } from '../src/model/index.ts';

interface Options {
  settings?: string[];
  queueTables?: string[];
}

/** Table names that read as a queue when no claim of the table is seen. */
const QUEUE_NAME = /(^|_)(jobs|job_queue|queue|queues|tasks|task_queue|messages|outbox)$/;

export default defineRule<Options>({
  id: 'no-tenant-policy-on-queue',
  description: 'Disallow row-level security policies that filter a job queue by tenant setting',
  messages: {
    tenantPolicyOnQueue:
      "Policy '{{policy}}' filters queue table '{{table}}' by '{{setting}}': a worker claims jobs before it knows their tenant, so under this policy it sees an empty queue and no job runs. Let the worker role bypass it (a permissive policy for the worker, or a queue table without tenant RLS) and set the tenant after the claim.",
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
  triggers: ['create policy'],
  check({ file, options, report }) {
    const isTenant = tenantSettingMatcher(options.settings);
    const claimed = new Set<string>();
    const rlsOn = new Set<string>();
    for (const { statement } of statementsOf(file)) {
      for (const read of statement.lockingReads) if (read.skipLocked) read.tables.forEach((t) => claimed.add(bare(t)));
      for (const rls of statement.rowSecurity) if (rls.action === 'enable') rlsOn.add(bare(rls.table));
    }
    const isQueue = (table: string) =>
      options.queueTables ? options.queueTables.map(bare).includes(table) : claimed.has(table) || (claimed.size === 0 && QUEUE_NAME.test(table));
    for (const { statement } of statementsOf(file)) {
      for (const policy of statement.policies) {
        const table = bare(policy.table);
        if (!rlsOn.has(table) || !isQueue(table)) continue;
        const setting = policy.settingsRead.find((r) => isTenant(r.setting));
        if (setting) report({ messageId: 'tenantPolicyOnQueue', data: { policy: policy.name, table, setting: setting.setting ?? '' }, span: policy.span });
      }
    }
  },
});

function bare(table: string): string {
  return table.slice(table.lastIndexOf('.') + 1);
}
