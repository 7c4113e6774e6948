import { defineRule, settingsOptionSchema, statementsOf, tenantSettingMatcher } from '../src/model/index.ts';

interface Options {
  settings?: string[];
}

export default defineRule<Options>({
  id: 'no-local-setting-outside-transaction',
  description: 'Disallow transaction-local settings outside a transaction',
  messages: {
    outsideTransaction:
      "'{{setting}}' is set for the current transaction, but this runs in autocommit: the setting ends with its own statement and the job's next query runs without it (0 rows under RLS, or the wrong tenant's defaults). Open a transaction first and set it inside.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['set_config', 'set local'],
  check({ file, options, report }) {
    const isTenant = tenantSettingMatcher(options.settings);
    for (const { site, statement } of statementsOf(file)) {
      // A statement that is itself a BEGIN ... block in one string runs in that transaction.
      if (site.scope.kind !== 'autocommit' || statement.routine) continue;
      const inlineTransaction = site.analysis.statements.some((s) => s.transaction === 'begin' && s.span.start < statement.span.start);
      if (inlineTransaction) continue;
      for (const write of statement.settingWrites) {
        if (write.level === 'local' && (write.via === 'set' || write.via === 'set_config') && isTenant(write.name)) {
          report({ messageId: 'outsideTransaction', data: { setting: write.name ?? '' }, span: write.span });
        }
      }
    }
  },
});
