// The queue facts a file yields (src/model/queue.ts reads them): JSON, so they cross worker threads and
// the cache, with offsets for the per-file check and 1-based locations for the project pass.
import { lineIndexOf } from './lines.ts';
import type { RetryFact } from './queue-copies.ts';
import type { Location } from './rule.ts';
import type { Span } from './types.ts';

/** A place in the file: offsets for the per-file check, a location for the project pass. */
export interface Ref {
  span: Span;
  loc: Location;
}

export interface ClaimFact {
  table: string;
  /** The schema the statement qualifies the table with; unqualified names are resolved per project unit. */
  schema?: string;
  /** 'one-transaction': the claim's transaction also runs the job and its finish. */
  design: 'lease' | 'one-transaction';
  at: Ref;
  /** The first column the claim sets: where a missing increment is reported. */
  setAt: Ref;
  leaseColumn?: string;
  /** The lease assignment (`locked_until = now() + interval '30 seconds'`). */
  leaseAt?: Ref;
  /** A fixed lease length, read from the assignment or the expiry comparison. */
  leaseSeconds?: number;
  /** The lease length comes from a placeholder: the code decides it. */
  leaseFromCode?: boolean;
  /** The predicate takes back jobs whose lease expired (`locked_until < now()`), or whose worker stopped beating. */
  reclaimAt?: Ref;
  /** The predicate takes back jobs in a failed state (`status in ('queued', 'failed')`): every failure is retried. */
  retryAt?: Ref;
  /** The predicate stops at the attempt limit (`attempts < max_attempts`). */
  limitAt?: Ref;
  /** The limit sits in one branch of an OR (`status = 'pending' or (status = 'failed' and attempts < max_attempts)`): not every job taken is under it. */
  limitInBranch?: boolean;
  /** The predicate tests a flag the analysis cannot see into (graphile-worker's generated `is_available = true`): it may hold the limit. */
  limitUnknown?: boolean;
  /** The claim counts the attempt (`attempts = attempts + 1`). */
  increments: boolean;
  /** An optimistic claim (`... where id = $2 and locked_until = $3`): the host decided the lease expired, and may count and limit there. */
  reclaimByHost?: boolean;
  /** The column the claim increments: the attempt counter, whatever it is called (`attempts`, `read_ct`, `tries`). */
  counter?: string;
  /** The counter counts down to the limit (`retries_remaining = retries_remaining - 1`, limit `retries_remaining > 0`). */
  countsDown?: boolean;
  /**
   * Columns the claim writes a value of this claim to: the counter, a token
   * (`locked_by = $1`, `lease_token = gen_random_uuid()`), the lease
   * (`locked_until = now() + ...`). A finish that compares one is fenced.
   */
  writes: string[];
  /** The states the predicate takes jobs from (`status in ('queued', 'failed')`). */
  takes: string[];
  /** The states it writes (`status = 'running'`): the states a run holds its job in. */
  sets?: string[];
  /** The predicate takes back jobs whose worker's heartbeat is stale (a workers table's `last_seen`). */
  byWorkerBeat?: { table?: string; column: string };
  /**
   * The statement is a claim only if one of these functions returns a time after now: it sets the column it
   * takes back by (`available_at < now()`) to their value. Kept where the project defines one so (`futureTimes`).
   */
  leaseBy?: string[];
  /**
   * The claim writes no state and its lease column names a cadence (`last_alerted_at = now()`, `next_digest_at = now() +
   * interval '1 day'`): a recurring row's turn, not a job's lease, unless something finishes the table's rows.
   */
  cadence?: boolean;
  /** A read of a pgmq queue (src/model/pgmq.ts): `queue` names the queue where the call does; `consumerUnseen`: a query file's statement, its consumer elsewhere. */
  api?: 'pgmq';
  queue?: string;
  consumerUnseen?: true;
}

