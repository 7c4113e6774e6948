// Queue statements, read from statement facts alone (so one reading serves
// SQL, TypeScript and Python): which statement claims jobs, which finishes or
// fails one, which extends a lease (heartbeat), which sweeps expired or
// exhausted jobs — and whether a claim belongs to the one-transaction design
// (the row lock is held while the job runs, the finish is in the same
// transaction) or to the lease design (the claim commits on its own, and a
// lease column says until when the job is taken).
//
// The facts are JSON (they cross worker threads and the cache) and carry
// both offsets (for the per-file check) and 1-based locations (for the
// project pass).
import { LineIndex } from '../engine/lines.ts';
import type { Comparison, LockingRead, RowWrite, StatementFacts } from '../sql/index.ts';
import type { FileModel, Span, SqlSite } from './types.ts';
import type { Location } from './rule.ts';
import { DEFAULT_SCHEMA, mayBeSameTable, tableKey, tablesOf, writtenName, type TableName } from './tables.ts';

// ---- column vocabulary --------------------------------------------------------------

/** Attempt counters: River `attempt`, graphile-worker `attempts`, pg-boss `retry_count`, Que `error_count`. */
export const ATTEMPT_COLUMN = /^(attempts?|attempt_count|attempts_count|num_attempts|retry_count|retries|tries|try_count|run_count|error_count|failure_count|failures)$/;
/** Their limits: `max_attempts`, pg-boss `retry_limit`. */
export const LIMIT_COLUMN = /^(max_(attempts?|retries|tries|runs|errors|failures)|retry_limit|attempt_limit|attempts_limit)$/;
/** A lease that ends at this time: `locked_until < now()` is an expired lease. */
export const LEASE_END_COLUMN = /^(locked_until|lock_until|lock_expires_at|lock_expiry|lease_until|leased_until|lease_expires_at|lease_expiry|lease_deadline|visible_at|invisible_until|vt|claimed_until|reserved_until)$/;
/** A lease that started at this time: `locked_at < now() - interval '4 hours'` is an expired lease. */
export const LEASE_START_COLUMN = /^(locked_at|lock_at|claimed_at|reserved_at|leased_at|picked_at|fetched_at|heartbeat_at|heartbeat_on|last_heartbeat_at|last_heartbeat|started_at|started_on|attempted_at)$/;
/** Per-claim tokens a finish can compare: graphile-worker `locked_by`, solid_queue's process id. */
export const TOKEN_COLUMN = /^(locked_by|lock_by|lock_token|lock_id|lease_token|lease_id|lease_owner|claim_token|claim_id|claimed_by|reserved_by|worker_id|worker|owner|owner_id|run_id|token|fence|fence_token|fencing_token|process_id|consumer|consumer_id)$/;
export const STATUS_COLUMN = /^(status|state|job_state|job_status)$/;
const ID_COLUMN = /^(id|job_id|jid|uuid|message_id|msg_id|task_id)$/;

export const RUNNING_STATUS = /^(running|active|executing|doing|locked|in_progress|inprogress|processing|started|claimed|reserved|working|busy|taken|leased|picked)$/i;
export const DEAD_STATUS = /^(dead|failed|failure|discarded|error|errored|exhausted|abandoned|cancelled|canceled|poisoned|dead_letter|dead_lettered|dlq|given_up|killed)$/i;
export const DONE_STATUS = /^(done|completed|complete|succeeded|success|successful|finished|ok|processed)$/i;

const isLeaseColumn = (c: string) => LEASE_END_COLUMN.test(c) || LEASE_START_COLUMN.test(c);
const NOW_FUNCTIONS = ['now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'timezone', 'current_timestamp'];

// ---- facts --------------------------------------------------------------------------

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
  /** The predicate takes back jobs whose lease expired (`locked_until < now()`). */
  reclaimAt?: Ref;
  /** The predicate stops at the attempt limit (`attempts < max_attempts`). */
  limitAt?: Ref;
  /** The claim counts the attempt (`attempts = attempts + 1`). */
  increments: boolean;
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
  /** The attempt or token column the WHERE compares, if any. */
  fence?: string;
  /** What it matches the job by, for messages: 'id', 'id and state'. */
  by: string;
  /** Sets a dead state for an exhausted job (on the failure path). */
  setsDead: boolean;
}

