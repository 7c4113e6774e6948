import { defineRule, type FileModel, type Span } from '../src/model/index.ts';
import { ATTEMPT_COLUMN } from '../src/model/queue.ts';

type Options = Record<string, never>;

export default defineRule<Options>({
  id: 'no-attempts-in-rollback-scope',
  description: 'Disallow counting job attempts inside the transaction that rolls back with the failing job',
  messages: {
    rolledBack:
      "'{{column}}' is incremented inside the transaction that claims the job and runs its work, so a failure rolls the increment back with everything else: a failing job keeps attempts 0 and is retried forever from the head of the queue (measured: picked 10 times out of 10 while the job behind it never ran), and a job that kills the process is re-queued uncounted and kills every worker. Claim in its own transaction that commits the attempt (and a lease) before the work, or count the failure in a separate transaction in a catch.",
    notCounted:
      "This claim and the job's work run in one transaction that never counts the attempt: a failure rolls the job back to the queue unchanged, so a failing job is retried forever from the head of the queue (measured: picked 10 times out of 10 while the job behind it never ran), and a job that kills the process is re-queued and kills every worker. Claim in its own transaction that commits attempts = attempts + 1 (and a lease) before the work, or count the failure in a separate transaction in a catch.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  triggers: ['skip locked', 'skip_locked'],
  check({ file, report }) {
    for (const job of file.jobTransactions) {
      if (job.failureCountedOutside) continue;
      const increment = incrementIn(file, job.scopeId);
      if (increment) report({ messageId: 'rolledBack', data: { column: increment.column }, span: increment.span });
      else report({ messageId: 'notCounted', span: job.span });
    }
  },
});

/** The first `attempts = attempts + 1` of the transaction. */
function incrementIn(file: FileModel, scopeId: string): { column: string; span: Span } | undefined {
  for (const site of file.sites) {
    if (site.scope.kind !== 'transaction' || site.scope.id !== scopeId) continue;
    for (const statement of site.analysis.statements) {
      for (const write of statement.rowWrites) {
        for (const a of write.assignments) {
          if (!ATTEMPT_COLUMN.test(a.column)) continue;
          if (a.value.kind === 'increment' || (a.value.kind === 'expression' && a.value.columns.some((c) => ATTEMPT_COLUMN.test(c)))) return { column: a.column, span: a.span };
        }
      }
    }
  }
  return undefined;
}
