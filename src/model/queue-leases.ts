// The lease tests of the queue model, read from one statement's comparisons and
// assignments: which columns a write sets as a lease (by role: `now() +
// interval` ends one, `now()` starts one), which comparison takes back an
// expired lease, and which takes back the jobs of a worker whose heartbeat is stale.
import type { AssignedValue, ColumnAssignment, Comparison, RowWrite } from '../sql/index.ts';
import { LEASE_END_COLUMN, LEASE_START_COLUMN, NOW_FUNCTIONS, SCHEDULE_COLUMN, TIMESTAMP_COLUMN, WORKER_BEAT_COLUMN } from './queue-columns.ts';

/** The table a statement names, without its schema. */
const tableOf = (table: string) => table.slice(table.lastIndexOf('.') + 1);

const isNowExpression = (v: ColumnAssignment['value'] | Comparison['value']) =>
  v.kind === 'expression' && v.functions.length > 0 && v.functions.every((f) => NOW_FUNCTIONS.includes(f));

/** The lease columns a claim writes, by their role: `c = now() + interval '...'` ends a lease, `c = now()` starts one. */
export interface LeaseRoles {
  end: Set<string>;
  start: Set<string>;
}

export function leaseRoles(write: RowWrite, assumeCalls = false, clock?: (n: number) => number | undefined): LeaseRoles {
  const roles: LeaseRoles = { end: new Set(), start: new Set() };
  for (const a of write.assignments) {
    const v = a.value;
    if (assumeCalls && callsOnly(v)) roles.end.add(a.column);
    // A time the host reads from the clock and binds (`lease_end = $1` with now + 45 s): by its offset, as in SQL.
    const bound = clock && v.kind === 'param' && v.number !== undefined ? clock(v.number) : undefined;
    if (bound !== undefined) {
      if (bound > 0) roles.end.add(a.column);
      else if (bound === 0) roles.start.add(a.column);
      continue;
    }
    if (v.kind !== 'expression' || !v.functions.some((f) => NOW_FUNCTIONS.includes(f))) continue;
    // Also an interval whose length the host puts in its text (`now() + interval '${seconds} seconds'`).
    if (v.intervalSeconds !== undefined || v.params || v.boundInterval) roles.end.add(a.column);
    else if (isNowExpression(v)) roles.start.add(a.column);
  }
  return roles;
}

/**
 * A write's own lease roles, with those the claims of its table gave their columns elsewhere in the file. A start
 * (`c = now()` in a claim) only where the write takes running jobs: `status = 'failed' and updated_at < now() -
 * interval '1 hour'` waits out a backoff, it takes no lease back.
 */
export function withLearntLeases(own: LeaseRoles, learnt: LeaseRoles | undefined, takesRunning = true): LeaseRoles {
  if (!learnt) return own;
  return { end: new Set([...own.end, ...learnt.end]), start: takesRunning ? new Set([...own.start, ...learnt.start]) : own.start };
}

/** A value computed by functions other than now() (`calc_visible_at(deadline, attempts)`), none of them the current time. */
export function callsOnly(v: AssignedValue): boolean {
  return v.kind === 'expression' && v.functions.length > 0 && !v.functions.some((f) => NOW_FUNCTIONS.includes(f));
}

/**
 * `locked_until < now()`, `locked_at < now() - interval '4 hours'`, `visible_at <= $1`;
 * by role `available_at <= now()` where the claim sets `available_at = now() + ...`;
 * and, where the statement takes running jobs, any time stamp against a cutoff
 * (`updated_at < now() - interval '5 minutes'`, `updated_at < $1` computed in the host).
 */
export function isExpiredLease(c: Comparison, roles: LeaseRoles, takesRunning: boolean): boolean {
  if ((c.op !== '<' && c.op !== '<=') || c.negated) return false;
  const v = c.value;
  const cutoff = v.kind === 'param' || (v.kind === 'expression' && (v.intervalSeconds !== undefined || v.params === true || v.beforeNow === true));
  if (LEASE_END_COLUMN.test(c.column) || roles.end.has(c.column)) {
    return cutoff || (v.kind === 'expression' && (v.functions.some((f) => NOW_FUNCTIONS.includes(f)) || v.functions.length === 0));
  }
  // A start time is expired only against now() minus something.
  if (LEASE_START_COLUMN.test(c.column) || roles.start.has(c.column)) return cutoff;
  return takesRunning && cutoff && TIMESTAMP_COLUMN.test(c.column) && !SCHEDULE_COLUMN.test(c.column);
}

/**
 * Jobs whose worker stopped beating: `worker_id in (select id from workers where
 * last_seen < now() - interval '30 seconds')`, `not exists (select 1 from workers
 * w where w.id = jobs.worker_id and w.last_seen > now() - ...)`, or the beat of
 * a joined workers table compared in the statement's own WHERE.
 */
export function staleWorker(where: readonly Comparison[], table: string): { comparison: Comparison; seconds?: number; beat: { table?: string; column: string } } | undefined {
  const stale = (c: Comparison, negated: boolean): boolean => {
    const v = c.value;
    const cutoff = v.kind === 'param' || (v.kind === 'expression' && (v.intervalSeconds !== undefined || v.params === true));
    if (!cutoff) return false;
    return negated ? c.op === '>' || c.op === '>=' : c.op === '<' || c.op === '<=';
  };
  const seconds = (c: Comparison) => (c.value.kind === 'expression' && c.value.intervalSeconds !== undefined ? Math.abs(c.value.intervalSeconds) : undefined);
  for (const c of where) {
    if (c.value.kind === 'subquery' && c.value.where && c.value.tables?.length) {
      const negated = c.negated === true;
      // The subquery reads other tables only, or joins the jobs to another one (`jobs join workers on lock_by = workers.id`):
      // then the stale time stamp must be the other table's, not a time stamp of the job.
      const ofJobs = c.value.tables.map(tableOf).includes(table);
      const other = (x: Comparison) => (ofJobs ? x.table !== undefined && tableOf(x.table) !== table : true);
      const inner = c.value.where.find((x) => !x.negated && other(x) && stale(x, negated) && (TIMESTAMP_COLUMN.test(x.column) || WORKER_BEAT_COLUMN.test(x.column)));
      if (inner) return { comparison: inner, seconds: seconds(inner), beat: { table: tableOf(inner.table ?? c.value.tables[0]), column: inner.column } };
    }
    if (WORKER_BEAT_COLUMN.test(c.column) && stale(c, c.negated === true)) return { comparison: c, seconds: seconds(c), beat: { column: c.column } };
  }
  return undefined;
}