export interface HeartbeatFact {
  table: string;
  /** The schema the statement qualifies the table with; unqualified names are resolved per project unit. */
  schema?: string;
  column: string;
  at: Ref;
  fence?: string;
  by: string;
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
  /** Compares the attempt counter (as a limit, or in the CASE that picks the state). */
  limitAt?: Ref;
  /** Takes jobs whose lease expired. */
  reclaimAt?: Ref;
  leaseSeconds?: number;
}

export interface QueueFacts {
  claims: ClaimFact[];
  finishes: FinishFact[];
  heartbeats: HeartbeatFact[];
  sweeps: SweepFact[];
}

export function bareTable(table: string): string {
  return table.slice(table.lastIndexOf('.') + 1);
}

// ---- reading a file -----------------------------------------------------------------

const cache = new WeakMap<FileModel, QueueFacts>();

/** The queue statements of one file. */
export function queueFactsOf(model: FileModel): QueueFacts {
  const cached = cache.get(model);
  if (cached) return cached;
  const facts = readQueueFacts(model);
  cache.set(model, facts);
  return facts;
}

interface Entry {
  site: SqlSite;
  statement: StatementFacts;
  /** Transaction key: statements with the same key run in one transaction. */
  key?: string;
}

function readQueueFacts(model: FileModel): QueueFacts {
  const ref = refMaker(model.text);
  const facts: QueueFacts = { claims: [], finishes: [], heartbeats: [], sweeps: [] };
  const jobScopes = new Set(model.jobTransactions.map((j) => j.scopeId));

  const entries: Entry[] = [];
  for (const site of model.sites) {
    for (const statement of site.analysis.statements) {
      entries.push({ site, statement, key: site.scope.kind === 'transaction' ? site.scope.id : undefined });
    }
  }

  entries.forEach((entry, index) => {
    const { statement, key } = entry;
    const earlier = key === undefined ? [] : entries.slice(0, index).filter((e) => e.key === key);
    const later = key === undefined ? [] : entries.slice(index + 1).filter((e) => e.key === key);
    for (const write of statement.rowWrites) {
      if (write.op === 'insert') continue;
      // The default schema is the unit's, unknown here: within one statement or transaction, `jobs` may be `billing.jobs`.
      const name: TableName = write.schema ? { table: write.table, schema: write.schema } : { table: write.table };
      const { table } = name;
      const locks = (l: LockingRead) => l.skipLocked && tablesOf(l).some((t) => mayBeSameTable(t, name));
      const ownRead = statement.lockingReads.find(locks);
      const earlierRead = earlier
        .flatMap((e) => (e.statement.rowWrites.some((w) => mayBeSameTable(w, name)) ? [] : e.statement.lockingReads))
        .find(locks);
      const claimRead = ownRead ?? earlierRead;
      const w = readWrite(write, claimRead);

      if (w.isClaim) {
        const finishedLater = later.some((e) => e.statement.rowWrites.some((l) => mayBeSameTable(l, name) && l.op !== 'insert' && writesEnd(l)));
        const design = entry.site.scope.kind === 'transaction' && (jobScopes.has(entry.site.scope.id) || finishedLater) ? 'one-transaction' : 'lease';
        facts.claims.push({
          ...name,
          design,
          at: ref(write.span),
          setAt: ref(write.assignments[0]?.span ?? write.span),
          leaseColumn: w.lease?.column,
          leaseAt: w.lease ? ref(w.lease.span) : undefined,
          leaseSeconds: w.leaseSeconds,
          leaseFromCode: w.leaseFromCode || undefined,
          reclaimAt: w.reclaim ? ref(w.reclaim.span) : undefined,
          limitAt: w.limit ? ref(w.limit.span) : undefined,
          increments: w.increments,
        });
        continue;
      }
      // A write in the claim's own transaction runs under the claim's row lock (one-transaction design).
      if (earlierRead) continue;
      if (w.isSweep) {
        facts.sweeps.push({
          ...name,
          at: ref(write.span),
          dead: w.dead,
          requeue: w.requeue,
          limitAt: w.limit ? ref(w.limit.span) : w.attemptInCase ? ref(w.statusSpan ?? write.span) : undefined,
          reclaimAt: w.reclaim ? ref(w.reclaim.span) : undefined,
          leaseSeconds: w.reclaimSeconds,
        });
        continue;
      }
      if (w.isHeartbeat) {
        facts.heartbeats.push({ ...name, column: w.lease!.column, at: ref(write.span), fence: w.fence, by: w.by });
        continue;
      }
      if (w.isFinish) {
        facts.finishes.push({
          ...name,
          kind: w.done ? 'finish' : 'fail',
          at: ref(write.span),
          whereAt: ref(write.where[0]?.span ?? write.span),
          fence: w.fence,
          by: w.by,
          setsDead: w.dead && write.op !== 'delete',
        });
      }
    }
  });
  return facts;
}

