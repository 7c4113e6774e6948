// One-transaction jobs, read from the sites a file's walks recorded.
import type { FileModel } from '../../../model/index.ts';
import { bareTable, RUNNING_STATUS, STATUS_COLUMN } from '../../../model/queue.ts';
import { locksRunningOnly } from '../../../model/queue-states.ts';
import type { RowWrite } from '../../../sql/index.ts';
import type { SiteMeta } from './engine-file.ts';

/**
 * One-transaction jobs, as the TS front end reads them: a transaction that
 * rolls back with the job, claims rows with FOR UPDATE SKIP LOCKED, runs
 * the job's work (a call that is not SQL) and ends the job in it (a write
 * of a final status, or a delete, of the claimed table). The failure is
 * counted outside when an except handler of a try around it writes the
 * claimed table in another, known transaction, or in the job's own one when
 * the handler goes on with it (no raise, no rollback): the count commits
 * with the batch.
 */
export function collectJobTransactions(all: SiteMeta[], workIn: ReadonlySet<string>, model: FileModel): void {
  const byScope = new Map<string, SiteMeta[]>();
  for (const meta of all) {
    const scope = meta.site.scope;
    if (scope.kind !== 'transaction' || !scope.rollsBackOnError) continue;
    const list = byScope.get(scope.id) ?? [];
    list.push(meta);
    byScope.set(scope.id, list);
  }
  for (const [scopeId, metas] of byScope) {
    let claimed: Set<string> | undefined;
    let claim: SiteMeta | undefined;
    for (const meta of metas) {
      const read = meta.site.analysis.statements.flatMap((s) => s.lockingReads).find((r) => r.skipLocked && !locksRunningOnly(r));
      if (read) {
        claim = meta;
        claimed = new Set(read.tables.map(bareTable));
        break;
      }
    }
    if (!claim || !claimed || !workIn.has(scopeId)) continue;
    const tables = claimed;
    const endsJob = metas.some((m) =>
      m.site.analysis.statements.some((s) =>
        s.rowWrites.some((w) => tables.has(bareTable(w.table)) && (w.op === 'delete' || w.assignments.some((a) => STATUS_COLUMN.test(a.column) && endsRun(a.value)))),
      ),
    );
    if (!endsJob) continue;
    const tries = new Set(metas.flatMap((m) => m.inTry));
    const counts = (m: SiteMeta) =>
      m.inHandler !== undefined &&
      tries.has(m.inHandler) &&
      m.site.analysis.statements.some((s) => s.rowWrites.some((w) => w.op !== 'insert' && tables.has(bareTable(w.table))));
    // A handler reached before the commit runs in the job's own transaction, whatever paths after the commit say.
    const inside = (m: SiteMeta) => (m.site.scope.kind === 'transaction' && m.site.scope.id === scopeId) || (m.mayBeIn?.includes(scopeId) ?? false);
    const failureCountedOutside = all.some(
      (m) =>
        counts(m) &&
        (inside(m)
          ? m.handlerGoesOn === true && m.site.scope.kind === 'transaction' && m.site.scope.id === scopeId
          : m.site.scope.kind === 'autocommit' || (m.site.scope.kind === 'transaction' && m.site.scope.id !== scopeId)),
    );
    const countedInside = all.find((m) => counts(m) && inside(m));
    const statement = claim.site.analysis.statements.find((s) => s.lockingReads.some((r) => r.skipLocked)) ?? claim.site.analysis.statements[0];
    model.jobTransactions.push({ scopeId, span: statement.span, failureCountedOutside, ...(countedInside && !failureCountedOutside && { failureCountedInside: countedInside.site.span }) });
  }
}

/** A status value that ends the run (not running/claimed/...); a placeholder may be either, so it counts. */
function endsRun(value: RowWrite['assignments'][number]['value']): boolean {
  if (value.kind === 'param') return true;
  const values = value.kind === 'literal' ? (typeof value.value === 'string' ? [value.value] : []) : value.kind === 'expression' ? (value.strings ?? []) : [];
  return values.length > 0 && !values.some((v) => RUNNING_STATUS.test(v));
}
