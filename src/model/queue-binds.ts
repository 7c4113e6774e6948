// The values the host code binds to a queue statement's placeholders, read
// into the statement: a bound string is the state it names, a bound
// interval the lease length it gives.
import { intervalOf, type AssignedValue, type BindParam, type Comparison, type ComparedValue, type StatementFacts } from '../sql/index.ts';
import { STATUS_COLUMN } from './queue-columns.ts';
import type { SqlSite } from './types.ts';

/**
 * The literal values the host code binds to the statement's placeholders
 * (a module constant `LEASE_MINUTES = 30` bound to `%(timeout)s`); none for a
 * routine body, whose $N are the routine's own parameters.
 */
export function bindOf(site: SqlSite, statement: StatementFacts): BindParam | undefined {
  const params = site.params;
  if (!params || statement.routine) return undefined;
  return (n) => {
    const param = params[n - 1];
    if (param?.kind === 'literal') return param.value;
    // A length the function's callers may pass, with a literal default (`def claim(minutes=LEASE_MINUTES)`): the default.
    return param?.kind === 'caller-parameter' && typeof param.default === 'number' ? param.default : undefined;
  };
}

/**
 * The states the host names for the statement's placeholders where it binds a
 * member of an imported constant the scan cannot read (`${JOB_STATES.PROCESSING}`
 * with `JOB_STATES` from a module outside the scanned files, a package's enum
 * `JobStatus.InProgress`): the member's name is the state (`processing`,
 * `in_progress`); of an imported constant named after its column
 * (`JOB_STATUS_PROCESSING`), the words after STATUS_ or STATE_, as enum members of a state column name their values. Read
 * for state columns only; none for a routine body.
 */
export function namedStatesOf(site: SqlSite, statement: StatementFacts): ((n: number) => string | undefined) | undefined {
  const params = site.params;
  if (!params || statement.routine || !params.some((p) => p.kind === 'named')) return undefined;
  return (n) => {
    const param = params[n - 1];
    if (param?.kind !== 'named') return undefined;
    let member = param.name.slice(param.name.lastIndexOf('.') + 1);
    // An enum-like member: UPPER_CASE or PascalCase, not a property such as `job.status`.
    if (!/^[A-Z][A-Za-z0-9_]*$/.test(member)) return undefined;
    // A constant named after its column (`JOB_STATUS_RUNNING`, `DELIVERY_STATE_SENT`): the words after it.
    if (!param.name.includes('.')) {
      const state = /(?:^|_)(?:STATUS|STATE)_([A-Z][A-Z0-9_]*)$/.exec(member);
      if (!state) return undefined;
      member = state[1];
    }
    return /[a-z]/.test(member) ? member.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() : member.toLowerCase();
  };
}

/**
 * The statement as the host binds it: a placeholder the code binds a string
 * constant to (`status = ${STATES.running}`, `status in ($1, $2)` with
 * `['queued', 'failed']`) is that string, so a state written or compared
 * through a constant is read as the same state written in the SQL. Numbers
 * and other values stay placeholders (a bound interval is read apart). In a
 * state column, a constant known only by its name (`namedStatesOf`) is the
 * state it names.
 */
export function withBoundStrings(statement: StatementFacts, bind: BindParam | undefined, named?: (n: number) => string | undefined): StatementFacts {
  if (!bind) return statement;
  const boundString = (n: number | undefined, state: boolean) => {
    const value = n === undefined ? undefined : bind(n);
    if (typeof value === 'string') return value;
    return state && named && n !== undefined ? named(n) : undefined;
  };
  const value = <V extends AssignedValue | ComparedValue>(v: V, column: string): V => {
    const state = STATUS_COLUMN.test(column);
    if (v.kind === 'param') {
      const bound = boundString(v.number, state);
      return bound === undefined ? v : ({ kind: 'literal', value: bound } as V);
    }
    if (v.kind === 'expression' && v.paramNumbers) {
      const bound = v.paramNumbers.map((n) => boundString(n, state)).filter((x): x is string => x !== undefined);
      return bound.length ? { ...v, strings: [...(v.strings ?? []), ...bound] } : v;
    }
    return v;
  };
  const comparisons = (where: readonly Comparison[]) => where.map((c) => ({ ...c, value: value(c.value, c.column) }));
  return {
    ...statement,
    rowWrites: statement.rowWrites.map((w) => ({ ...w, assignments: w.assignments.map((a) => ({ ...a, value: value(a.value, a.column) })), where: comparisons(w.where) })),
    lockingReads: statement.lockingReads.map((r) => ({ ...r, where: comparisons(r.where) })),
  };
}

/**
 * The times the host code binds to the statement's placeholders, read from the clock
 * (`new Date(Date.now() - STALE_MS)` bound to `locked_at < $1`): seconds from now. None for a routine body.
 */
export function clockOf(site: SqlSite, statement: StatementFacts): ClockParam | undefined {
  const params = site.params;
  if (!params || statement.routine || !params.some((p) => p.kind === 'clock')) return undefined;
  return (n) => {
    const param = params[n - 1];
    return param?.kind === 'clock' ? param.seconds : undefined;
  };
}

export type ClockParam = (n: number) => number | undefined;

/** Seconds from now of a value the host binds from the clock: the whole value a placeholder (`$1`). */
export function clockSeconds(value: AssignedValue | ComparedValue, clock: ClockParam | undefined): number | undefined {
  return clock && value.kind === 'param' && value.number !== undefined ? clock(value.number) : undefined;
}

/** Seconds of the interval a placeholder gives, where the bound value is a literal. */
export function boundSeconds(value: AssignedValue | ComparedValue, bind: BindParam | undefined): number | undefined {
  if (!bind || value.kind !== 'expression' || !value.boundInterval) return undefined;
  return intervalOf(value.boundInterval, bind);
}

