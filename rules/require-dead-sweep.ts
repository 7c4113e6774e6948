import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { LEASE_END_COLUMN, queueFactsOf, type QueueFacts } from '../src/model/queue.ts';
import { leaseTables, type TableFacts } from '../src/model/queue-tables.ts';
import { requeues, retires } from '../src/model/queue-roles.ts';
import { limitTexts } from '../src/model/queue-limits.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { CREATE_LIMITED_TABLE, UPDATE_SET, DELETE_FROM } from '../src/model/triggers.ts';

type Options = Record<string, never>;

export default defineRule<Options, QueueFacts>({
  id: 'require-dead-sweep',
  description: 'Require a lease design to move exhausted jobs with an expired lease to a dead state',
  messages: {
    noDeadSweep:
      "Jobs of '{{table}}' that crash on their last attempt are left running {{left}}: this {{what}} stops at the attempt limit, and no statement in the project moves them to a dead state{{failPath}}. They stay 'running' forever, hold their unique keys, and nobody is told. Add a sweep: `update {{table}} set status = 'dead' where status = 'running' and {{expired}} and {{exhausted}}`.",
    strandedBySweep:
      "Jobs of '{{table}}' that crash on their last attempt are put back in '{{state}}' by the sweep at {{sweep}}, and this claim takes them only under the attempt limit: no statement in the project moves them to a dead state{{failPath}}, so they wait in '{{state}}' forever, hold their unique keys, and nobody is told. Retire them where the sweep finds them: set the state to `case when {{exhausted}} then 'dead' else '{{state}}' end` there.",
    exhaustedLeftRunning:
      "This {{what}} picks the jobs of '{{table}}' that are at the attempt limit {{left}}, but moves them to no dead state, and no other statement in the project does{{failPath}}: they stay 'running' forever, are found again on every run, hold their unique keys, and nobody is told. Retire them here: a dead state (`status = 'dead'`), or a mark the claims and sweeps skip.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // Claims, finishes and sweeps are UPDATEs or DELETEs; a finish need not name the lease.
  // ORM_WRITE, ORM_LOCK: SQLAlchemy builders and Django querysets, whose SQL the Python front end writes.
  triggers: [UPDATE_SET, DELETE_FROM, ORM_WRITE, ORM_LOCK, CREATE_LIMITED_TABLE],
  // Only the whole project can show that no statement sweeps: nothing is decided per file.
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { mode, place }) => {
    if (mode === 'file') return [];
    const out: Decision[] = [];
    for (const table of leaseTables(files)) {
      if (table.sweeps.some((s) => retires(s.fact, table))) continue;
      if (countIsTheEnd(table)) continue;
      const counting = table.claims.find((c) => c.fact.counter)?.fact;
      const { exhausted } = limitTexts(counting?.counter ?? table.counterColumns[0] ?? 'attempts', counting?.countsDown === true, table.limitColumns);
      const fail = table.finishes.find((f) => f.fact.setsDead);
      const beat = table.claims.find((c) => c.fact.byWorkerBeat)?.fact.byWorkerBeat ?? table.sweeps.find((s) => s.fact.byWorkerBeat)?.fact.byWorkerBeat;
      // A statement that picks the expired jobs at the limit and leaves them running: the fix goes there.
      const handlers = table.sweeps.filter((s) => s.fact.reclaimAt && s.fact.limitAt && !s.fact.dead && !requeues(s.fact, table));
      const leftBehind = handlers.length
        ? handlers.map((s) => ({ file: s.file, at: s.fact.at, what: 'statement', messageId: 'exhaustedLeftRunning' as const }))
        : [
            // A claim that stops at the limit takes expired jobs back itself, or takes what a sweep puts back with none
            // (`set status = 'pending' where locked_at < now() - ...`): either way an exhausted job ends where nothing takes it.
            ...table.claims.filter((c) => c.fact.reclaimAt && c.fact.limitAt).map((c) => ({ file: c.file, at: c.fact.limitAt!, what: 'claim' })),
            ...table.sweeps.filter((s) => requeues(s.fact, table) && s.fact.reclaimAt && s.fact.limitAt).map((s) => ({ file: s.file, at: s.fact.limitAt!, what: 'sweep' })),
          ].map((l) => ({ ...l, messageId: 'noDeadSweep' as const }));
      for (const { file, at, what, messageId } of leftBehind) {
        const failPath = fail ? ` (the fail update at ${place(fail.file, fail.fact.at, file)} marks a job dead only when its worker lives to report the failure)` : '';
        const left = beat ? 'after their worker died' : 'with an expired lease';
        out.push({ file, at, messageId, data: { table: table.table, what, failPath, left, expired: expiredTest(table, beat), exhausted } });
      }
      // A claim that stops at the limit and never takes expired jobs back itself, fed by a sweep that puts them back
      // with no limit (`set status = 'pending' where locked_at < now() - ...`): a job whose last counted attempt
      // crashed ends in the waiting state, where nothing takes it.
      if (handlers.length) continue;
      for (const claim of table.claims) {
        // A limit in one branch of an OR may not hold for the state the sweep sets: then the claim takes the job again.
        if (!claim.fact.limitAt || claim.fact.limitInBranch || claim.fact.reclaimAt) continue;
        const sweep = table.sweeps.find((s) => s.fact.reclaimAt && !s.fact.limitAt && !s.fact.dead && s.fact.sets.some((state) => claim.fact.takes.includes(state)));
        // Where neither counts the crash, only the fail path reaches the limit, and it retires the job itself.
        if (!sweep || !(claim.fact.increments || sweep.fact.increments)) continue;
        const state = sweep.fact.sets.find((x) => claim.fact.takes.includes(x))!;
        const failPath = fail ? ` (the fail update at ${place(fail.file, fail.fact.at, claim.file)} marks a job dead only when its worker lives to report the failure)` : '';
        out.push({
          file: claim.file,
          at: claim.fact.limitAt,
          messageId: 'strandedBySweep',
          data: { table: table.table, state, sweep: place(sweep.file, sweep.fact.at, claim.file), failPath, exhausted },
        });
      }
    }
    return out;
  }),
});

/**
 * A table with no state at all (no claim, finish or sweep reads or writes one, none marks a job dead): its only end for
 * a job that keeps failing is the count at the limit, where the fail path leaves a failed job too (graphile-worker's
 * first design: `attempts < max_attempts` in the claim, a fail that only unlocks). A crash on the last attempt ends the
 * job at that same mark, skipped by every claim, with only its stale lock to tell it apart: no state is left 'running'.
 */
function countIsTheEnd(table: TableFacts): boolean {
  const stateless = (f: { sets?: readonly string[]; takes?: readonly string[] }) => (f.sets?.length ?? 0) === 0 && (f.takes?.length ?? 0) === 0;
  return (
    table.claims.every((c) => stateless(c.fact)) &&
    table.finishes.every((f) => !f.fact.setsDead && (f.fact.gatedOn?.length ?? 0) === 0 && stateless(f.fact)) &&
    table.sweeps.every((s) => !s.fact.dead && stateless(s.fact))
  );
}

/** The expiry test of the table's lease, for the suggested sweep. */
function expiredTest(table: TableFacts, beat: { table?: string; column: string } | undefined): string {
  if (beat) return `worker_id in (select id from ${beat.table ?? 'workers'} where ${beat.column} < now() - interval '...')`;
  const column = table.claims.find((c) => c.fact.leaseColumn)?.fact.leaseColumn ?? 'locked_until';
  return LEASE_END_COLUMN.test(column) ? `${column} < now()` : `${column} < now() - interval '...'`;
}
