// The attempt limit of a queue, read by the counter's direction: a counter
// that counts up (`attempts = attempts + 1`) stops at `attempts <
// max_attempts`; one that counts down (`retries_remaining = retries_remaining
// - 1`) stops at `retries_remaining > 0`. A counter counts down where the
// file's claim decrements it, or by its name (`retries_left`).
import type { AssignedValue, Comparison } from '../sql/index.ts';
import { ATTEMPT_COLUMN, COUNTDOWN_COLUMN, LIMIT_COLUMN } from './queue-columns.ts';

export type Direction = 'up' | 'down';

/** The file's attempt counters: the columns its claims count, with the way they count. */
export type FileCounters = ReadonlyMap<string, Direction>;

/** How an assignment counts its own column: `c = c + 1` up, `c = c - 1` down (an expression of itself: up, the usual case). */
export function directionOf(value: AssignedValue): Direction {
  return value.kind === 'increment' && value.by !== undefined && value.by < 0 ? 'down' : 'up';
}

export interface CounterTest {
  isCounter(column: string): boolean;
  countsDown(column: string): boolean;
}

/** The counters of one statement: by name, as one of the file's claims counts it, or as this claim counts it. */
export function counterTest(fileCounters: FileCounters, own?: { column: string; direction: Direction }): CounterTest {
  const isCounter = (column: string) => ATTEMPT_COLUMN.test(column) || COUNTDOWN_COLUMN.test(column) || fileCounters.has(column) || column === own?.column;
  const countsDown = (column: string) =>
    own?.column === column ? own.direction === 'down' : fileCounters.has(column) ? fileCounters.get(column) === 'down' : COUNTDOWN_COLUMN.test(column);
  return { isCounter, countsDown };
}

/** A literal number, or none. */
const numberOf = (c: Comparison) => (c.value.kind === 'literal' && typeof c.value.value === 'number' ? c.value.value : undefined);

/**
 * `attempts < max_attempts`, `attempts < 3`, `max_attempts > attempts`, `read_ct < 5` where the claim increments read_ct,
 * `tries < (select max_tries from queues where ...)`: a limit the queue's settings hold. Counting down:
 * `retries_remaining > 0`, `retries_remaining >= 1`.
 */
export function isAttemptLimit(c: Comparison, counters: CounterTest): boolean {
  if (c.negated) return false;
  if (counters.isCounter(c.column)) {
    if (!counters.countsDown(c.column)) return c.op === '<' || c.op === '<=';
    const n = numberOf(c);
    return n !== undefined && ((c.op === '>' && n >= 0) || (c.op === '>=' && n >= 1));
  }
  if (LIMIT_COLUMN.test(c.column)) return (c.op === '>' || c.op === '>=') && c.value.kind === 'column' && counters.isCounter(c.value.column) && !counters.countsDown(c.value.column);
  return false;
}

/** `attempts >= max_attempts`: the exhausted jobs. Counting down: `retries_remaining <= 0`, `retries_remaining = 0`. */
export function isExhausted(c: Comparison, counters: CounterTest): boolean {
  if (c.negated) return false;
  if (counters.isCounter(c.column)) {
    if (!counters.countsDown(c.column)) return c.op === '>=' || c.op === '>' || (c.op === '=' && c.value.kind !== 'param' && c.value.kind !== 'subquery');
    const n = numberOf(c);
    return n !== undefined && (((c.op === '<=' || c.op === '=') && n <= 0) || (c.op === '<' && n <= 1));
  }
  if (LIMIT_COLUMN.test(c.column)) return (c.op === '<=' || c.op === '<' || c.op === '=') && c.value.kind === 'column' && counters.isCounter(c.value.column) && !counters.countsDown(c.value.column);
  return false;
}

/**
 * What a CASE on the attempt counter gives exhausted jobs and the others: `case when attempts >= max_attempts
 * then 'dead' else 'queued' end` (or `when attempts < max_attempts then 'queued' else 'dead' end`). Undefined
 * when the value is no such CASE.
 */
export function statesByLimit(value: AssignedValue, counters: CounterTest): { exhausted: string[]; others: string[] } | undefined {
  if (value.kind !== 'expression' || !value.cases) return undefined;
  const branches = value.cases;
  const tests = (when: readonly Comparison[] | undefined, test: (c: Comparison) => boolean) => (when ?? []).some((c) => !c.underOr && test(c));
  for (const [i, branch] of branches.entries()) {
    const rest = branches.slice(i + 1).flatMap((b) => b.strings);
    const before = branches.slice(0, i).flatMap((b) => b.strings);
    if (tests(branch.when, (c) => isExhausted(c, counters))) return { exhausted: branch.strings, others: [...before, ...rest] };
    if (tests(branch.when, (c) => isAttemptLimit(c, counters))) return { exhausted: rest, others: [...before, ...branch.strings] };
  }
  return undefined;
}

/**
 * The texts a message suggests for the counter: the count, the test under the limit, the test at it. The limit is the
 * table's own column where its CREATE TABLE has one (`tries < max_tries`; of several, the one named after the counter).
 */
export function limitTexts(counter: string, down: boolean, limitColumns: readonly string[] = []): { count: string; under: string; exhausted: string } {
  if (down) return { count: `${counter} = ${counter} - 1`, under: `${counter} > 0`, exhausted: `${counter} <= 0` };
  const limit = limitColumns.find((c) => c.includes(counter.replace(/_?(?:count|ct)$/, ''))) ?? limitColumns[0] ?? 'max_attempts';
  return { count: `${counter} = ${counter} + 1`, under: `${counter} < ${limit}`, exhausted: `${counter} >= ${limit}` };
}
