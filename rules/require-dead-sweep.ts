import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { LEASE_END_COLUMN, leaseTables, queueFactsOf, type QueueFacts, type TableFacts } from '../src/model/queue.ts';
import { requeues, retires } from '../src/model/queue-roles.ts';
import { limitTexts } from '../src/model/queue-limits.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { UPDATE_SET, DELETE_FROM } from '../src/model/triggers.ts';

type Options = Record<string, never>;

export default defineRule<Options, QueueFacts>({
  id: 'require-dead-sweep',
  description: 'Require a lease design to move exhausted jobs with an expired lease to a dead state',
  messages: {
    noDeadSweep:
      "Jobs of '{{table}}' that crash on their last attempt are left running {{left}}: this {{what}} stops at the attempt limit, and no statement in the project moves them to a dead state{{failPath}}. They stay 'running' forever, hold their unique keys, and nobody is told. Add a sweep: `update {{table}} set status = 'dead' where status = 'running' and {{expired}} and {{exhausted}}`.",
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
  triggers: [UPDATE_SET, DELETE_FROM, ORM_WRITE, ORM_LOCK],
  // Only the whole project can show that no statement sweeps: nothing is decided per file.
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { mode, place }) => {
    if (mode === 'file') return [];
    const out: Decision[] = [];
    for (const table of leaseTables(files)) {
      if (table.sweeps.some((s) => retires(s.fact, table))) continue;
      const counting = table.claims.find((c) => c.fact.counter)?.fact;
      const { exhausted } = limitTexts(counting?.counter ?? 'attempts', counting?.countsDown === true);
      const fail = table.finishes.find((f) => f.fact.setsDead);
      const beat = table.claims.find((c) => c.fact.byWorkerBeat)?.fact.byWorkerBeat ?? table.sweeps.find((s) => s.fact.byWorkerBeat)?.fact.byWorkerBeat;
      // A statement that picks the expired jobs at the limit and leaves them running: the fix goes there.
      const handlers = table.sweeps.filter((s) => s.fact.reclaimAt && s.fact.limitAt && !s.fact.dead && !requeues(s.fact, table));
      const leftBehind = handlers.length
        ? handlers.map((s) => ({ file: s.file, at: s.fact.at, what: 'statement', messageId: 'exhaustedLeftRunning' as const }))
        : [
            ...table.claims.filter((c) => c.fact.reclaimAt && c.fact.limitAt).map((c) => ({ file: c.file, at: c.fact.limitAt!, what: 'claim' })),
            ...table.sweeps.filter((s) => requeues(s.fact, table) && s.fact.reclaimAt && s.fact.limitAt).map((s) => ({ file: s.file, at: s.fact.limitAt!, what: 'sweep' })),
          ].map((l) => ({ ...l, messageId: 'noDeadSweep' as const }));
      for (const { file, at, what, messageId } of leftBehind) {
        const failPath = fail ? ` (the fail update at ${place(fail.file, fail.fact.at, file)} marks a job dead only when its worker lives to report the failure)` : '';
        const left = beat ? 'after their worker died' : 'with an expired lease';
        out.push({ file, at, messageId, data: { table: table.table, what, failPath, left, expired: expiredTest(table, beat), exhausted } });
      }
    }
    return out;
  }),
});

/** The expiry test of the table's lease, for the suggested sweep. */
function expiredTest(table: TableFacts, beat: { table?: string; column: string } | undefined): string {
  if (beat) return `worker_id in (select id from ${beat.table ?? 'workers'} where ${beat.column} < now() - interval '...')`;
  const column = table.claims.find((c) => c.fact.leaseColumn)?.fact.leaseColumn ?? 'locked_until';
  return LEASE_END_COLUMN.test(column) ? `${column} < now()` : `${column} < now() - interval '...'`;
}
