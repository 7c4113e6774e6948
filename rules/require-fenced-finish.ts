import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { DEAD_STATUS, formatSeconds, queueFactsOf, type FinishFact, type QueueFacts, type Ref } from '../src/model/queue.ts';
import { leaseTables, type TableFacts } from '../src/model/queue-tables.ts';
import { fenceOf, reclaimerOf, type Reclaimer } from '../src/model/queue-roles.ts';
import { CANCEL_STATUS, isRowId } from '../src/model/queue-columns.ts';
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
    unfencedBesideFence:
      "This {{kind}} of '{{table}}' matches the job by {{by}} only{{notFence}}, while the {{fencedKind}} at {{fencedAt}} compares `{{fence}}`, a value the claim at {{claimAt}} wrote: the project expects a run to outlive its lease (expired leases are taken back), and this late {{kind}} of the first run overwrites the second run's result. Compare `{{fence}}` here too and treat 0 updated rows as a lost lease.",
    unfenced:
      "This {{kind}} of '{{table}}' matches the job by {{by}} only{{notFence}}, and {{takenBack}}: a run that outlives its lease is claimed by a second worker, and this late {{kind}} of the first run overwrites the second run's result. Compare a value the claim wrote and returned (`and {{counter}} = $n`, `and locked_by = $worker`) and treat 0 updated rows as a lost lease.",
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
      const counter = table.claims.find((c) => c.fact.counter)?.fact.counter ?? 'attempts';
      // The states a run holds its job in: a write gated on none of them (`state in ('failed', 'cancelled')`, a wake-up
      // of `'waiting'` jobs) cannot match a running job, late or not.
      const held = new Set(table.claims.flatMap((c) => c.fact.sets ?? []));
      // A pgmq queue: a message keeps its id when it is read again, so there is no claimed value to compare, and a late
      // delete or archive by msg_id ends a message whose job did run to the end; it overwrites no later run's result.
      if (table.claims.every((c) => c.fact.api === 'pgmq')) continue;
      for (const { file, fact: finish } of table.finishes) {
        // Locked by id apart from its call too: whether the host compares what it read under the lock is unknown.
        if (fenceOf(finish, table) || finish.api === 'pgmq' || finish.checkedUnderLock) continue;
        if (held.size > 0 && finish.gatedOn?.every((state) => !held.has(state))) continue;
        // A cancel ends whichever run holds the job, on purpose: overwriting the second run is what it is for.
        if (finish.sets.length > 0 && finish.sets.every((state) => CANCEL_STATUS.test(state))) continue;
        // The claim that makes the late run possible: a short fixed lease, and expired leases taken back.
        for (const claim of table.claims) {
          const reclaimer = reclaimerOf(table, claim);
          if (!reclaimer) continue;
          const lease = claim.fact.leaseSeconds ?? (claim.fact.leaseFromCode ? undefined : reclaimer.leaseSeconds);
          const others = finish.compared.filter((c) => !isRowId(c, table.table));
          const notFence = others.length ? ` (${others.map((c) => `\`${c}\``).join(', ')} ${others.length === 1 ? 'is' : 'are'} not written by the claim: the same for every run)` : '';
          const data = { kind: kindOf(finish, table), table: table.table, by: finish.by, notFence, counter };
          if (lease === undefined) {
            // A lease whose length the code decides: unknown, unless the project itself fences another write of
            // the same job. Then it expects runs to outlive their lease, and this write is the one that lacks it.
            const fenced = options.maxJobSeconds === undefined ? fencedSibling(table, finish) : undefined;
            if (!fenced || hasFencedTwin(table, finish)) continue;
            const fencedAt = place(fenced.file, fenced.at, file);
            out.push({ file, at: finish.whereAt, messageId: 'unfencedBesideFence', data: { ...data, claimAt: place(claim.file, claim.fact.at, file), fencedAt, fence: fenced.fence, fencedKind: fenced.kind } });
            break;
          }
          if (lease >= long) continue; // longer than any job
          if (options.maxJobSeconds !== undefined && options.maxJobSeconds < lease) continue; // the job's own timeout ends it first
          out.push({
            file,
            at: finish.whereAt,
            messageId: 'unfenced',
            data: { ...data, takenBack: takenBackText(claim.fact.at, claim.file, reclaimer, lease, file, place) },
          });
          break;
        }
      }
    }
    return out;
  }),
});

type Place = (file: string, ref: Ref, from: string) => string;

/** A write that ends the job in a state no claim takes back and that is not dead (`'approved'`, `'rejected'`) finishes it. */
function kindOf(finish: FinishFact, table: TableFacts): string {
  const ends = finish.sets.length > 0 && finish.sets.every((state) => !DEAD_STATUS.test(state) && !table.claims.some((c) => c.fact.takes.includes(state)));
  return finish.kind === 'fail' && ends ? 'finish' : finish.kind;
}

/** Another write of the job (a finish, a fail or a heartbeat of the same table) that compares a value the claim wrote. */
function fencedSibling(table: TableFacts, finish: FinishFact): { file: string; at: Ref; fence: string; kind: string } | undefined {
  for (const other of table.finishes) {
    const fence = other.fact !== finish ? fenceOf(other.fact, table) : undefined;
    if (fence) return { file: other.file, at: other.fact.whereAt, fence, kind: other.fact.kind };
  }
  for (const beat of table.heartbeats) {
    const fence = fenceOf(beat.fact, table);
    if (fence) return { file: beat.file, at: beat.fact.whereAt, fence, kind: 'heartbeat' };
  }
  return undefined;
}

/**
 * The project writes this very write fenced too (the same kind, the same states): the unfenced one is its variant
 * for a caller that holds no claim's value, an operator's cancel meant to end whichever run has the job.
 */
function hasFencedTwin(table: TableFacts, finish: FinishFact): boolean {
  if (finish.sets.length === 0) return false;
  const same = (states: readonly string[]) => states.length === finish.sets.length && states.every((state) => finish.sets.includes(state));
  return table.finishes.some((other) => other.fact !== finish && other.fact.kind === finish.kind && same(other.fact.sets) && fenceOf(other.fact, table) !== undefined);
}

function takenBackText(claimAt: Ref, claimFile: string, reclaimer: Reclaimer, lease: number, from: string, place: Place): string {
  const claim = `the claim at ${place(claimFile, claimAt, from)}`;
  if (reclaimer.workerBeat) {
    const who = reclaimer.by === 'claim' ? claim : `the sweep at ${place(reclaimer.file, reclaimer.at, from)}`;
    return `${who} takes jobs back from a worker whose heartbeat is ${formatSeconds(lease)} old`;
  }
  if (reclaimer.by === 'claim') return `${claim} gives a ${formatSeconds(lease)} lease and takes back expired leases`;
  return `${claim} gives a ${formatSeconds(lease)} lease and the sweep at ${place(reclaimer.file, reclaimer.at, from)} puts expired jobs back in the queue`;
}
