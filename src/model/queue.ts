// Queue statements, read from statement facts alone (so one reading serves
// SQL, TypeScript and Python): which statement claims jobs, which finishes or
// fails one, which extends a lease (heartbeat), which sweeps expired or
// exhausted jobs — and whether a claim belongs to the one-transaction design
// (the row lock is held while the job runs, the finish is in the same
// transaction) or to the lease design (the claim commits on its own, and a
// lease column says until when the job is taken).
//
// The facts (queue-facts.ts) are JSON: they cross worker threads and the cache.
import type { AssignedValue, BindParam, ColumnAssignment, ComparedValue, Comparison, LockingRead, RowWrite, StatementFacts } from '../sql/index.ts';
import { bindOf, boundSeconds, clockOf, clockSeconds, namedStatesOf, withBoundStrings, type ClockParam } from './queue-binds.ts';
import { mergedClaimRead, pickedByRead } from './queue-sources.ts';
import { counterTest, directionOf, isAttemptLimit, isExhausted, statesByLimit, type Direction, type FileCounters } from './queue-limits.ts';
import type { FileModel, Span, SqlSite } from './types.ts';
import { retryFactOf } from './queue-copies.ts';
import { bareTable, refMaker, type QueueFacts, type Ref } from './queue-facts.ts';
import { callsOnly, isExpiredLease, leaseRoles, staleWorker, withLearntLeases, type LeaseRoles } from './queue-leases.ts';
import { pgmqFactsOf, pgmqQueueOf } from './pgmq.ts';
import { comparedStates, stateRolesOf, statusValues, type StateRoles } from './queue-states.ts';
import { checkedUnderLock, heldFences } from './queue-locks.ts';
import { mayBeSameTable, tablesOf, type TableName } from './tables.ts';
// The column and state vocabulary (names are the fallback; a column's role in the claim decides first).
import {
  ATTEMPT_COLUMN,
  CADENCE_COLUMN,
  DEAD_STATUS,
  DONE_STATUS,
  ID_COLUMN,
  isLeaseColumn,
  isRowId,
  LEASE_END_COLUMN,
  LEASE_START_COLUMN,
  LIMIT_COLUMN,
  RUNNING_STATUS,
  STATUS_COLUMN,
  WORKER_BEAT_COLUMN,
} from './queue-columns.ts';

export { ATTEMPT_COLUMN, DEAD_STATUS, DONE_STATUS, ID_COLUMN, LEASE_END_COLUMN, LEASE_START_COLUMN, LIMIT_COLUMN, RUNNING_STATUS, STATUS_COLUMN, WORKER_BEAT_COLUMN };
export type { ColumnNames } from './queue-columns.ts';
export { bareTable, formatSeconds, refMaker } from './queue-facts.ts';
export type { ClaimFact, FinishFact, HeartbeatFact, QueueFacts, Ref, SweepFact } from './queue-facts.ts';

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

/**
 * What the statements of one transaction tell about each table, read in one
 * pass so the whole reading stays linear in the number of statements: the
 * first SKIP LOCKED read of a table (by a statement that does not write it),
 * and the position of the last statement that ends a job of the table.
 */
interface TransactionIndex {
  firstClaimRead: Map<string, { position: number; read: LockingRead }>;
  /** The first plain row lock (FOR UPDATE, NOWAIT: no SKIP LOCKED) of each table, read before it is written. */
  firstRowLock: Map<string, { position: number; read: LockingRead }>;
  lastEnd: Map<string, number>;
}

/** Without `roles`, the locking reads only (no ends: which writes end a job depends on the states' roles). */
function indexTransactions(entries: readonly Entry[], roles?: StateRoles): Map<string, TransactionIndex> {
  const byKey = new Map<string, TransactionIndex>();
  entries.forEach((entry, position) => {
    if (entry.key === undefined) return;
    let index = byKey.get(entry.key);
    if (!index) byKey.set(entry.key, (index = { firstClaimRead: new Map(), firstRowLock: new Map(), lastEnd: new Map() }));
    const written = new Set(entry.statement.rowWrites.map((w) => tableOf(w.table)));
    for (const read of entry.statement.lockingReads) {
      // A lock that gates another table's claim holds no job of its own.
      if (read.gates) continue;
      const first = read.skipLocked ? index.firstClaimRead : index.firstRowLock;
      for (const table of read.tables.map(tableOf)) {
        if (!written.has(table) && !first.has(table)) first.set(table, { position, read });
      }
    }
    if (roles) for (const write of entry.statement.rowWrites) if (write.op !== 'insert' && writesEnd(write, roles)) index.lastEnd.set(tableOf(write.table), position);
  });
  return byKey;
}