/** The write ends the job's run: a done/dead/queued state, or the row deleted. */
function writesEnd(write: RowWrite): boolean {
  if (write.op === 'delete') return true;
  const status = write.assignments.find((a) => STATUS_COLUMN.test(a.column));
  return status !== undefined && !statusValues(status.value).some((v) => RUNNING_STATUS.test(v));
}

function statusValues(value: RowWrite['assignments'][number]['value']): string[] {
  if (value.kind === 'literal') return typeof value.value === 'string' ? [value.value] : [];
  if (value.kind === 'expression') return value.strings ?? [];
  return [];
}

/** `locked_until < now()`, `locked_at < now() - interval '4 hours'`, `visible_at <= $1`. */
function isExpiredLease(c: Comparison): boolean {
  if (c.op !== '<' && c.op !== '<=') return false;
  if (LEASE_END_COLUMN.test(c.column)) {
    return c.value.kind === 'param' || (c.value.kind === 'expression' && (c.value.params === true || c.value.functions.some((f) => NOW_FUNCTIONS.includes(f)) || c.value.functions.length === 0));
  }
  if (LEASE_START_COLUMN.test(c.column)) {
    // A start time is expired only against now() minus something.
    return c.value.kind === 'param' || (c.value.kind === 'expression' && (c.value.intervalSeconds !== undefined || c.value.params === true));
  }
  return false;
}

/** `attempts < max_attempts`, `attempts < 3`, `max_attempts > attempts`. */
function isAttemptLimit(c: Comparison): boolean {
  if (ATTEMPT_COLUMN.test(c.column)) return (c.op === '<' || c.op === '<=') && c.value.kind !== 'subquery';
  if (LIMIT_COLUMN.test(c.column)) return (c.op === '>' || c.op === '>=') && c.value.kind === 'column' && ATTEMPT_COLUMN.test(c.value.column);
  return false;
}

/** `attempts >= max_attempts`: the exhausted jobs. */
function isExhausted(c: Comparison): boolean {
  if (ATTEMPT_COLUMN.test(c.column)) return (c.op === '>=' || c.op === '>' || c.op === '=') && c.value.kind !== 'param' && c.value.kind !== 'subquery';
  if (LIMIT_COLUMN.test(c.column)) return (c.op === '<=' || c.op === '<' || c.op === '=') && c.value.kind === 'column' && ATTEMPT_COLUMN.test(c.value.column);
  return false;
}

function isFence(c: Comparison): boolean {
  if (c.op !== '=' || c.value.kind === 'literal') return false;
  return ATTEMPT_COLUMN.test(c.column) || TOKEN_COLUMN.test(c.column) || LEASE_END_COLUMN.test(c.column);
}

interface WriteReading {
  isClaim: boolean;
  isSweep: boolean;
  isHeartbeat: boolean;
  isFinish: boolean;
  lease?: { column: string; span: Span };
  leaseSeconds?: number;
  leaseFromCode: boolean;
  reclaim?: Comparison;
  reclaimSeconds?: number;
  limit?: Comparison;
  increments: boolean;
  dead: boolean;
  done: boolean;
  requeue: boolean;
  attemptInCase: boolean;
  statusSpan?: Span;
  fence?: string;
  by: string;
}

