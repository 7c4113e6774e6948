// One-transaction jobs, read after the walk: a transaction that claims rows
// with SKIP LOCKED and then runs the job's work, and whether a catch counts
// the failure outside the transaction that rolls back.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { FileModel, SqlSite } from '../../../model/index.ts';
import { RUNNING_STATUS, STATUS_COLUMN } from '../../../model/queue.ts';
import type { RowWrite, StatementFacts } from '../../../sql/index.ts';
import type { Atom, State } from './state.ts';
import type { Conn, Tx, Value } from './types.ts';

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
 * try around the claim or the work writes rows in another, known transaction,
 * or in the job's own one when that catch goes on with it (no throw, no
 * ROLLBACK) and the work ran no SQL on that transaction (a failure of its own
 * SQL aborts it, and the count with it): the count commits with the batch.
 */
export function collectJobTransactions(
  model: FileModel,
  txs: readonly Tx[],
  metas: readonly SiteMeta[],
  handlerGoesOn: ReadonlyMap<TSESTree.TryStatement, ReadonlySet<Tx>> = new Map(),
): void {
  for (const tx of txs) {
    if (!tx.claim || !tx.work || !tx.finishes) continue;
    const claimed = new Set(tx.claim.tables.map(bare));
    const counts = (m: SiteMeta) =>
      m.inHandler.some((t) => tx.tries.has(t)) && m.site.analysis.statements.some((s) => s.rowWrites.some((w) => w.op !== 'insert' && claimed.has(bare(w.table))));
    // The innermost catch that holds the count ends with the claim's transaction still open and goes on, and the
    // job's work had no SQL of its own on that transaction to abort it before the count.
    const handlerOpen = (m: SiteMeta) => m.tx === tx && m.inHandler.length > 0 && (handlerGoesOn.get(m.inHandler[m.inHandler.length - 1])?.has(tx) ?? false);
    const goesOn = (m: SiteMeta) => !tx.workOnConnection && handlerOpen(m);
    const failureCountedOutside = metas.some(
      (m) => counts(m) && (m.tx !== tx ? m.site.scope.kind === 'autocommit' || m.site.scope.kind === 'transaction' : goesOn(m)),
    );
    // Counted in the catch on the claim's connection before its ROLLBACK: inside the transaction that rolls back.
    const countedInside = metas.find((m) => counts(m) && (m.tx === tx || (m.mayBeIn?.includes(tx) ?? false)));
    model.jobTransactions.push({
      scopeId: tx.info.id,
      span: tx.claim.statement.span,
      failureCountedOutside,
      ...(countedInside && !failureCountedOutside && { failureCountedInside: countedInside.site.span }),
      // No ROLLBACK on that path: the count is lost only when the work's SQL aborted the transaction.
      ...(countedInside && !failureCountedOutside && handlerOpen(countedInside) && { failureCountedGoesOn: true }),
    });
  }
}

/**
 * A catch clause that ends reachable: the transactions still open there (the
 * walks of its function add theirs). Open after an error too: the catch did
 * not roll back, so what it wrote there commits with the rest.
 */
export function noteHandlerGoesOn(into: Map<TSESTree.TryStatement, Set<Tx>>, node: TSESTree.TryStatement, open: readonly Tx[]): void {
  const set = into.get(node) ?? new Set<Tx>();
  for (const tx of open) set.add(tx);
  into.set(node, set);
}

/**
 * The work's arguments hand it the transaction's own connection or handle:
 * SQL of its own failing aborts the transaction. (A helper of the file walked
 * at its call is not asked: its statements are read as the job's own.)
 */
export function handsTransaction(values: readonly (Value | undefined)[], tx: Tx, atomsOf: (conn: Conn) => readonly Atom[]): boolean {
  return values.some((v) => (v?.kind === 'tx' ? v.tx === tx : v?.kind === 'conn' && atomsOf(v.conn).some((a) => a.kind === 'open' && a.tx === tx)));
}

/** The transactions open at a point: those the walk runs in (callbacks), and BEGIN ones of its connections (also after an error). */
export function txsAt(state: State, running: readonly Tx[], afterError: boolean): Tx[] {
  const txs = new Set<Tx>(running);
  for (const atoms of state.conns.values()) for (const a of atoms.values()) if (a.kind === 'open' && (afterError || !a.error)) txs.add(a.tx);
  return [...txs];
}