function readQueueFacts(model: FileModel): QueueFacts {
  let lines: ((span: Span) => Ref) | undefined;
  const pgmq = pgmqFactsOf(model, (span) => (lines ??= refMaker(model.text))(span));
  const facts: QueueFacts = { claims: pgmq.claims, finishes: pgmq.finishes, heartbeats: pgmq.heartbeats, sweeps: [], futureTimes: [] };
  if (pgmq.countChecks.length > 0) facts.countChecks = pgmq.countChecks;
  const createdCounters = createdCounterColumns(model);
  if (createdCounters.length > 0) facts.createdCounters = createdCounters;
  // Every fact below comes of a row write or a function's `select now() + ...` of a site that runs more than once: a
  // file with neither (a migration of DDL, or one whose only writes are its own one-off backfills) has none.
  if (!model.sites.some((site) => !site.runsOnce && site.analysis.statements.some((s) => s.rowWrites.length > 0 || s.selectsNowPlus))) return facts;
  const ref = refMaker(model.text);
  const jobScopes = new Set(model.jobTransactions.map((j) => j.scopeId));

  const entries: Entry[] = [];
  for (const site of model.sites) {
    for (const statement of site.analysis.statements) {
      entries.push({ site, statement: withBoundStrings(statement, bindOf(site, statement), namedStatesOf(site, statement)), key: site.scope.kind === 'transaction' ? site.scope.id : undefined });
    }
  }
  // The order the sites run in (a helper's statements where the walk reached its call), and within a site source
  // order: a PL/pgSQL FOR loop's query comes before the loop's body.
  const siteOrder = new Map(model.sites.map((site, i) => [site, i]));
  entries.sort((a, b) => siteOrder.get(a.site)! - siteOrder.get(b.site)! || a.statement.span.start - b.statement.span.start);
  // The state column and running states by what the claims do: the moves of rows the statement's own SKIP LOCKED read picked.
  // Also the moves of rows an earlier SKIP LOCKED read of the transaction picked (an ORM's read, then its save).
  const claimReads = indexTransactions(entries);
  const roles = stateRolesOf(
    entries.flatMap(({ statement, key }, position) =>
      statement.rowWrites.map((write) => {
        const own = mergedClaimRead(statement.lockingReads.filter((l) => l.skipLocked && !l.gates && tablesOf(l).some((t) => mayBeSameTable(t, write))));
        const first = key === undefined ? undefined : claimReads.get(key)?.firstClaimRead.get(tableOf(write.table));
        const read = own ?? (first && first.position < position && tablesOf(first.read).some((t) => mayBeSameTable(t, write)) ? first.read : undefined);
        return { write, predicate: [...(read?.where ?? pickedByRead(write) ?? []), ...(read || pickedByRead(write) ? write.where : [])] };
      }),
    ),
  );
  const transactions = indexTransactions(entries, roles);
  const lockFences = heldFences(entries);
  const lockedApart = checkedUnderLock(entries);

  // The index is keyed by the bare name; the schemas then decide whether the read may be of the written table.
  const claimReadOf = (entry: Entry, position: number, name: TableName, write?: RowWrite) => {
    const locks = (l: LockingRead) => l.skipLocked && !l.gates && tablesOf(l).some((t) => mayBeSameTable(t, name));
    // Several SKIP LOCKED reads of the table in the statement (new jobs UNION expired leases): one predicate.
    const own = mergedClaimRead(entry.statement.lockingReads.filter(locks));
    const index = entry.key === undefined ? undefined : transactions.get(entry.key);
    const first = index?.firstClaimRead.get(tableOf(name.table));
    const earlier = (first && first.position < position && locks(first.read) ? first.read : undefined) ?? (own || !write ? undefined : startedRun(index, position, name, write));
    return { claimRead: own ?? earlier, earlier };
  };
  // A job the host names (an id off a stream or a notification), locked without SKIP LOCKED by a read that admits a
  // waiting state, then moved to a running state by id: the take of that job, whose read is the claim's predicate.
  // Not a heartbeat of a run that holds it: a heartbeat never moves a waiting job on.
  const startedRun = (index: TransactionIndex | undefined, position: number, name: TableName, write: RowWrite) => {
    const lock = index?.firstRowLock.get(tableOf(name.table));
    if (!lock || lock.position >= position || !tablesOf(lock.read).some((t) => mayBeSameTable(t, name))) return undefined;
    const status = write.assignments.find((a) => roles.isState(a.column));
    const setsRunning = status !== undefined && statusValues(status.value).some((v) => roles.isRunning(v));
    const admitsWaiting = lock.read.where.some((c) => !c.underOr && comparedStates(c, roles).some((v) => !roles.isRunning(v)));
    const byId = write.where.some((c) => isRowId(c.column, write.table) && c.op === '=') && lock.read.where.some((c) => isRowId(c.column, write.table) && c.op === '=');
    return setsRunning && admitsWaiting && byId ? lock.read : undefined;
  };

  // The counters the file's claims increment count as attempt counters for every statement of the file.
  const counters = new Map<string, Direction>();
  // The lease roles the file's claims give their columns (`hold_until = now() + interval '5 minutes'`), per table: a
  // separate sweep of the table that takes back `hold_until < now()` takes back expired leases, as one on `locked_until` does.
  const leases = new Map<string, LeaseRoles>();
  entries.forEach((entry, position) => {
    if (entry.site.runsOnce) return;
    for (const write of entry.statement.rowWrites) {
      if (write.op !== 'update') continue;
      const w = readWrite(write, claimReadOf(entry, position, write, write).claimRead, counters, roles, bindOf(entry.site, entry.statement), false, clockOf(entry.site, entry.statement));
      // A sweep's own counter too (`requeued_count = requeued_count + 1` as it takes jobs back).
      if ((w.isClaim || w.isSweep) && w.counter) counters.set(w.counter, w.countsDown ? 'down' : 'up');
      if (w.isClaim) leases.set(tableOf(write.table), withLearntLeases(leaseRoles(write, false, clockOf(entry.site, entry.statement)), leases.get(tableOf(write.table))));
    }
  });

  // A helper handed the transaction's connection runs its statements under that transaction's locks, where they are read;
  // the copy its own walk recorded, on a connection it could not tell, is the same statement.
  const underLock = new Set(entries.filter((e, i) => e.key !== undefined && e.statement.rowWrites.some((w) => claimReadOf(e, i, w, w).earlier)).map((e) => e.statement.span.start));
  entries.forEach((entry, position) => {
    const { statement, key } = entry;
    if (key === undefined && underLock.has(statement.span.start)) return;
    // A migration's own UPDATE of stuck jobs runs once, at deploy: no claim, sweep or finish of the running queue.
    if (entry.site.runsOnce) return;
    const routine = statement.routine;
    if (statement.selectsNowPlus && routine?.kind === 'function' && routine.language === 'sql') facts.futureTimes.push(bareTable(routine.name.toLowerCase()));
    for (const write of statement.rowWrites) {
      if (write.op === 'insert') {
        const retry = retryFactOf(write, counters, ref);
        if (retry) (facts.retries ??= []).push(retry);
        continue;
      }
      // The default schema is the unit's, unknown here: within one statement or transaction, `jobs` may be `billing.jobs`.
      const name: TableName = write.schema ? { table: write.table, schema: write.schema } : { table: write.table };
      const table = tableOf(write.table);
      const { claimRead, earlier } = claimReadOf(entry, position, name, write);
      const bind = bindOf(entry.site, entry.statement);
      const clock = clockOf(entry.site, entry.statement);
      const learnt = leases.get(table);
      let w = readWrite(write, claimRead, counters, roles, bind, false, clock, learnt);
      // A column set to a function's value and taken back once it has passed: a claim if the function returns a later time.
      let leaseBy: string[] | undefined;
      if (!w.isClaim && write.op === 'update' && write.assignments.some((a) => callsOnly(a.value))) {
        const assumed = readWrite(write, claimRead, counters, roles, bind, true, clock, learnt);
        const lease = write.assignments.find((a) => a.column === assumed.lease?.column)?.value;
        if (assumed.isClaim && lease && callsOnly(lease) && lease.kind === 'expression') [w, leaseBy] = [assumed, lease.functions];
      }

      if (w.isClaim && !w.increments && w.limit && claimRead) {
        const joined = joinedCount(entries, position, key, claimRead, write, w.limit.column);
        if (joined) w = { ...w, increments: true, counter: joined };
      }
      if (w.isClaim) {
        const lastEnd = key === undefined ? undefined : transactions.get(key)?.lastEnd.get(table);
        const finishedLater = lastEnd !== undefined && lastEnd > position;
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
          retryAt: w.retry ? ref(w.retry.span) : undefined,
          limitAt: w.limit ? ref(w.limit.span) : undefined,
          limitInBranch: w.limit?.underOr || undefined,
          limitUnknown: (!w.limit && (w.flagTested || w.compareAndSet)) || undefined,
          reclaimByHost: w.compareAndSet || undefined,
          increments: w.increments,
          counter: w.counter,
          countsDown: w.countsDown || undefined,
          writes: w.writes,
          takes: w.takes,
          sets: w.sets.length > 0 ? w.sets : undefined,
          byWorkerBeat: w.workerBeat,
          leaseBy,
          cadence: (w.sets.length === 0 && w.takes.length === 0 && w.lease !== undefined && CADENCE_COLUMN.test(w.lease.column)) || undefined,
          ...pgmqQueueOf(name, model, statement),
        });
        continue;
      }
      // A write in the claim's own transaction runs under the claim's row lock (one-transaction design); one that
      // moves the picked rows that reached the limit to a dead state is the claim's exhaust branch: it retires them.
      if (earlier) {
        const exhausted = w.dead && write.op === 'update' ? write.where.find((c) => isExhausted(c, counterTest(counters))) : undefined;
        if (exhausted) facts.sweeps.push({ ...name, at: ref(write.span), dead: true, requeue: false, sets: w.sets, increments: w.increments, limitAt: ref(exhausted.span) });
        continue;
      }
      if (w.isSweep) {
        facts.sweeps.push({
          ...name,
          at: ref(write.span),
          dead: w.dead,
          requeue: w.requeue,
          sets: w.sets,
          takes: w.takes.length > 0 ? w.takes : undefined,
          increments: w.increments,
          limitAt: w.limit ? ref(w.limit.span) : w.attemptInCase ? ref(w.statusSpan ?? write.span) : undefined,
          reclaimAt: w.reclaim ? ref(w.reclaim.span) : undefined,
          reclaimColumn: w.reclaim?.column || undefined,
          leaseSeconds: w.reclaimSeconds,
          byWorkerBeat: w.workerBeat,
        });
        continue;
      }
      if (w.isHeartbeat) {
        const checked = key === undefined && entry.site.scope.kind === 'unknown' && lockedApart(table) ? { checkedUnderLock: true } : {};
        facts.heartbeats.push({ ...name, column: w.extended!, at: ref(write.span), whereAt: ref(write.where[0]?.span ?? write.span), compared: withLockFences(w.compared, lockFences(key, table, position)), by: w.by, ...checked });
        continue;
      }
      if (w.isFinish) {
        facts.finishes.push({
          ...name,
          kind: w.done ? 'finish' : 'fail',
          at: ref(write.span),
          whereAt: ref(write.where[0]?.span ?? write.span),
          compared: withLockFences(w.compared, lockFences(key, table, position)),
          by: w.by,
          setsDead: w.dead && write.op !== 'delete',
          sets: w.sets,
          increments: w.increments,
          gatedOn: w.gatedOn,
          ...(key === undefined && entry.site.scope.kind === 'unknown' && lockedApart(table) ? { checkedUnderLock: true } : {}),
        });
      }
    }
  });
  return facts;
}