function readWrite(write: RowWrite, claimRead: LockingRead | undefined): WriteReading {
  const predicate = [...(claimRead?.where ?? []), ...write.where];
  const status = write.assignments.find((a) => STATUS_COLUMN.test(a.column));
  const values = status ? statusValues(status.value) : [];
  const setsRunning = values.some((v) => RUNNING_STATUS.test(v));
  const leaseAssignment = write.assignments.find((a) => isLeaseColumn(a.column) && !(a.value.kind === 'literal' && a.value.value === null));
  const clearsLease = write.assignments.some((a) => isLeaseColumn(a.column) && a.value.kind === 'literal' && a.value.value === null);
  const reclaim = predicate.find(isExpiredLease);
  const limit = predicate.find(isAttemptLimit);
  const statusCompared = predicate.filter((c) => STATUS_COLUMN.test(c.column) && c.op === '=' && c.value.kind === 'literal' && typeof c.value.value === 'string');
  const fromWaiting = statusCompared.some((c) => !RUNNING_STATUS.test(String((c.value as { value: string }).value)));
  const leaseIsNull = predicate.some((c) => isLeaseColumn(c.column) && c.op === 'is null');
  const attempt = write.assignments.find((a) => ATTEMPT_COLUMN.test(a.column));
  const increments =
    attempt !== undefined &&
    (attempt.value.kind === 'increment' || (attempt.value.kind === 'expression' && attempt.value.columns.some((c) => ATTEMPT_COLUMN.test(c))));
  const isUpdate = write.op === 'update';

  const isClaim =
    isUpdate &&
    (setsRunning || (leaseAssignment !== undefined && !status)) &&
    (claimRead !== undefined || fromWaiting || reclaim !== undefined || leaseIsNull);

  // Lease length: the assignment's interval (locked_until = now() + interval '30 seconds'),
  // else the expiry comparison's (locked_at < now() - interval '4 hours').
  let leaseSeconds: number | undefined;
  let leaseFromCode = false;
  if (leaseAssignment) {
    const v = leaseAssignment.value;
    if (v.kind === 'param' || (v.kind === 'expression' && v.params)) leaseFromCode = true;
    else if (v.kind === 'expression' && v.intervalSeconds !== undefined && LEASE_END_COLUMN.test(leaseAssignment.column)) leaseSeconds = Math.abs(v.intervalSeconds);
  }
  const reclaimSeconds = reclaim?.value.kind === 'expression' && reclaim.value.intervalSeconds !== undefined ? Math.abs(reclaim.value.intervalSeconds) : undefined;
  if (leaseSeconds === undefined && !leaseFromCode && reclaim && LEASE_START_COLUMN.test(reclaim.column)) {
    if (reclaimSeconds !== undefined) leaseSeconds = reclaimSeconds;
    else leaseFromCode = reclaim.value.kind === 'param' || (reclaim.value.kind === 'expression' && reclaim.value.params === true);
  }

  const attemptInCase = status?.value.kind === 'expression' && status.value.columns.some((c) => ATTEMPT_COLUMN.test(c));
  const dead = write.op === 'delete' || values.some((v) => DEAD_STATUS.test(v));
  const done = write.op === 'delete' || (values.length > 0 && values.every((v) => DONE_STATUS.test(v)));
  const requeue = values.some((v) => !RUNNING_STATUS.test(v) && !DEAD_STATUS.test(v) && !DONE_STATUS.test(v)) || (clearsLease && !status);
  const byId = write.where.some((c) => ID_COLUMN.test(c.column) && (c.op === '=' || c.op === 'in') && c.value.kind !== 'literal');
  const exhausted = write.where.find(isExhausted);

  const isSweep =
    !isClaim &&
    !byId &&
    ((reclaim !== undefined && write.where.includes(reclaim) && (dead || requeue || clearsLease)) || (exhausted !== undefined && dead));
  const fenceComparison = write.where.find(isFence);
  const stateCompared = write.where.some((c) => STATUS_COLUMN.test(c.column));
  const by = byId ? (stateCompared ? 'id and state' : 'id') : stateCompared ? 'state' : 'its WHERE';
  const isHeartbeat = !isClaim && !isSweep && isUpdate && byId && leaseAssignment !== undefined && (!status || setsRunning) && !clearsLease;
  // DELETE ... WHERE id = (SELECT ... SKIP LOCKED) RETURNING takes the job: it is a claim that is its own end, not a finish.
  const deletesClaimed = write.op === 'delete' && claimRead?.skipLocked === true;
  const isFinish = !isClaim && !isSweep && !isHeartbeat && !deletesClaimed && byId && (write.op === 'delete' || status !== undefined || clearsLease);

  return {
    isClaim,
    isSweep,
    isHeartbeat,
    isFinish,
    lease: leaseAssignment ? { column: leaseAssignment.column, span: leaseAssignment.span } : reclaim ? { column: reclaim.column, span: reclaim.span } : undefined,
    leaseSeconds,
    leaseFromCode,
    reclaim,
    reclaimSeconds,
    limit: limit ?? (isSweep ? exhausted : undefined),
    increments,
    dead,
    done,
    requeue,
    attemptInCase,
    statusSpan: status?.span,
    fence: fenceComparison?.column,
    by,
  };
}

