// A claim whose candidates come from several SKIP LOCKED reads of its table in one statement: CTEs merged by
// UNION (new jobs from one, expired leases from another), or both halves of a UNION in a subquery. The rows
// the claim takes come from any of them, so the reads count as one predicate: a comparison every read makes
// (the same column, operator and value) holds for every row, and one that only some make holds for some
// rows only, as under an OR (`status = 'queued'` in one, `status = 'picked' and heartbeat < now() - ...` in
// the other: the claim takes both states, and takes expired jobs back).
import type { Comparison, LockingRead } from '../sql/index.ts';

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
