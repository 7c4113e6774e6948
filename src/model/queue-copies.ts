// A retry made by copying the job: the failed job is enqueued again as a new
// row that carries its counter one further (`insert into jobs (payload,
// attempt) select payload, attempt + 1 from jobs where id = $1`, also from a
// CTE that moves the row, `with moved as (delete from jobs ... returning *)`),
// often with the old row marked failed or done. The copy is where such a queue
// counts its attempts, as `attempts = attempts + 1` is in an UPDATE; and where
// it stops, `attempt < max_attempts` in the copy's WHERE, as in a claim's
// predicate. The copy may come from the queue's table or from a table that
// keeps its failed or dead jobs (`dead_jobs`, `jobs_failed`).
import type { ColumnAssignment, Comparison, RowWrite } from '../sql/index.ts';
import { counterTest, directionOf, isAttemptLimit, type FileCounters } from './queue-limits.ts';
import type { Location } from './rule.ts';
import type { Span } from './types.ts';

export interface RetryCopy {
  /** The counter and the value the copy gives it (`attempt + 1`, `tries_left - 1`). */
  counter: ColumnAssignment;
  countsDown: boolean;
  /** The test of the copy's WHERE that stops at the limit (`attempt < max_attempts`). */
  limit?: Comparison;
}

const bare = (table: string) => table.slice(table.lastIndexOf('.') + 1);

/** The name, next to the queue table's, of a table that keeps its failed jobs: `dead_jobs`, `jobs_dead`, `failed_jobs`, `jobs_retry`. */
const KEPT = /^(dead|failed|failures|errors?|errored|retry|retries|dlq|dead_letter|archive|archived)$/;

function keptBeside(from: string, table: string): boolean {
  const rest = from.startsWith(`${table}_`) ? from.slice(table.length + 1) : from.endsWith(`_${table}`) ? from.slice(0, -table.length - 1) : undefined;
  return rest !== undefined && KEPT.test(rest);
}

const NO_COUNTERS: FileCounters = new Map();

/** The write enqueues a job of its table again as a new row with its counter moved on: a retry by copy. */
export function retryCopyOf(write: RowWrite, fileCounters: FileCounters = NO_COUNTERS): RetryCopy | undefined {
  const copy = write.copy;
  if (write.op !== 'insert' || !copy) return undefined;
  const table = bare(write.table);
  const from = bare(copy.from);
  if (from !== table && !keptBeside(from, table)) return undefined;
  const { isCounter } = counterTest(fileCounters);
  const counter = copy.values.find((v) => isCounter(v.column) && v.value.kind === 'increment' && v.value.by !== undefined && v.value.by !== 0);
  if (!counter) return undefined;
  const countsDown = directionOf(counter.value) === 'down';
  const counters = counterTest(fileCounters, { column: counter.column, direction: countsDown ? 'down' : 'up' });
  const limit = copy.where.find((c) => !c.underOr && isAttemptLimit(c, counters));
  return { counter, countsDown, ...(limit && { limit }) };
}

type Ref = { span: Span; loc: Location };

/** A retry by copy as the queue facts keep it. */
export interface RetryFact {
  table: string;
  schema?: string;
  at: Ref;
  /** The counter's value in the copy (`attempt + 1`). */
  counterAt: Ref;
  counter: string;
  countsDown?: boolean;
  /** The copy's WHERE stops at the limit (`attempt < max_attempts`). */
  limitAt?: Ref;
}

export function retryFactOf(write: RowWrite, fileCounters: FileCounters, ref: (span: Span) => Ref): RetryFact | undefined {
  const retry = retryCopyOf(write, fileCounters);
  if (!retry) return undefined;
  const fact: RetryFact = { table: write.table, at: ref(write.span), counterAt: ref(retry.counter.span), counter: retry.counter.column };
  if (write.schema) fact.schema = write.schema;
  if (retry.countsDown) fact.countsDown = true;
  if (retry.limit) fact.limitAt = ref(retry.limit.span);
  return fact;
}
