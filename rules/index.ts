// Every rule, in the order the docs list them.
import type { Rule } from '../src/model/index.ts';
import noAttemptsInRollbackScope from './no-attempts-in-rollback-scope.ts';
import noDiscardAllWithPreparedStatements from './no-discard-all-with-prepared-statements.ts';
import noLocalSettingOutsideTransaction from './no-local-setting-outside-transaction.ts';
import noReleaseInOpenTransaction from './no-release-in-open-transaction.ts';
import noSessionTenantSetting from './no-session-tenant-setting.ts';
import noSideEffectsInLockingTransaction from './no-side-effects-in-locking-transaction.ts';
import noTenantPolicyOnQueue from './no-tenant-policy-on-queue.ts';
import requireAutocommitInReset from './require-autocommit-in-reset.ts';
import requireClaimAttemptLimit from './require-claim-attempt-limit.ts';
import requireDeadSweep from './require-dead-sweep.ts';
import requireFencedFinish from './require-fenced-finish.ts';
import requireLeaseHeartbeat from './require-lease-heartbeat.ts';
import requireNullifOnSettingCast from './require-nullif-on-setting-cast.ts';
import noTenantSettingDefault from './no-tenant-setting-default.ts';
import requireForcedRowSecurity from './require-forced-row-security.ts';

export const rules: Rule<any>[] = [
  noSessionTenantSetting,
  noLocalSettingOutsideTransaction,
  noDiscardAllWithPreparedStatements,
  noReleaseInOpenTransaction,
  noAttemptsInRollbackScope,
  requireAutocommitInReset,
  requireNullifOnSettingCast,
  noTenantPolicyOnQueue,
  requireClaimAttemptLimit,
  requireDeadSweep,
  requireFencedFinish,
  requireLeaseHeartbeat,
  noSideEffectsInLockingTransaction,
  noTenantSettingDefault,
  requireForcedRowSecurity,
];

export function ruleById(id: string): Rule<any> | undefined {
  return rules.find((r) => r.id === id);
}
