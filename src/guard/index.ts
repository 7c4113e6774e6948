// pgq-audit/guard: the runtime checkout guard. A pooled connection that
// comes back with a tenant setting still set or a transaction still open is
// refused at its next checkout, with the stack of the release that dirtied it.
export { guardPool, guardStats, type GuardStats } from './pool.ts';
export { LeakReport, TenantLeakError, type OpenTransaction } from './report.ts';
export type { GuardOptions, ViolationAction, ViolationHandler } from './options.ts';
export {
  createSlonikGuardInterceptor,
  type SlonikGuardInterceptor,
  type SlonikGuardOptions,
  type SlonikSqlTag,
  type SlonikConnection,
  type SlonikConnectionContext,
} from './slonik.ts';
