import { LineIndex } from '../src/model/lines.ts';
import { defineRule, type FileModel, type Span } from '../src/model/index.ts';
import { ATTEMPT_COLUMN } from '../src/model/queue.ts';
import { routineJobsOf } from '../src/model/routine-jobs.ts';
import { TRANSACTION_OPENED } from '../src/model/triggers.ts';

type Options = Record<string, never>;

export default defineRule<Options>({
  id: 'no-attempts-in-rollback-scope',
  description: 'Disallow counting job attempts inside the transaction that rolls back with the failing job',
  messages: {
    rolledBack:
      "'{{column}}' is incremented inside the transaction that claims the job and runs its work, so a failure rolls the increment back with everything else: a failing job keeps attempts 0 and is retried forever from the head of the queue (measured: picked 10 times out of 10 while the job behind it never ran), and a job that kills the process is re-queued uncounted and kills every worker. Claim in its own transaction that commits the attempt (and a lease) before the work, or count the failure in a separate transaction in the error handler (catch, except).",
    notCounted:
      "This claim and the job's work run in one transaction that never counts the attempt: a failure rolls the job back to the queue unchanged, so a failing job is retried forever from the head of the queue (measured: picked 10 times out of 10 while the job behind it never ran), and a job that kills the process is re-queued and kills every worker. Claim in its own transaction that commits attempts = attempts + 1 (and a lease) before the work, or count the failure in a separate transaction in the error handler (catch, except).",
    countedBeforeRollback:
      "This counts the failure on the claim's own connection while the transaction of the claim at line {{line}} is still open: when the job threw in its own code, the ROLLBACK after it takes the count back; when the job failed on a SQL error, the transaction is aborted, this UPDATE fails ('current transaction is aborted') and the ROLLBACK is never reached. Either way the job keeps its attempt count and is picked again first, forever (measured on PostgreSQL 17.10: attempts 0 after 5 failures, both ways). Roll back first, then count the failure in its own statement.",
    countedInAbortedTransaction:
      "This counts the failure on the claim's own connection in a catch that goes on with the transaction of the claim at line {{line}} still open, and the job's work runs SQL on that transaction: no ROLLBACK takes the count back when the job throws in its own code, but when the job fails on a SQL error the transaction is aborted, this UPDATE fails ('current transaction is aborted'), and the transaction can only end in a rollback (PostgreSQL answers the COMMIT of an aborted transaction with ROLLBACK). The job keeps its attempt count and is picked again first. Count the failure where the work's SQL cannot abort it: in its own transaction after the job's, or after rolling back to a SAVEPOINT taken before the work.",
    functionNotCounted:
      "This function takes jobs of '{{table}}' with FOR UPDATE SKIP LOCKED and finishes them in the caller's one transaction, and nothing records a failure: when a job raises, the whole call rolls back{{batch}}, and the next call takes the same job again, first (measured on PostgreSQL 17.10: the poison job taken on 5 calls of 5, the other jobs never finished). Wrap each job's work in `BEGIN ... EXCEPTION WHEN OTHERS THEN` and record the failure in the handler (`attempts = attempts + 1`, a failed state), and skip exhausted jobs in the claim.",
    functionRolledBack:
      "'{{column}}' is incremented in the same transaction as the job's work, outside any EXCEPTION handler: when the job raises, the whole call rolls back and the increment with it{{batch}}, so the job keeps its count and is taken again by every call, forever. Count the failure in an EXCEPTION handler around the job's work: the handler runs after the block's own rollback, and its write commits with the call.",
    functionHandlerForgets:
      "The EXCEPTION handler around this function's job work catches the failure but writes nothing to '{{table}}': the block's work is rolled back, the job stays where the claim takes it, and every call takes it again, forever. Record the failure in the handler (`attempts = attempts + 1`, `status = 'failed'`) and skip exhausted jobs in the claim.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // skiplocked: the builders' .skipLocked() and Drizzle's { skipLocked: true } (triggers match in any case).
  // TRANSACTION_OPENED: a transaction handed to project functions whose claim and count are another module's.
  triggers: ['skip locked', 'skip_locked', 'skiplocked', TRANSACTION_OPENED],
  check({ file, report }) {
    let lines: LineIndex | undefined;
    let increments: Map<string, { column: string; span: Span }> | undefined;
    for (const job of file.jobTransactions) {
      if (job.failureCountedOutside) continue;
      if (job.failureCountedInside) {
        lines ??= new LineIndex(file.text);
        const messageId = job.failureCountedGoesOn ? 'countedInAbortedTransaction' : 'countedBeforeRollback';
        report({ messageId, data: { line: lines.position(job.span.start).line }, span: job.failureCountedInside });
        continue;
      }
      increments ??= firstIncrements(file);
      const increment = increments.get(job.scopeId);
      if (increment) report({ messageId: 'rolledBack', data: { column: increment.column }, span: increment.span });
      else report({ messageId: 'notCounted', span: job.span });
    }
    for (const job of routineJobsOf(file)) {
      const batch = job.batch ? ' with every job of its batch' : '';
      if (job.guarded) {
        if (!job.handlerRecords) report({ messageId: 'functionHandlerForgets', data: { table: job.table }, span: job.claim });
      } else if (job.increment) {
        report({ messageId: 'functionRolledBack', data: { column: job.increment.column, batch }, span: job.increment.span });
      } else {
        report({ messageId: 'functionNotCounted', data: { table: job.table, batch }, span: job.claim });
      }
    }
  },
});

/** The first `attempts = attempts + 1` of each transaction: one pass over the file. */
function firstIncrements(file: FileModel): Map<string, { column: string; span: Span }> {
  const found = new Map<string, { column: string; span: Span }>();
  // A project function's SQL run in the transaction a call hands it is that transaction's (calledSites).
  for (const site of [...file.sites, ...(file.calledSites ?? [])]) {
    if (site.scope.kind !== 'transaction' || found.has(site.scope.id)) continue;
    for (const statement of site.analysis.statements) {
      for (const write of statement.rowWrites) {
        for (const a of write.assignments) {
          if (found.has(site.scope.id) || !ATTEMPT_COLUMN.test(a.column)) continue;
          if (a.value.kind === 'increment' || (a.value.kind === 'expression' && a.value.columns.some((c) => ATTEMPT_COLUMN.test(c)))) found.set(site.scope.id, { column: a.column, span: a.span });
        }
      }
    }
  }
  return found;
}