// ---- across files -------------------------------------------------------------------

export interface Located<T> {
  file: string;
  fact: T;
}

export interface TableFacts {
  /** The table as the first claim names it, for messages. */
  table: string;
  /** Its identity in the unit: `schema.table`. */
  key: string;
  /** Lease-design claims only: the one-transaction design has rules of its own. */
  claims: Located<ClaimFact>[];
  finishes: Located<FinishFact>[];
  heartbeats: Located<HeartbeatFact>[];
  sweeps: Located<SweepFact>[];
}

/**
 * The queue facts of several files, by table, for tables that have a lease-design claim.
 * A file's unqualified names are in its `defaultSchema` (its unit's; public when not given),
 * so `billing.jobs` and `public.jobs` never lend each other facts.
 */
export function leaseTables(files: readonly { file: string; facts: QueueFacts; defaultSchema?: string }[]): TableFacts[] {
  const tables = new Map<string, TableFacts>();
  const of = (name: TableName, defaultSchema: string) => {
    const key = tableKey(name, defaultSchema);
    let t = tables.get(key);
    if (!t) tables.set(key, (t = { table: writtenName(name), key, claims: [], finishes: [], heartbeats: [], sweeps: [] }));
    return t;
  };
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const fact of facts.claims) if (fact.design === 'lease') of(fact, defaultSchema).claims.push({ file, fact });
  }
  // Named after a claim: only then are the other facts added.
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const fact of facts.finishes) of(fact, defaultSchema).finishes.push({ file, fact });
    for (const fact of facts.heartbeats) of(fact, defaultSchema).heartbeats.push({ file, fact });
    for (const fact of facts.sweeps) of(fact, defaultSchema).sweeps.push({ file, fact });
  }
  return [...tables.values()].filter((t) => t.claims.length > 0);
}

/** What takes back a job whose lease expired: the claim itself, or a sweep that puts it back in the queue. */
export function reclaimerOf(table: TableFacts, claim: Located<ClaimFact>): { file: string; at: Ref; by: 'claim' | 'sweep'; leaseSeconds?: number } | undefined {
  if (claim.fact.reclaimAt) return { file: claim.file, at: claim.fact.reclaimAt, by: 'claim' };
  const sweep = table.sweeps.find((s) => s.fact.requeue && s.fact.reclaimAt);
  return sweep ? { file: sweep.file, at: sweep.fact.reclaimAt!, by: 'sweep', leaseSeconds: sweep.fact.leaseSeconds } : undefined;
}

/** Human form of a lease length: "2 s", "30 min", "4 h". */
export function formatSeconds(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${Number(seconds.toFixed(3))} s`;
}

/** Makes Refs for spans of a text. */
export function refMaker(text: string): (span: Span) => Ref {
  const lines = new LineIndex(text);
  return (span) => ({ span, loc: lines.location(span) });
}
