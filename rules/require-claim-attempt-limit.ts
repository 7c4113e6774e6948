import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { leaseTables, queueFactsOf, type QueueFacts } from '../src/model/queue.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { UPDATE_SET } from '../src/model/triggers.ts';

type Options = Record<string, never>;

export default defineRule<Options, QueueFacts>({
  id: 'require-claim-attempt-limit',
  description: 'Require claims that take back expired leases to count the attempt and stop at the attempt limit',
  messages: {
    noLimit:
      "This claim takes back jobs of '{{table}}' whose lease expired but has no attempt limit in its predicate: a job that crashes its worker is claimed again after every lease, forever, and takes down every worker it reaches. Add `and attempts < max_attempts` to the claim's predicate and move exhausted jobs to a dead state.",
    noIncrement:
      "This claim of '{{table}}' does not count the attempt, and {{reclaim}}: a job that crashes its worker comes back with the same attempt count every time and is retried forever. Increment the counter in the claim statement itself (`attempts = attempts + 1`), so it is committed before the job runs.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // Claims, heartbeats and re-queue sweeps are all UPDATEs.
  // ORM_WRITE, ORM_LOCK: SQLAlchemy builders and Django querysets, whose SQL the Python front end writes.
  triggers: [UPDATE_SET, ORM_WRITE, ORM_LOCK],
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { place }) => {
    const out: Decision[] = [];
    for (const table of leaseTables(files)) {
      const requeue = table.sweeps.find((s) => s.fact.requeue && s.fact.reclaimAt);
      for (const { file, fact: claim } of table.claims) {
        if (claim.reclaimAt && !claim.limitAt) {
          out.push({ file, at: claim.reclaimAt, messageId: 'noLimit', data: { table: table.table } });
        }
        if (claim.increments) continue;
        if (claim.reclaimAt) {
          out.push({ file, at: claim.setAt, messageId: 'noIncrement', data: { table: table.table, reclaim: 'it takes the job back when its lease expires' } });
        } else if (requeue) {
          const where = place(requeue.file, requeue.fact.at, file);
          out.push({
            file,
            at: claim.setAt,
            messageId: 'noIncrement',
            data: { table: table.table, reclaim: `the sweep at ${where} puts jobs whose lease expired back in the queue` },
          });
        }
      }
    }
    return out;
  }),
});
