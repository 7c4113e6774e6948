import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision, type FileFacts } from '../src/model/cross-file.ts';
import { formatSeconds, LEASE_END_COLUMN, queueFactsOf, type ClaimFact, type QueueFacts } from '../src/model/queue.ts';
import { leaseTables, type Located } from '../src/model/queue-tables.ts';
import { extendsLease, fenceOf, reclaimerOf } from '../src/model/queue-roles.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { UPDATE_SET } from '../src/model/triggers.ts';
import { PGMQ_TRIGGER } from '../src/model/pgmq.ts';

interface Options {
  longLeaseSeconds?: number;
  maxJobSeconds?: number;
}

export default defineRule<Options, QueueFacts>({
  id: 'require-lease-heartbeat',
  description: 'Require a fenced heartbeat for jobs that can outlive their fixed lease',
  messages: {
    noHeartbeat:
      "This claim gives jobs of '{{table}}' a fixed {{lease}} lease and takes them back when it expires, and no statement in the project extends {{column}} for a running job{{worker}}: a job that runs longer than {{lease}} is claimed again and runs twice. Extend the lease from the running job every few seconds (`update {{table}} set {{extend}} where id = $1 and {{counter}} = $2`), and give the job a maximum runtime next to the heartbeat, or a hung job keeps its lease forever.",
    noSetVt:
      "This pgmq read hides messages of {{queue}} for {{lease}} and hands them out again when that has passed, jobs run up to {{job}} (maxJobSeconds), and nothing in the project calls `pgmq.set_vt` for a running message: a message whose job runs longer than {{lease}} is read by a second consumer and runs twice. Extend its visibility from the running job every few seconds (`pgmq.set_vt({{queueArg}}, msg_id, {{vt}})`), or read with a visibility timeout longer than the longest job.",
    unfencedHeartbeat:
      "This heartbeat extends the lease of a '{{table}}' job by {{by}} only: a run that has already lost its lease keeps extending the lease of the run that took the job over, so that run's crash is not noticed while the stale run lives. Compare the attempt number or lock token the claim returned (`and {{counter}} = $2`) and stop the job when the heartbeat updates no row.",
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
        description: 'A lease at least this long (seconds) is taken as longer than any job, and needs no heartbeat. Default 3600.',
      },
      maxJobSeconds: {
        type: 'number',
        minimum: 0,
        description: 'The maximum runtime the workers enforce on a job (seconds). A lease longer than it needs no heartbeat.',
      },
    },
    additionalProperties: false,
  },
  defaultOptions: { longLeaseSeconds: 3600 },
  // Claims, heartbeats and re-queue sweeps are all UPDATEs.
  // ORM_WRITE, ORM_LOCK: SQLAlchemy builders and Django querysets, whose SQL the Python front end writes.
  // PGMQ_TRIGGER: pgmq's reads and set_vt.
  triggers: [UPDATE_SET, ORM_WRITE, ORM_LOCK, PGMQ_TRIGGER],
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { mode, options, place }) => {
    const out: Decision[] = [];
    const long = options.longLeaseSeconds ?? 3600;
    for (const table of leaseTables(files)) {
      // The fence the messages suggest names the table's own counter (`tries = $2`).
      const counter = table.claims.find((c) => c.fact.counter)?.fact.counter ?? 'attempts';
      const reclaimed = table.claims.some((c) => reclaimerOf(table, c));
      const heartbeats = table.heartbeats.filter((h) => extendsLease(h.fact, table));
      // pgmq's set_vt, and writes of its tables by msg_id, have no attempt to compare: pgmq.read gives the same message
      // the same id, and the late run's extension keeps hidden a message someone is still running.
      const pgmq = table.claims.every((c) => c.fact.api === 'pgmq');
      if (reclaimed && !pgmq) {
        for (const { file, fact } of heartbeats) {
          if (!fenceOf(fact, table) && !fact.checkedUnderLock) out.push({ file, at: fact.whereAt, messageId: 'unfencedHeartbeat', data: { table: table.table, by: fact.by, counter } });
        }
      }
      // That no statement extends the lease is only known for the whole project.
      if (mode === 'file' || heartbeats.length > 0) continue;
      for (const claim of table.claims) {
        if (claim.fact.api === 'pgmq') {
          const decision = unextendedRead(claim, files, options.maxJobSeconds);
          if (decision) out.push(decision);
          continue;
        }
        const reclaimer = reclaimerOf(table, claim);
        // Jobs taken back when their worker stops beating: the worker's own heartbeat is the design's.
        if (!reclaimer || reclaimer.workerBeat) continue;
        const lease = claim.fact.leaseSeconds ?? (claim.fact.leaseFromCode ? undefined : reclaimer.leaseSeconds);
        if (lease === undefined || lease >= long) continue;
        if (options.maxJobSeconds !== undefined && options.maxJobSeconds < lease) continue;
        const column = claim.fact.leaseColumn ?? 'locked_until';
        const extend = LEASE_END_COLUMN.test(column) ? `${column} = now() + interval '${formatInterval(lease)}'` : `${column} = now()`;
        const finish = table.finishes.find((f) => f.file !== claim.file) ?? table.finishes[0];
        const worker = finish ? ` (the job is finished at ${place(finish.file, finish.fact.at, claim.file)})` : '';
        out.push({
          file: claim.file,
          at: claim.fact.leaseAt ?? claim.fact.at,
          messageId: 'noHeartbeat',
          data: { table: table.table, lease: formatSeconds(lease), column, extend, worker, counter },
        });
      }
    }
    return out;
  }),
});

/**
 * A pgmq read whose visibility timeout is shorter than the jobs run, where nothing calls set_vt for its queue (or for a
 * queue the code names). How long a job runs is not in the code: only `maxJobSeconds` says it, and without it this is
 * quiet (pgmq's consumers size the timeout to their jobs; a guess at their length would be a guess).
 */
function unextendedRead(claim: Located<ClaimFact>, files: readonly FileFacts<QueueFacts>[], maxJobSeconds: number | undefined): Decision | undefined {
  const { fact } = claim;
  if (maxJobSeconds === undefined || fact.leaseSeconds === undefined || maxJobSeconds <= fact.leaseSeconds) return undefined;
  const extended = files.some((f) => f.facts.heartbeats.some((h) => h.api === 'pgmq' && (h.queue === undefined || fact.queue === undefined || h.queue === fact.queue)));
  if (extended) return undefined;
  const queue = fact.queue === undefined ? 'a queue the code names' : `queue '${fact.queue}'`;
  const queueArg = fact.queue === undefined ? 'queue_name' : `'${fact.queue}'`;
  const data = { queue, queueArg, lease: formatSeconds(fact.leaseSeconds), job: formatSeconds(maxJobSeconds), vt: Math.ceil(fact.leaseSeconds) };
  return { file: claim.file, at: fact.leaseAt ?? fact.at, messageId: 'noSetVt', data };
}

function formatInterval(seconds: number): string {
  return `${Number(seconds.toFixed(3))} seconds`;
}