export interface FinishFact {
  table: string;
  /** The schema the statement qualifies the table with; unqualified names are resolved per project unit. */
  schema?: string;
  /** finish: to a done state or deleted; fail: anything else the worker writes back for its job. */
  kind: 'finish' | 'fail';
  at: Ref;
  /** Where the fence belongs: the first comparison of the WHERE. */
  whereAt: Ref;
  /** Columns the WHERE compares for equality with a value of the worker's (`attempts = $2`, `locked_by = $3`): fenceOf picks the fence among them. */
  compared: string[];
  /** What it matches the job by, for messages: 'id', 'id and state'. */
  by: string;
  /** Sets a dead state for an exhausted job (on the failure path). */
  setsDead: boolean;
  /** The states it writes (`status = case ... then 'dead' else 'failed' end`): a claim that takes none of the dead ones leaves them retired. */
  sets: string[];
  /** Counts the failure (`attempts = attempts + 1`): the design counts failures, not claims. */
  increments: boolean;
  /** The states its own WHERE requires (`state in ('failed', 'cancelled')`): a write gated on states no run holds is no run's. */
  gatedOn?: string[];
  /** Kept apart from its call, on a table the project also locks by id apart from its call: the host may check what it read (queue-locks.ts). */
  checkedUnderLock?: boolean;
  api?: 'pgmq';
  queue?: string;
}

export interface HeartbeatFact {
  table: string;
  /** The schema the statement qualifies the table with; unqualified names are resolved per project unit. */
  schema?: string;
  column: string;
  at: Ref;
  /** Where the fence belongs: the first comparison of the WHERE. */
  whereAt: Ref;
  compared: string[];
  by: string;
  /** As FinishFact's. */
  checkedUnderLock?: boolean;
  api?: 'pgmq';
  queue?: string;
}

export interface SweepFact {
  table: string;
  /** The schema the statement qualifies the table with; unqualified names are resolved per project unit. */
  schema?: string;
  at: Ref;
  /** Moves jobs to a dead state (or deletes them). */
  dead: boolean;
  /** Puts expired jobs back where the claim takes them (status back to queued, or the lock cleared). */
  requeue: boolean;
  /** The states it writes (`status = 'failed'`): a claim that takes one of them takes the jobs back. */
  sets: string[];
  /** The states its WHERE takes jobs from (`status = 'reserved'`). */
  takes?: string[];
  /** Counts the attempt as it re-queues (`attempts = attempts + 1`). */
  increments: boolean;
  /** Compares the attempt counter (as a limit, or in the CASE that picks the state). */
  limitAt?: Ref;
  /** Takes jobs whose lease expired, or whose worker stopped beating. */
  reclaimAt?: Ref;
  /** The job's column it takes them back by (`reserved_at < now() - ...`). */
  reclaimColumn?: string;
  leaseSeconds?: number;
  /** The jobs are taken back because their worker's heartbeat is stale (a workers table's `last_seen`), not a lease of the job. */
  byWorkerBeat?: { table?: string; column: string };
}

export interface QueueFacts {
  claims: ClaimFact[];
  /** Retries by copy (src/model/queue-copies.ts), where the file has any. */
  retries?: RetryFact[];
  finishes: FinishFact[];
  heartbeats: HeartbeatFact[];
  sweeps: SweepFact[];
  /** Functions the file defines whose value is now() plus an amount (`select now() + ...` in a SQL function), by bare name. */
  futureTimes: string[];
  /** Where the file compares a pgmq message's read count (src/model/pgmq.ts): a consumer's own attempt limit. */
  countChecks?: Ref[];
  /**
   * Tables the file creates with an attempt counter or limit column (`tries`, `max_tries`): the names a message
   * suggests where no claim counts yet.
   */
  createdCounters?: { table: string; schema?: string; counters: string[]; limits: string[] }[];
}

export function bareTable(table: string): string {
  return table.slice(table.lastIndexOf('.') + 1);
}

/** Human form of a lease length: "2 s", "30 min", "4 h". */
export function formatSeconds(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${Number(seconds.toFixed(3))} s`;
}

/** Makes Refs for spans of a text. */
export function refMaker(text: string): (span: Span) => Ref {
  const lines = lineIndexOf(text);
  return (span) => ({ span, loc: lines.location(span) });
}
