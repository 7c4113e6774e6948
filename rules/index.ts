// Every rule, in the order the docs list them.
import type { Rule } from '../src/model/index.ts';
import noDiscardAllWithPreparedStatements from './no-discard-all-with-prepared-statements.ts';
import noLocalSettingOutsideTransaction from './no-local-setting-outside-transaction.ts';
import noSessionTenantSetting from './no-session-tenant-setting.ts';
import noTenantPolicyOnQueue from './no-tenant-policy-on-queue.ts';
import requireAutocommitInReset from './require-autocommit-in-reset.ts';
import requireNullifOnSettingCast from './require-nullif-on-setting-cast.ts';

export const rules: Rule<any>[] = [
  noSessionTenantSetting,
  noLocalSettingOutsideTransaction,
  noDiscardAllWithPreparedStatements,
  requireAutocommitInReset,
  requireNullifOnSettingCast,
  noTenantPolicyOnQueue,
];

export function ruleById(id: string): Rule<any> | undefined {
  return rules.find((r) => r.id === id);
}
