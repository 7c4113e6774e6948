import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { formatSeconds, leaseTables, queueFactsOf, reclaimerOf, type QueueFacts } from '../src/model/queue.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { UPDATE_SET, DELETE_FROM } from '../src/model/triggers.ts';

interface Options {
  longLeaseSeconds?: number;
  maxJobSeconds?: number;
}

export default defineRule<Options, QueueFacts>({
  id: 'require-fenced-finish',
  description: 'Require the finish of a leased job to compare the claimed attempt or lock token',
  messages: {
    unfenced:
      "This {{kind}} of '{{table}}' matches the job by {{by}} only, and the claim at {{claim}} gives a {{lease}} lease {{reclaim}}: a run that outlives its lease is claimed by a second worker, and this late {{kind}} of the first run overwrites the second run's result. Compare the attempt number or lock token the claim returned (`and attempts = $n`, `and locked_by = $worker`) and treat 0 updated rows as a lost lease.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: {
    type: 'object',
    properties: {
      longLeaseSeconds: {
        type: 'number',
        minimum: 0,
        description: 'A lease at least this long (seconds) is taken as longer than any job, and an unfenced finish is not reported. Default 3600.',
      },
      maxJobSeconds: {
        type: 'number',
        minimum: 0,
        description: 'The maximum runtime the workers enforce on a job (seconds). Leases longer than it cannot be outlived, so their finishes are not reported.',
      },
    },
    additionalProperties: false,
  },
  defaultOptions: { longLeaseSeconds: 3600 },
  // Claims, finishes and sweeps are UPDATEs or DELETEs; a finish need not name the lease.
  // ORM_WRITE, ORM_LOCK: SQLAlchemy builders and Django querysets, whose SQL the Python front end writes.
  triggers: [UPDATE_SET, DELETE_FROM, ORM_WRITE, ORM_LOCK],
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { options, place }) => {
    const out: Decision[] = [];
    const long = options.longLeaseSeconds ?? 3600;
    for (const table of leaseTables(files)) {
      for (const { file, fact: finish } of table.finishes) {
        if (finish.fence) continue;
        // The claim that makes the late run possible: a short fixed lease, and expired leases taken back.
        for (const claim of table.claims) {
          const reclaimer = reclaimerOf(table, claim);
          if (!reclaimer) continue;
          const lease = claim.fact.leaseSeconds ?? (claim.fact.leaseFromCode ? undefined : reclaimer.leaseSeconds);
          if (lease === undefined || lease >= long) continue; // a lease set by code, or longer than any job
          if (options.maxJobSeconds !== undefined && options.maxJobSeconds < lease) continue; // the job's own timeout ends it first
          const reclaim =
            reclaimer.by === 'claim' ? 'and takes back expired leases' : `and the sweep at ${place(reclaimer.file, reclaimer.at, file)} puts expired jobs back in the queue`;
          out.push({
            file,
            at: finish.whereAt,
            messageId: 'unfenced',
            data: { kind: finish.kind, table: table.table, by: finish.by, claim: place(claim.file, claim.fact.at, file), lease: formatSeconds(lease), reclaim },
          });
          break;
        }
      }
    }
    return out;
  }),
});