/**
 * The WHERE admits only jobs no live lease holds: `locked_at is null`, or `locked_by is null or locked_at < now() -
 * interval '4 hours'` (an OR of null tests and expired-lease tests only). An operator's act on waiting or abandoned
 * jobs by id (graphile's first complete_jobs and reschedule_jobs), not the end of a run a worker holds.
 */
function unheldOnly(where: readonly Comparison[], roles: LeaseRoles): boolean {
  const isNull = (c: Comparison) => c.op === 'is null' && !c.negated;
  if (where.some((c) => !c.underOr && isNull(c) && isLeaseColumn(c.column))) return true;
  const branches = where.filter((c) => c.underOr);
  return branches.some(isNull) && branches.some((c) => isExpiredLease(c, roles, true)) && branches.every((c) => isNull(c) || isExpiredLease(c, roles, true));
}

/**
 * A claim whose locking read joins the table it stamps with the job's own (a per-queue lock row: `from job_queues join
 * jobs using (queue_name) where ... and attempts < 25 for update skip locked`), and whose transaction then counts the
 * job the read picked (`update jobs set attempts = attempts + 1 where id = v_job_id`): the attempt the read limits is
 * counted with the claim, in another table. The counter's column, or undefined.
 */
function joinedCount(entries: readonly Entry[], position: number, key: string | undefined, read: LockingRead, write: RowWrite, limited: string): string | undefined {
  if (key === undefined || read.tables.length < 2) return undefined;
  const others = read.tables.map(tableOf).filter((t) => t !== tableOf(write.table));
  for (let i = position + 1; i < entries.length; i++) {
    if (entries[i].key !== key) continue;
    for (const later of entries[i].statement.rowWrites) {
      if (later.op !== 'update' || !others.includes(tableOf(later.table))) continue;
      if (later.assignments.some((a) => a.column === limited && a.value.kind === 'increment' && a.value.by === 1)) return limited;
    }
  }
  return undefined;
}

