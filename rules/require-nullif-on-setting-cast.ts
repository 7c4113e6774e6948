import { defineRule, isCustomSetting, settingsOptionSchema, statementsOf, tenantSettingMatcher } from '../src/model/index.ts';

interface Options {
  settings?: string[];
}

export default defineRule<Options>({
  id: 'require-nullif-on-setting-cast',
  description: "Require nullif(..., '') around current_setting() before it is cast",
  messages: {
    castWithoutNullif:
      "current_setting('{{setting}}') is cast to {{type}} without nullif(..., ''): once any job on the connection has set '{{setting}}', it reads '' (not NULL) and the cast fails with invalid input syntax for type {{type}}. Write nullif(current_setting('{{setting}}', true), '')::{{type}}.",
    policyWithoutMissingOk:
      "The policy calls current_setting('{{setting}}') without missing_ok: on a connection that never set it, every query on the table fails with unrecognized configuration parameter. Write nullif(current_setting('{{setting}}', true), '').",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['current_setting'],
  check({ file, options, report }) {
    // Only custom settings read '' after RESET or the end of a local transaction; built-in ones always have a value.
    const isTenant = options.settings ? tenantSettingMatcher(options.settings) : (name: string | undefined) => !!name && isCustomSetting(name);
    for (const { statement } of statementsOf(file)) {
      for (const cast of statement.settingCasts) {
        if (!cast.nullif && isTenant(cast.setting)) {
          report({ messageId: 'castWithoutNullif', data: { setting: cast.setting ?? '', type: cast.type }, span: cast.span });
        }
      }
      if (statement.kind !== 'CreatePolicyStmt') continue;
      for (const read of statement.settingReads) {
        if (read.missingOk === false && isTenant(read.setting)) {
          report({ messageId: 'policyWithoutMissingOk', data: { setting: read.setting ?? '' }, span: read.span });
        }
      }
    }
  },
});
