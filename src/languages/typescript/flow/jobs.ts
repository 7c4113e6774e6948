// One-transaction jobs, read after the walk: a transaction that claims rows
// with SKIP LOCKED and then runs the job's work, and whether a catch counts
// the failure outside the transaction that rolls back.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { FileModel, SqlSite } from '../../../model/index.ts';
import { RUNNING_STATUS, STATUS_COLUMN } from '../../../model/queue.ts';
import type { RowWrite, StatementFacts } from '../../../sql/index.ts';
import type { Tx } from './types.ts';

export interface SiteMeta {
  site: SqlSite;
  tx?: Tx;
  /** Try statements whose block holds the site. */
  inTry: TSESTree.TryStatement[];
  /** Try statements whose catch clause holds the site. */
  inHandler: TSESTree.TryStatement[];
  /** Transactions the site's connection may be in at the site (a catch after a BEGIN: still open, or already ended). */
  mayBeIn?: Tx[];
}

export function bare(table: string): string {
  return table.slice(table.lastIndexOf('.') + 1);
}

/** A status value that ends the run (done, failed, queued again), not one that marks it running. */
function endsRun(value: RowWrite['assignments'][number]['value']): boolean {
  const values = value.kind === 'literal' ? (typeof value.value === 'string' ? [value.value] : []) : value.kind === 'expression' ? value.strings ?? [] : [];
  if (value.kind === 'param') return true;
  return values.length > 0 && !values.some((v) => RUNNING_STATUS.test(v));
}

/** The statement ends the job claimed from `claimed`: it deletes the row or sets a final status. */
export function endsJob(statement: StatementFacts, claimed: ReadonlySet<string>): boolean {
  return statement.rowWrites.some((w) => claimed.has(bare(w.table)) && (w.op === 'delete' || w.assignments.some((a) => STATUS_COLUMN.test(a.column) && endsRun(a.value))));
}

/**
 * One-transaction jobs: a transaction that claims rows with SKIP LOCKED and
 * then runs the job's work. The failure is counted outside when a catch of a
 * try around the claim or the work writes rows in another, known transaction.
 */
export function collectJobTransactions(model: FileModel, txs: readonly Tx[], metas: readonly SiteMeta[]): void {
  for (const tx of txs) {
    if (!tx.claim || !tx.work || !tx.finishes) continue;
    const claimed = new Set(tx.claim.tables.map(bare));
    const counts = (m: SiteMeta) =>
      m.inHandler.some((t) => tx.tries.has(t)) && m.site.analysis.statements.some((s) => s.rowWrites.some((w) => w.op !== 'insert' && claimed.has(bare(w.table))));
    const failureCountedOutside = metas.some((m) => counts(m) && m.tx !== tx && (m.site.scope.kind === 'autocommit' || m.site.scope.kind === 'transaction'));
    // Counted in the catch on the claim's connection before its ROLLBACK: inside the transaction that rolls back.
    const countedInside = metas.find((m) => counts(m) && (m.tx === tx || (m.mayBeIn?.includes(tx) ?? false)));
    model.jobTransactions.push({
      scopeId: tx.info.id,
      span: tx.claim.statement.span,
      failureCountedOutside,
      ...(countedInside && !failureCountedOutside && { failureCountedInside: countedInside.site.span }),
    });
  }
}