/** The counter and limit columns of the tables the file creates (a DDL file has no other queue facts: read first). */
function createdCounterColumns(model: FileModel): NonNullable<QueueFacts['createdCounters']> {
  const out: NonNullable<QueueFacts['createdCounters']> = [];
  for (const site of model.sites) {
    for (const { createdTable: created } of site.analysis.statements) {
      if (!created) continue;
      const limits = created.columns.filter((c) => LIMIT_COLUMN.test(c));
      const counters = created.columns.filter((c) => ATTEMPT_COLUMN.test(c));
      if (limits.length > 0 || counters.length > 0) out.push({ table: created.table, ...(created.schema ? { schema: created.schema } : {}), counters, limits });
    }
  }
  return out;
}

/** The table a statement names, as the queue facts key it. */
function tableOf(table: string): string {
  return bareTable(table);
}

/** The write ends the job's run: a done/dead/queued state, or the row deleted. */
function writesEnd(write: RowWrite, roles: StateRoles): boolean {
  if (write.op === 'delete') return true;
  const status = write.assignments.find((a) => roles.isState(a.column));
  return status !== undefined && !statusValues(status.value).some((v) => roles.isRunning(v));
}

interface WriteReading {
  isClaim: boolean;
  isSweep: boolean;
  isHeartbeat: boolean;
  isFinish: boolean;
  lease?: { column: string; span: Span };
  /** The column a heartbeat moves forward. */
  extended?: string;
  leaseSeconds?: number;
  leaseFromCode: boolean;
  reclaim?: Comparison;
  reclaimSeconds?: number;
  retry?: Comparison;
  limit?: Comparison;
  /** The predicate compares a column with true/false: a flag that may say more than the analysis reads. */
  flagTested: boolean;
  increments: boolean;
  counter?: string;
  countsDown: boolean;
  writes: string[];
  takes: string[];
  sets: string[];
  dead: boolean;
  done: boolean;
  requeue: boolean;
  attemptInCase: boolean;
  statusSpan?: Span;
  compared: string[];
  by: string;
  gatedOn?: string[];
  workerBeat?: { table?: string; column: string };
  /** An optimistic claim: the host decided the lease had expired. */
  compareAndSet: boolean;
}

