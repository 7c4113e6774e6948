// A claim whose candidates come from several SKIP LOCKED reads of its table in one statement: CTEs merged by
// UNION (new jobs from one, expired leases from another), or both halves of a UNION in a subquery. The rows
// the claim takes come from any of them, so the reads count as one predicate: a comparison every read makes
// (the same column, operator and value) holds for every row, and one that only some make holds for some
// rows only, as under an OR (`status = 'queued'` in one, `status = 'picked' and heartbeat < now() - ...` in
// the other: the claim takes both states, and takes expired jobs back).
//
// A write may also take the row a plain read of its table picked (`where id = (select id from jobs where ...
// limit 1)`, Prisma's `findFirst` then `updateMany({ where: { id: job.id, ... } })`): no row lock, but the
// read's filter still says which jobs the write takes.
import type { Comparison, LockingRead, RowWrite } from '../sql/index.ts';
import { ID_COLUMN } from './queue-columns.ts';
import { mayBeSameTable } from './tables.ts';

/** The reads as one: the first's place and tables, the comparisons of all of them. */
export function mergedClaimRead(reads: readonly LockingRead[]): LockingRead | undefined {
  if (reads.length <= 1) return reads[0];
  const keyOf = (c: Comparison) => JSON.stringify([c.column, c.op, c.negated === true, c.value]);
  const keysOf = reads.map((r) => new Set(r.where.filter((c) => !c.underOr).map(keyOf)));
  const inEvery = (c: Comparison) => !c.underOr && keysOf.every((keys) => keys.has(keyOf(c)));
  const seen = new Set<string>();
  const where: Comparison[] = [];
  for (const read of reads) {
    for (const c of read.where) {
      if (inEvery(c)) {
        if (seen.has(keyOf(c))) continue;
        seen.add(keyOf(c));
        where.push(c);
      } else where.push({ ...c, underOr: true });
    }
  }
  return { ...reads[0], where };
}

/** The filter of the read whose row the write takes by its id (`id = (select id from <the same table> where ...)`), if it has one. */
export function pickedByRead(write: RowWrite): Comparison[] | undefined {
  // The same table when its schema, where both say one, is the write's (`billing.jobs` is not `public.jobs`).
  const sameTable = (table: string, schema: string | null | undefined) => mayBeSameTable({ table, schema: schema ?? undefined }, { table: write.table, schema: write.schema });
  const picked = write.where.find(
    (c) =>
      !c.underOr &&
      !c.negated &&
      (c.op === '=' || c.op === 'in') &&
      ID_COLUMN.test(c.column) &&
      c.value.kind === 'subquery' &&
      c.value.tables?.length === 1 &&
      sameTable(c.value.tables[0], c.value.schemas?.[0]),
  );
  return picked?.value.kind === 'subquery' ? picked.value.where : undefined;
}
