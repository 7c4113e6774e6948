// A fence taken by a row lock: the worker locks its job by id and by a value
// the claim gave it (`select ... from jobs where id = $1 and locked_by = $2
// for update`), then, in the same transaction, writes the job by id. The lock
// found the row only if the lease was still the worker's, and it keeps every
// other run from changing the row until the commit: the write is as fenced as
// if its own WHERE compared `locked_by`.
import type { Comparison, StatementFacts } from '../sql/index.ts';
import { isRowId } from './queue-columns.ts';
import { tablesOf } from './tables.ts';

/** The columns a WHERE compares for equality with a value of the caller's (`locked_by = $2`), not under an OR. */
function callerCompared(where: readonly Comparison[]): string[] {
  const fromCaller = (c: Comparison) => c.value.kind === 'param' || (c.value.kind === 'expression' && c.value.params === true);
  return where.filter((c) => c.op === '=' && !c.underOr && !c.negated && fromCaller(c)).map((c) => c.column);
}

interface HeldLock {
  position: number;
  table: string;
  compared: string[];
}

/**
 * The fences the row locks of each transaction hold, for a write at a later position of the same transaction:
 * locks of one table taken without SKIP LOCKED by the row's id and by other values of the caller's.
 */
export function heldFences(entries: readonly { statement: StatementFacts; key?: string }[]): (key: string | undefined, table: string, position: number) => string[] {
  const byKey = new Map<string, HeldLock[]>();
  entries.forEach(({ statement, key }, position) => {
    if (key === undefined) return;
    for (const read of statement.lockingReads) {
      const tables = tablesOf(read);
      if (read.skipLocked || tables.length !== 1) continue;
      const table = tables[0].table.toLowerCase();
      const compared = callerCompared(read.where);
      if (!compared.some((c) => isRowId(c, table))) continue;
      const fences = compared.filter((c) => !isRowId(c, table));
      if (fences.length === 0) continue;
      const list = byKey.get(key) ?? [];
      list.push({ position, table, compared: fences });
      byKey.set(key, list);
    }
  });
  return (key, table, position) =>
    key === undefined ? [] : (byKey.get(key) ?? []).filter((l) => l.position < position && l.table === table.toLowerCase()).flatMap((l) => l.compared);
}

/**
 * The tables a statement kept apart from its call locks by the row's id alone, without SKIP LOCKED (`select * from
 * jobs where id = $1 for update`, the text of a module of statements another package sends): the host reads the job
 * under that lock and may compare what it read (the owner, the attempt) before it writes the job by id in the same
 * transaction. With the caller unseen, whether it does is unknown: a write of such a table, also apart from its call,
 * is not judged for its fence.
 */
export function checkedUnderLock(entries: readonly { statement: StatementFacts; key?: string; site: { scope: { kind: string } } }[]): (table: string) => boolean {
  const tables = new Set<string>();
  for (const { statement, key, site } of entries) {
    if (key !== undefined || site.scope.kind !== 'unknown') continue;
    for (const read of statement.lockingReads) {
      const locked = tablesOf(read);
      if (read.skipLocked || read.gates || locked.length !== 1) continue;
      const table = locked[0].table.toLowerCase();
      if (callerCompared(read.where).some((c) => isRowId(c, table))) tables.add(table);
    }
  }
  return (table) => tables.has(table.toLowerCase());
}