/** A change of the counter by an amount the code gives (`coalesce($3 + attempts, attempts)`): it may be 0 or less; not a count. */
const byCode = (v: AssignedValue) => v.kind === 'expression' && v.params === true;

/** A value the code gives at run time: a placeholder, or an expression over one (`now() + $2 * interval '1 second'`). */
const fromCode = (v: AssignedValue | ComparedValue) => v.kind === 'param' || (v.kind === 'expression' && v.params === true);

function readWrite(
  write: RowWrite,
  claimRead: LockingRead | undefined,
  fileCounters: FileCounters,
  states: StateRoles,
  bind?: BindParam,
  assumeCalls = false,
  clock?: ClockParam,
  learnt?: LeaseRoles,
): WriteReading {
  // A SKIP LOCKED read's filter, or that of a plain read whose row the write takes by id.
  const picked = claimRead ? undefined : pickedByRead(write);
  const predicate = [...(claimRead?.where ?? picked ?? []), ...write.where];
  const status = write.assignments.find((a) => states.isState(a.column));
  const values = status ? statusValues(status.value) : [];
  // A CASE on the counter: the state exhausted jobs get is not given to the others (`then 'executing'` leaves them as they are).
  const byLimit = status ? statesByLimit(status.value, counterTest(fileCounters)) : undefined;
  const setsRunning = (byLimit?.others ?? values).some((v) => states.isRunning(v));
  const takes = [...new Set(predicate.flatMap((c) => comparedStates(c, states)))];
  const takesRunning = takes.some((v) => states.isRunning(v));
  // The write's own lease roles, and those the file's claims gave the table's columns.
  const roles = withLearntLeases(leaseRoles(write, assumeCalls, clock), learnt, takesRunning);
  // A claim that marks its jobs running and whose status filter (not under an OR) admits only waiting states
  // never sees a running job: a lease test in it (`and (locked_until is null or locked_until < now())`) takes
  // nothing back. Whatever re-queues expired jobs is a sweep, and is judged there.
  const statusFilter = predicate.filter((c) => !c.underOr && comparedStates(c, states).length > 0);
  const waitingOnly = setsRunning && statusFilter.length > 0 && statusFilter.every((c) => !comparedStates(c, states).some((v) => states.isRunning(v)));
  const reclaimByLease = waitingOnly ? undefined : predicate.find((c) => isExpiredLease(c, roles, takesRunning));
  const stale = reclaimByLease || waitingOnly ? undefined : staleWorker(predicate, tableOf(write.table));
  const reclaim = reclaimByLease ?? stale?.comparison;
  // A lease column by its name, or by its role: the claim sets it and takes the jobs back once it has passed. A claim
  // that stamps both ends (`locked_at = now()`, `lock_expires_at = now() + interval '5 minutes'`) leases until the one
  // its take-back tests, else until the end: the start says when the run began, not how long it may hold the job.
  const leaseWrites = write.assignments.filter((a) => isLeaseColumn(a.column) && !(a.value.kind === 'literal' && a.value.value === null));
  const leaseAssignment =
    leaseWrites.find((a) => a.column === reclaimByLease?.column) ??
    leaseWrites.find((a) => LEASE_END_COLUMN.test(a.column) || roles.end.has(a.column)) ??
    leaseWrites[0] ??
    (reclaimByLease && (roles.end.has(reclaimByLease.column) || roles.start.has(reclaimByLease.column)) ? write.assignments.find((a) => a.column === reclaimByLease.column) : undefined);
  const clearsLease = write.assignments.some((a) => isLeaseColumn(a.column) && a.value.kind === 'literal' && a.value.value === null);
  const fromWaiting = takes.some((v) => !states.isRunning(v));
  const leaseIsNull = predicate.some((c) => isLeaseColumn(c.column) && c.op === 'is null');
  const isUpdate = write.op === 'update';

  // By role: under a SKIP LOCKED read (or a read whose row the write takes by id), a move from the states it takes to another live state (`'Pending'` to
  // `'Queued'`) that also writes the lease (`lock_at = now()`, `locked_until = ...`) takes the job, whatever the state is called.
  // A promotion (`'scheduled'` to `'queued'`) writes no lease and stays what it is.
  // The claim may also take its own state back once the lease expired (`status = 'pending' or (status = 'reviewing'
  // and locked_until < now())`): it still moves jobs on from a state it does not write.
  const movesOn =
    (claimRead !== undefined || picked !== undefined) &&
    leaseAssignment !== undefined &&
    values.length > 0 &&
    takes.some((v) => !values.includes(v)) &&
    // From a waiting state: a write that takes only running jobs (`'claimed'` gone stale) and moves them on puts them back.
    takes.some((v) => !states.isRunning(v)) &&
    values.every((v) => (!takes.includes(v) || reclaimByLease !== undefined) && !DONE_STATUS.test(v) && !DEAD_STATUS.test(v));
  // An optimistic claim (compare and set, no row lock): by id, it writes the lease end and a token of the worker's it
  // does not compare, where the lease still holds the value the worker read (`and locked_until = $3`). The host saw
  // the lease expired: the claim takes jobs back, and whether it counts or stops at a limit is the host's to say.
  const endsLease = leaseAssignment !== undefined && (LEASE_END_COLUMN.test(leaseAssignment.column) || roles.end.has(leaseAssignment.column));
  const casLease =
    claimRead === undefined && isUpdate && endsLease && (!status || setsRunning) && write.where.some((c) => isRowId(c.column, write.table) && c.op === '=')
      ? write.where.find((c) => c.column === leaseAssignment.column && c.op === '=' && !c.underOr && !c.negated && c.value.kind === 'param')
      : undefined;
  const cas = casLease && write.assignments.some((a) => a !== leaseAssignment && a.value.kind === 'param' && !write.where.some((c) => c.column === a.column)) ? casLease : undefined;
  // A claim hands the worker what it took: it returns the rows, or writes or compares a value of the worker's (its id,
  // the job's id it read). A lease-only update that does neither (`set last_active = now()` of rows a CTE picked, no
  // RETURNING) keeps rows fresh and gives no one a job.
  const handsOver =
    write.returning ||
    write.assignments.some((a) => fromCode(a.value)) ||
    write.where.some((c) => fromCode(c.value));
  const isClaim =
    isUpdate &&
    (setsRunning || movesOn || (leaseAssignment !== undefined && !status && handsOver)) &&
    (claimRead !== undefined || fromWaiting || reclaim !== undefined || leaseIsNull || cas !== undefined);

  const requeue = values.some((v) => !states.isRunning(v) && !DEAD_STATUS.test(v) && !DONE_STATUS.test(v)) || (clearsLease && !status);
  const sweepStale = isUpdate || write.op === 'delete' ? staleWorker(write.where, tableOf(write.table)) : undefined;
  // The write's own WHERE, also as the conditions of the CTE it joins (the same comparison, read again there).
  // Also a lease test of the write's own, where an earlier read of the transaction found the same rows (a PL/pgSQL
  // reaper's `for r in select ... where lease_end < now() loop update ... where id = r.id`, read with the loop's WHERE).
  const reclaimInWhere =
    (reclaim !== undefined && write.where.some((c) => c === reclaim || (c.span.start === reclaim.span.start && c.column === reclaim.column) || (claimRead !== undefined && !waitingOnly && isExpiredLease(c, roles, takesRunning)))) ||
    sweepStale !== undefined;
  // A statement that takes expired jobs back into the queue, counts them as it does (`requeued_count = requeued_count + 1`)
  // and stops below a limit on that column (`requeued_count < max_requeues`): its counter, whatever it is called. Not a
  // limit it raises (`max_attempts = max_attempts + 1`).
  const takesBack = !isClaim && reclaimInWhere && requeue;
  const stopsBelow = (a: ColumnAssignment) =>
    a.value.kind === 'increment' && a.value.by === 1 && predicate.some((c) => c.column === a.column && (c.op === '<' || c.op === '<=') && !c.negated && !c.underOr);
  // The attempt counter: in a claim, whatever column it increments; elsewhere, by name or as one of the file's claims counts it.
  const selfIncrement = (a: ColumnAssignment) => a.value.kind === 'increment' || (a.value.kind === 'expression' && a.value.columns.includes(a.column) && a.value.functions.length === 0);
  const { isCounter } = counterTest(fileCounters);
  const counterAssignment = isClaim
    ? (write.assignments.find((a) => isCounter(a.column) && selfIncrement(a)) ?? write.assignments.find(selfIncrement))
    : (write.assignments.find((a) => isCounter(a.column) && !byCode(a.value) && (selfIncrement(a) || (a.value.kind === 'expression' && a.value.columns.some(isCounter)))) ??
      (takesBack ? write.assignments.find(stopsBelow) : undefined));
  const increments = counterAssignment !== undefined;
  const counter = counterAssignment?.column;
  const countsDown = counterAssignment !== undefined && directionOf(counterAssignment.value) === 'down';
  const counters = counterTest(fileCounters, counter === undefined ? undefined : { column: counter, direction: countsDown ? 'down' : 'up' });
  const isClaimCounter = counters.isCounter;

  // Lease length: the assignment's interval (locked_until = now() + interval '30 seconds'),
  // else the expiry comparison's (locked_at < now() - interval '4 hours').
  let leaseSeconds: number | undefined;
  let leaseFromCode = false;
  if (leaseAssignment) {
    const v = leaseAssignment.value;
    const endsLease = LEASE_END_COLUMN.test(leaseAssignment.column) || roles.end.has(leaseAssignment.column);
    const bound = boundSeconds(v, bind) ?? clockSeconds(v, clock);
    if (bound !== undefined) {
      if (endsLease) leaseSeconds = Math.abs(bound);
    } else if (fromCode(v)) leaseFromCode = true;
    else if (v.kind === 'expression' && v.intervalSeconds !== undefined && endsLease) leaseSeconds = Math.abs(v.intervalSeconds);
  }
  // A cutoff the host reads from the clock (`locked_at < $1` with `new Date(Date.now() - STALE_MS)`): as far back as it is; `new Date()` is now, no window.
  const pastCutoff = reclaim ? clockSeconds(reclaim.value, clock) : undefined;
  const reclaimBound = reclaim ? (boundSeconds(reclaim.value, bind) ?? (pastCutoff !== undefined && pastCutoff < 0 ? pastCutoff : undefined)) : undefined;
  const reclaimSeconds =
    reclaimBound !== undefined
      ? Math.abs(reclaimBound)
      : reclaim?.value.kind === 'expression' && reclaim.value.intervalSeconds !== undefined
        ? Math.abs(reclaim.value.intervalSeconds)
        : undefined;
  if (leaseSeconds === undefined && !leaseFromCode && reclaim && !(LEASE_END_COLUMN.test(reclaim.column) || roles.end.has(reclaim.column))) {
    if (reclaimSeconds !== undefined) leaseSeconds = reclaimSeconds;
    else leaseFromCode = fromCode(reclaim.value);
  }

  const attemptInCase = status?.value.kind === 'expression' && status.value.columns.some(isClaimCounter);
  const exhausted = write.where.find((c) => isExhausted(c, counters));
  // Exhausted jobs marked out of the queue: the write sets a column its own take-back requires null (`permanently_failed_at is null`).
  const marksOut = exhausted !== undefined && write.assignments.some((a) => !(a.value.kind === 'literal' && a.value.value === null) && write.where.some((c) => c.column === a.column && c.op === 'is null' && !c.underOr));
  const dead = write.op === 'delete' || marksOut || (byLimit?.exhausted ?? values).some((v) => DEAD_STATUS.test(v));
  const done = write.op === 'delete' || (values.length > 0 && values.every((v) => DONE_STATUS.test(v)));
  const byId = write.where.some((c) => isRowId(c.column, write.table) && (c.op === '=' || c.op === 'in') && c.value.kind !== 'literal');
  // By the id of a job a worker holds (`id = $1`), not only joined with the rows of a CTE (`t.id = r.id`) or picked by a
  // subquery (`id in (select ...)`) that found them expired.
  const byHeldId = write.where.some((c) => isRowId(c.column, write.table) && (c.op === '=' || c.op === 'in') && c.value.kind !== 'literal' && c.value.kind !== 'column' && c.value.kind !== 'subquery');
  // Also by the caller's set of ids, a subquery of no table (`id in (select unnest($2::uuid[]))`).
  const byHeldIds = byHeldId || write.where.some((c) => isRowId(c.column, write.table) && c.op === 'in' && c.value.kind === 'subquery' && c.value.tables?.length === 0);
  const retry = isClaim ? predicate.find((c) => comparedStates(c, states).some((v) => DEAD_STATUS.test(v))) : undefined;

  // Also a write of the expired jobs at the limit that retires them nowhere (`set last_error = ...`): where their dead state belongs.
  const isSweep = !isClaim && !byHeldId && ((reclaimInWhere && (dead || requeue || clearsLease || exhausted !== undefined)) || (exhausted !== undefined && dead));
  // Equality with a value of the worker's: where a fence can be.
  const compared = [...new Set(write.where.filter((c) => c.op === '=' && !c.underOr && c.value.kind !== 'literal' && c.value.kind !== 'column' && c.column !== '').map((c) => c.column))];
  const stateCompared = write.where.some((c) => states.isState(c.column));
  const by = byId ? (stateCompared ? 'id and state' : 'id') : stateCompared ? 'state' : 'its WHERE';
  const gates = write.where.filter((c) => states.isState(c.column) && !c.underOr);
  const gatedOn = gates.length > 0 && gates.every((c) => comparedStates(c, states).length > 0) ? [...new Set(gates.flatMap((c) => comparedStates(c, states)))] : undefined;
  // A heartbeat moves a lease forward by id: a lease column by name, or any column set to now() or now() + an
  // interval (the rules count it where it is the claim's lease column: `updated_at = now()` for a stale-age lease).
  const extended = leaseAssignment ?? write.assignments.find((a) => roles.end.has(a.column) || roles.start.has(a.column));
  // A move of the job from the states its WHERE requires to another (`'claimed'` to `'running'`) starts a run: no heartbeat.
  const movesState = gatedOn !== undefined && values.length > 0 && values.every((v) => !gatedOn.includes(v));
  const isHeartbeat = !isClaim && !isSweep && isUpdate && byId && extended !== undefined && (!status || (setsRunning && !movesState)) && !clearsLease && !increments;
  // A write of the rows its own SKIP LOCKED read picks takes jobs, whatever it writes: DELETE ... WHERE id = (SELECT ...
  // SKIP LOCKED) RETURNING is a claim that is its own end, and an UPDATE of the picked rows whose new state the analysis
  // cannot read (`status = $1` bound at run time) is a claim it cannot place. Neither is the finish of a job a worker holds.
  const writesPicked = claimRead?.skipLocked === true;
  // By the id of a job a worker holds: a write of the rows a CTE picked by other means (a cancel by filter) ends no one's run.
  const isFinish = !isClaim && !isSweep && !isHeartbeat && !writesPicked && byHeldIds && !unheldOnly(write.where, roles) && (write.op === 'delete' || status !== undefined || clearsLease || increments);

  // What the claim writes of its own: every column it gives a value other than a constant.
  const writes = isClaim ? write.assignments.filter((a) => a.value.kind !== 'literal').map((a) => a.column) : [];
  const limit = predicate.find((c) => isAttemptLimit(c, counters));
  const sweepReclaim = isSweep ? (sweepStale?.comparison ?? reclaim) : (reclaim ?? (isClaim ? cas : undefined));

  return {
    isClaim,
    isSweep,
    isHeartbeat,
    isFinish,
    lease: leaseAssignment ? { column: leaseAssignment.column, span: leaseAssignment.span } : reclaimByLease ? { column: reclaimByLease.column, span: reclaimByLease.span } : undefined,
    extended: extended?.column,
    leaseSeconds,
    leaseFromCode,
    reclaim: sweepReclaim,
    reclaimSeconds: isSweep && sweepStale ? sweepStale.seconds : reclaimSeconds,
    retry,
    limit: limit ?? (isSweep ? exhausted : undefined),
    flagTested: predicate.some((c) => c.value.kind === 'literal' && typeof c.value.value === 'boolean'),
    increments,
    counter,
    countsDown,
    compareAndSet: isClaim && reclaim === undefined && cas !== undefined,
    writes,
    takes,
    sets: values,
    dead,
    done,
    requeue,
    attemptInCase,
    statusSpan: status?.span,
    compared,
    by,
    gatedOn,
    workerBeat: isSweep ? sweepStale?.beat : isClaim ? stale?.beat : undefined,
  };
}

/** A write's compared columns with those its transaction's row lock compared, each once (a lock and a write by the same columns). */
function withLockFences(compared: readonly string[], fences: readonly string[]): string[] {
  return [...new Set([...compared, ...fences])];
}
