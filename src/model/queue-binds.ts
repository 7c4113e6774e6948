// The values the host code binds to a queue statement's placeholders, read
// into the statement: a bound string is the state it names, a bound
// interval the lease length it gives.
import { intervalOf, type AssignedValue, type BindParam, type Comparison, type ComparedValue, type StatementFacts } from '../sql/index.ts';
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
    return param?.kind === 'literal' ? param.value : undefined;
  };
}

/**
 * The statement as the host binds it: a placeholder the code binds a string
 * constant to (`status = ${STATES.running}`, `status in ($1, $2)` with
 * `['queued', 'failed']`) is that string, so a state written or compared
 * through a constant is read as the same state written in the SQL. Numbers
 * and other values stay placeholders (a bound interval is read apart).
 */
export function withBoundStrings(statement: StatementFacts, bind: BindParam | undefined): StatementFacts {
  if (!bind) return statement;
  const boundString = (n: number | undefined) => {
    const value = n === undefined ? undefined : bind(n);
    return typeof value === 'string' ? value : undefined;
  };
  const value = <V extends AssignedValue | ComparedValue>(v: V): V => {
    if (v.kind === 'param') {
      const bound = boundString(v.number);
      return bound === undefined ? v : ({ kind: 'literal', value: bound } as V);
    }
    if (v.kind === 'expression' && v.paramNumbers) {
      const bound = v.paramNumbers.map(boundString).filter((x): x is string => x !== undefined);
      return bound.length ? { ...v, strings: [...(v.strings ?? []), ...bound] } : v;
    }
    return v;
  };
  const comparisons = (where: readonly Comparison[]) => where.map((c) => ({ ...c, value: value(c.value) }));
  return {
    ...statement,
    rowWrites: statement.rowWrites.map((w) => ({ ...w, assignments: w.assignments.map((a) => ({ ...a, value: value(a.value) })), where: comparisons(w.where) })),
    lockingReads: statement.lockingReads.map((r) => ({ ...r, where: comparisons(r.where) })),
  };
}

/** Seconds of the interval a placeholder gives, where the bound value is a literal. */
export function boundSeconds(value: AssignedValue | ComparedValue, bind: BindParam | undefined): number | undefined {
  if (!bind || value.kind !== 'expression' || !value.boundInterval) return undefined;
  return intervalOf(value.boundInterval, bind);
}

