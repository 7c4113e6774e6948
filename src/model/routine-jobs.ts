// One-transaction dequeues written in SQL: a PL/pgSQL function (a cron job,
// a trigger, a DO block) that takes jobs with FOR UPDATE SKIP LOCKED —
// often `for job in select ... for update skip locked loop` — runs their
// work and deletes or finishes them, all in the caller's one transaction.
// A failure anywhere rolls the whole call back, unless the work sits in a
// BEGIN ... EXCEPTION block whose handler records the failure (the handler
// runs after the block's own rollback, and its writes commit with the call).
import { ATTEMPT_COLUMN, bareTable, DONE_STATUS, DEAD_STATUS, STATUS_COLUMN } from './queue.ts';
import { locksRunningOnly } from './queue-states.ts';
import type { FileModel, Span } from './types.ts';
import type { RowWrite, StatementFacts } from '../sql/index.ts';

export interface RoutineJob {
  routine: string;
  table: string;
  /** The statement that takes the jobs. */
  claim: Span;
  /** The work runs in a loop (`for job in select ... loop`): a whole batch shares the transaction. */
  batch: boolean;
  /** An attempt counter incremented outside any EXCEPTION handler: it rolls back with the failure. */
  increment?: { column: string; span: Span };
  /** The work is guarded by an EXCEPTION block. */
  guarded: boolean;
  /** A handler of that block writes the job's row (counts the failure, marks it failed). */
  handlerRecords: boolean;
}

export function routineJobsOf(model: FileModel): RoutineJob[] {
  const byRoutine = new Map<string, StatementFacts[]>();
  for (const site of model.sites) {
    if (site.scope.kind !== 'transaction') continue;
    for (const statement of site.analysis.statements) {
      if (!statement.routine || statement.routine.language !== 'plpgsql') continue;
      const list = byRoutine.get(site.scope.id) ?? [];
      list.push(statement);
      byRoutine.set(site.scope.id, list);
    }
  }
  const jobs: RoutineJob[] = [];
  for (const statements of byRoutine.values()) {
    statements.sort((a, b) => a.span.start - b.span.start);
    // Each table the routine takes with SKIP LOCKED is judged on its own: a function may first take a
    // row of another table (a worker slot, a lock row) that it never finishes, then its jobs.
    const judged = new Set<string>();
    const taken = new Set(statements.flatMap((s) => s.lockingReads.filter((r) => r.skipLocked).flatMap((r) => r.tables.map(bareTable))));
    for (const [claimIndex, claim] of statements.entries()) {
      for (const read of claim.lockingReads) {
        // A read of runs gone stale (`status = 'running' and lock_expires_at < now()`) is a sweep's: its handling of
        // those runs (retire the exhausted, put the others back) is no job's work, and a later claim of the table is judged.
        if (!read.skipLocked || locksRunningOnly(read)) continue;
        const tables = new Set(read.tables.map(bareTable).filter((t) => !judged.has(t)));
        if (tables.size === 0) continue;
        for (const t of tables) judged.add(t);
        const job = jobOf(statements, claimIndex, read.span, tables, taken);
        if (job) jobs.push(job);
      }
    }
  }
  return jobs;
}

/**
 * The job a routine takes from `tables` at `statements[claimIndex]`, when the call also runs its work and ends it.
 * `taken`: every table the routine takes with SKIP LOCKED; releasing one of those rows (the slot) is no job work.
 */
function jobOf(statements: StatementFacts[], claimIndex: number, claimSpan: Span, tables: Set<string>, taken: Set<string>): RoutineJob | undefined {
  const claim = statements[claimIndex];
  const writesJob = (s: StatementFacts, test: (w: RowWrite) => boolean) => s.rowWrites.some((w) => tables.has(bareTable(w.table)) && test(w));
  const after = statements.slice(claimIndex);
  const inHandler = (s: StatementFacts) => s.plpgsql?.handlerOf !== undefined;
  // The call ends the job itself: it deletes it or gives it a final state, outside a handler.
  const ends = after.filter((s) => !inHandler(s) && writesJob(s, endsJob));
  if (ends.length === 0) return undefined;
  // The job's work: a call of a function that is not a builtin, or a write of a table the routine does not take;
  // not what runs only where the claim took no job (a poll loop's sleep in its IF NOT FOUND).
  const tookNone = (s: StatementFacts) => !!s.plpgsql?.tookNothing?.some((t) => t.start === claim.span.start && t.end === claim.span.end);
  const work = after.filter((s) => !inHandler(s) && s !== claim && !tookNone(s) && (callsWork(s) || s.rowWrites.some((w) => !taken.has(bareTable(w.table)))));
  if (work.length === 0) return undefined;
  const guards = new Set(work.flatMap((s) => s.plpgsql?.guardedBy ?? []));
  const guarded = work.every((s) => (s.plpgsql?.guardedBy.length ?? 0) > 0);
  const handlerRecords = statements.some((s) => s.plpgsql?.handlerOf !== undefined && guards.has(s.plpgsql.handlerOf) && writesJob(s, (w) => w.op !== 'insert'));
  let increment: RoutineJob['increment'];
  for (const s of after) {
    if (inHandler(s)) continue;
    for (const w of s.rowWrites) {
      if (!tables.has(bareTable(w.table))) continue;
      const a = w.assignments.find((x) => ATTEMPT_COLUMN.test(x.column) && (x.value.kind === 'increment' || (x.value.kind === 'expression' && x.value.columns.includes(x.column))));
      if (a && !increment) increment = { column: a.column, span: a.span };
    }
  }
  const batch = work.some((s) => s.plpgsql?.inLoop);
  return { routine: claim.routine!.name, table: [...tables][0], claim: claimSpan, batch, increment, guarded, handlerRecords };
}

function endsJob(write: RowWrite): boolean {
  if (write.op === 'delete') return true;
  const status = write.assignments.find((a) => STATUS_COLUMN.test(a.column));
  if (!status) return false;
  const v = status.value;
  const values = v.kind === 'literal' && typeof v.value === 'string' ? [v.value] : v.kind === 'expression' ? (v.strings ?? []) : [];
  return values.some((s) => DONE_STATUS.test(s) || DEAD_STATUS.test(s));
}

/** A call of a function that is not a value builtin (the analyzer leaves those out of `calls`). */
function callsWork(statement: StatementFacts): boolean {
  return (statement.calls?.length ?? 0) > 0;
}
