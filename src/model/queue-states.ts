// Which column holds a job's state, and which of its values mean a run holds
// the job, read from what the file's claims do rather than from a list of
// names. A claim moves a job from the state its predicate takes (`phase =
// 'waiting'`) to the state it writes (`phase = 'crunching'`) while it writes a
// value of the worker's (a lease, a token, the attempt): that column is the
// state column, whatever it is called, and the value it writes is a running
// state, whatever word it is. The names (`status`, `'running'`) stay the
// fallback; a column or word no claim shows stays unknown.
import type { AssignedValue, Comparison, RowWrite } from '../sql/index.ts';
import { DEAD_STATUS, DONE_STATUS, isLeaseColumn, RUNNING_STATUS, STATUS_COLUMN, WAITING_STATUS } from './queue-columns.ts';
import { isExpiredLease, leaseRoles } from './queue-leases.ts';

export interface StateRoles {
  /** The column holds the job's state. */
  isState(column: string): boolean;
  /** A run holds the job in this state. */
  isRunning(state: string): boolean;
}

/** The string values an assignment gives (`'done'`, the branches of a CASE). */
export function statusValues(value: AssignedValue): string[] {
  if (value.kind === 'literal') return typeof value.value === 'string' ? [value.value] : [];
  if (value.kind === 'expression') return value.strings ?? [];
  return [];
}

/** The states a comparison of a state column names: `status = 'queued'`, `status in ('queued', 'failed')`, `status = any(array['queued', 'failed'])`. */
export function comparedStates(c: Comparison, roles: StateRoles): string[] {
  if (!roles.isState(c.column) || c.negated) return [];
  return statesNamed(c);
}

function statesNamed(c: Comparison): string[] {
  if (c.op === '=' && c.value.kind === 'literal' && typeof c.value.value === 'string') return [c.value.value];
  if ((c.op === 'in' || c.op === '=') && c.value.kind === 'expression') return c.value.strings ?? [];
  return [];
}

/** By name only: what a file with no claim shows. */
export const STATES_BY_NAME: StateRoles = { isState: (c) => STATUS_COLUMN.test(c), isRunning: (s) => RUNNING_STATUS.test(s) };

/** A value a claim writes for the worker: a lease end (`now() + ...`), a lease column by its name, a placeholder, or a count. */
function writesWorkerValue(write: RowWrite, cutoffColumns: ReadonlySet<string>): boolean {
  const lease = leaseRoles(write);
  return write.assignments.some(
    (a) =>
      a.value.kind === 'param' ||
      a.value.kind === 'increment' ||
      lease.end.has(a.column) ||
      // A lease start by role: set to now() here, compared with a past cutoff elsewhere (`processing_started_at < now() - interval '2 hours'`).
      (lease.start.has(a.column) && cutoffColumns.has(a.column)) ||
      (isLeaseColumn(a.column) && !(a.value.kind === 'literal' && a.value.value === null)),
  );
}

/** The columns some write's filter compares with a past cutoff (`c < now() - interval '...'`, `c < $1`). */
function cutoffColumnsOf(moves: readonly { write: RowWrite; predicate: readonly Comparison[] }[]): Set<string> {
  const columns = new Set<string>();
  for (const { write, predicate } of moves)
    for (const c of [...predicate, ...write.where]) if (isExpiredLease(c, { end: new Set(), start: new Set([c.column]) }, false)) columns.add(c.column);
  return columns;
}

/**
 * The state roles of a file, from its claim-like moves: updates of rows a SKIP LOCKED read (or a read the
 * write takes by id) picked, that set a column to one string while their predicate takes other strings of
 * it, and that write a value of the worker's. A value some move takes (`'queued'` of a re-queue) is a
 * waiting state, never a running one, and neither is a waiting, done or dead word.
 */
export function stateRolesOf(moves: readonly { write: RowWrite; predicate: readonly Comparison[] }[]): StateRoles {
  const columns = new Set<string>();
  const written = new Set<string>();
  const taken = new Set<string>();
  // The states a claim moves jobs out of: where workers take jobs from, so waiting, whatever the word.
  const claimedFrom = new Set<string>();
  const cutoffColumns = cutoffColumnsOf(moves);
  for (const { write, predicate } of moves) {
    if (write.op !== 'update') continue;
    // What a move takes and does not write back (a claim may take its own state back once the lease expired).
    const sets = write.assignments.flatMap((a) => statusValues(a.value).map((v) => v.toLowerCase()));
    for (const c of predicate) if (!c.negated) for (const s of statesNamed(c)) if (!sets.includes(s.toLowerCase())) taken.add(s.toLowerCase());
    // A write that clears the lease (`locked_at = null`) releases its rows: the state it writes is no run's.
    const releases = write.assignments.some((a) => isLeaseColumn(a.column) && a.value.kind === 'literal' && a.value.value === null);
    if (!writesWorkerValue(write, cutoffColumns) || releases) continue;
    for (const a of write.assignments) {
      const state = a.value.kind === 'literal' ? a.value.value : undefined;
      if (typeof state !== 'string') continue;
      const from = predicate.filter((c) => c.column === a.column && !c.negated).flatMap(statesNamed);
      if (!from.some((s) => s !== state)) continue;
      columns.add(a.column);
      written.add(state.toLowerCase());
      for (const s of from) if (s !== state) claimedFrom.add(s.toLowerCase());
    }
  }
  const running = new Set([...written].filter((s) => !taken.has(s) && !WAITING_STATUS.test(s) && !DONE_STATUS.test(s) && !DEAD_STATUS.test(s)));
  if (columns.size === 0) return STATES_BY_NAME;
  return {
    isState: (c) => STATUS_COLUMN.test(c) || columns.has(c),
    // A word that names a run (`'active'`) is still a waiting state where a claim takes jobs out of it and no claim writes it.
    isRunning: (s) => running.has(s.toLowerCase()) || (RUNNING_STATUS.test(s) && !(claimedFrom.has(s.toLowerCase()) && !written.has(s.toLowerCase()))),
  };
}

/**
 * A SKIP LOCKED read whose state filter (not under an OR) admits only running states (`state = 'running' and
 * timeout_at < now()`): a sweep locking runs that went stale, not a claim of waiting jobs. No job's work runs
 * under it; what follows is the sweep's handling of the runs.
 */
export function locksRunningOnly(read: { where: readonly Comparison[] }, roles: StateRoles = STATES_BY_NAME): boolean {
  const filters = read.where.filter((c) => !c.underOr && comparedStates(c, roles).length > 0);
  return filters.length > 0 && filters.every((c) => comparedStates(c, roles).every((s) => roles.isRunning(s)));
}
