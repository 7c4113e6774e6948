import { defineRule } from '../src/model/index.ts';
import { crossFileParts, type Decision, type FileFacts } from '../src/model/cross-file.ts';
import { DEFAULT_SCHEMA, tableKey, writtenName } from '../src/model/tables.ts';
import { DEAD_STATUS, formatSeconds, queueFactsOf, RUNNING_STATUS, type ClaimFact, type QueueFacts, type SweepFact } from '../src/model/queue.ts';
import { leaseTables, type Located, type TableFacts } from '../src/model/queue-tables.ts';
import { fenceOf, requeueSweeps } from '../src/model/queue-roles.ts';
import { limitTexts } from '../src/model/queue-limits.ts';
import { ORM_LOCK, ORM_WRITE } from '../src/model/orm-triggers.ts';
import { CREATE_LIMITED_TABLE, INSERT_SELECT, UPDATE_SET } from '../src/model/triggers.ts';
import { PGMQ_TRIGGER } from '../src/model/pgmq.ts';

type Options = Record<string, never>;

export default defineRule<Options, QueueFacts>({
  id: 'require-claim-attempt-limit',
  description: 'Require claims that take back expired leases to count the attempt and stop at the attempt limit',
  messages: {
    noLimit:
      "This claim takes back jobs of '{{table}}' {{expired}} but has no attempt limit in its predicate: a job that crashes its worker is claimed again every time, forever, and takes down every worker it reaches. Add `and {{under}}` to the claim's predicate (or have the worker check the returned count before it runs the job) and move exhausted jobs to a dead state.",
    noRetryLimit:
      "This claim takes failed jobs of '{{table}}' back ({{state}}) with no attempt limit in its predicate: a job that fails every time is retried forever and keeps a worker busy with it. Add `and {{under}}` to the predicate and leave exhausted jobs in a dead state.",
    noLimitSweep:
      "This sweep puts jobs of '{{table}}' {{expired}} back in the queue with no attempt limit, and the claim at {{claim}} takes them with none either: a job that crashes its worker comes back every time, forever, and takes down every worker it reaches. Re-queue only jobs under the limit here (`and {{under}}`) and move the others to a dead state.",
    noIncrement:
      "This claim of '{{table}}' does not count the attempt, and {{reclaim}}: a job that crashes its worker comes back with the same attempt count every time and is retried forever. Increment the counter in the claim statement itself (`{{count}}`), so it is committed before the job runs{{andLimit}}.",
    noCopyLimit:
      "This retry enqueues a job of '{{table}}' again as a new row with `{{count}}`, and neither its WHERE nor any claim of '{{table}}' stops at an attempt limit: a job that fails every time is copied and run again after every failure, forever, and keeps a worker busy with it. Add `and {{under}}` to this statement's WHERE (or test the count in the code before it copies), and leave the exhausted job in a dead state.",
    noReadLimit:
      "This pgmq read hides the messages of {{queue}} it hands out for {{vt}}, counts the read in `read_ct` and hands a message out again once that time has passed, and nothing in the project compares a message's `read_ct` with a limit: a message that crashes its consumer is read again after every timeout, forever, and takes down every consumer it reaches. Before running a message, compare `read_ct` with a limit and `pgmq.archive` the messages past it.",
    noIncrementAtSweep:
      "This sweep puts jobs of '{{table}}' {{expired}} back in the queue without counting the attempt, and the claim at {{claim}} does not count it either{{failPath}}: a job that crashes its worker comes back with the same count every time and is retried forever. Count the crash where it is detected: `{{count}}` in this sweep.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // Claims, heartbeats and re-queue sweeps are all UPDATEs.
  // ORM_WRITE, ORM_LOCK: SQLAlchemy builders and Django querysets, whose SQL the Python front end writes.
  // INSERT_SELECT: a retry that copies the job into a new row.
  // PGMQ_TRIGGER: pgmq's reads, and the read counts its consumers compare.
  // CREATE_LIMITED_TABLE: the table's own counter and limit, which the messages name.
  triggers: [UPDATE_SET, INSERT_SELECT, ORM_WRITE, ORM_LOCK, PGMQ_TRIGGER, CREATE_LIMITED_TABLE],
  ...crossFileParts<Options, QueueFacts>(queueFactsOf, (files, { mode, place }) => {
    // Retries by copy: only the whole project shows that no claim stops at the limit.
    const out: Decision[] = mode === 'project' ? unlimitedCopies(files) : [];
    for (const table of leaseTables(files)) {
      const sweeps = requeueSweeps(table);
      const counting = table.claims.find((c) => c.fact.counter)?.fact;
      const counter = counting?.counter ?? table.counterColumns[0] ?? 'attempts';
      const { count, under } = limitTexts(counter, counting?.countsDown === true, table.limitColumns);
      // The failure path counts failures (Que, procrastinate): a crash is counted nowhere unless the sweep counts it.
      const failCounts = table.finishes.find((f) => f.fact.kind === 'fail' && f.fact.increments);
      const limited = table.claims.some((c) => c.fact.limitAt || c.fact.limitUnknown) || sweeps.some((s) => s.fact.limitAt);
      // The failure path retires exhausted jobs to a state the claim does not take (`status = case when attempts >=
      // max_attempts then 'dead' else 'failed' end`, a separate dead update, a dead sweep at the limit): the failed
      // jobs the claim takes back are under the limit.
      const retires = (claim: ClaimFact) => {
        const retired = (states: readonly string[]) => states.some((state) => DEAD_STATUS.test(state) && !claim.takes.includes(state));
        return table.finishes.some((f) => f.fact.kind === 'fail' && retired(f.fact.sets ?? [])) || table.sweeps.some((s) => s.fact.limitAt !== undefined && retired(s.fact.sets));
      };
      const andLimit = limited ? '' : ", and stop at the limit (`and " + under + "` in the claim's predicate)";
      for (const claim of table.claims) {
        const { file, fact } = claim;
        // A pgmq read counts, and its consumer, wherever it is, may stop at a limit: only the whole project shows none does.
        if (fact.api === 'pgmq') {
          if (mode === 'project' && !fact.consumerUnseen && !files.some((f) => f.facts.countChecks?.length)) out.push({ file, at: fact.at, messageId: 'noReadLimit', data: pgmqData(fact) });
          continue;
        }
        if (startedElsewhere(fact, table)) continue;
        // An optimistic claim: the host read the job and decided to take it back, and may count and stop there.
        if (fact.reclaimByHost) continue;
        if (fact.reclaimAt && !fact.limitAt) {
          out.push({ file, at: fact.reclaimAt, messageId: 'noLimit', data: { table: table.table, expired: expiredText(fact), under } });
        } else if (fact.retryAt && !fact.limitAt && !retires(fact)) {
          out.push({ file, at: fact.retryAt, messageId: 'noRetryLimit', data: { table: table.table, state: fact.takes.map((t) => `'${t}'`).join(', '), under } });
        }
        if (fact.increments) continue;
        if (fact.reclaimAt) {
          out.push({ file, at: fact.setAt, messageId: 'noIncrement', data: { table: table.table, reclaim: reclaimText(fact), count, under, andLimit: '' } });
          continue;
        }
        if (fact.retryAt && !failCounts) {
          out.push({ file, at: fact.setAt, messageId: 'noIncrement', data: { table: table.table, reclaim: 'it takes failed jobs back and nothing counts their failures', count, under, andLimit: '' } });
          continue;
        }
        const sweep = sweeps.find((s) => !s.fact.increments);
        if (!sweep || sweeps.some((s) => s.fact.increments)) continue;
        // Report where the fix goes: the sweep where failures are counted apart (it is only the crashes that go uncounted),
        // else the claim. A limit the sweep tests (`case when attempts >= max_attempts then 'dead' ...`) is never reached by
        // a job that fails every time: the failure path counts nothing, so only a count at the claim makes it reachable.
        if (failCounts) {
          const failPath = failCounts ? ` (the fail update at ${place(failCounts.file, failCounts.fact.at, sweep.file)} counts only the failures a live worker reports)` : '';
          out.push({
            file: sweep.file,
            at: sweep.fact.reclaimAt!,
            messageId: 'noIncrementAtSweep',
            data: { table: table.table, expired: sweepExpiredText(sweep.fact), claim: place(file, fact.at, sweep.file), failPath, count },
          });
        } else {
          const where = place(sweep.file, sweep.fact.at, file);
          out.push({
            file,
            at: fact.setAt,
            messageId: 'noIncrement',
            data: { table: table.table, reclaim: `the sweep at ${where} puts jobs ${sweepExpiredText(sweep.fact)} back in the queue`, count, under, andLimit },
          });
        }
      }
      // A sweep that re-queues without a limit, for claims that have none either (where nothing counts, noIncrement says both).
      const counted = table.claims.some((c) => c.fact.increments) || sweeps.some((s) => s.fact.increments);
      // A limit in one branch of an OR (`state = 'pending' or (state = 'failed' and attempts < max_attempts)`) does not stop
      // the jobs the sweep puts back in a state another branch takes.
      const stops = (c: Located<ClaimFact>) => c.fact.limitUnknown || (c.fact.limitAt && !c.fact.limitInBranch);
      if (table.claims.some(stops) || !counted) continue;
      for (const sweep of sweeps) {
        if (sweep.fact.limitAt) continue;
        const claim = claimFor(table, sweep);
        if (!claim || claim.fact.reclaimAt) continue; // the claim's own finding says it
        // It puts back reservations of a two-step take only: none of them started.
        if (startedElsewhere(claim.fact, table) && sweep.fact.takes?.every((state) => claim.fact.sets?.includes(state))) continue;
        out.push({
          file: sweep.file,
          at: sweep.fact.reclaimAt!,
          messageId: 'noLimitSweep',
          data: { table: table.table, expired: sweepExpiredText(sweep.fact), claim: place(claim.file, claim.fact.at, sweep.file), under },
        });
      }
    }
    return out;
  }),
});

/**
 * A two-step take: the claim only reserves (`'claimed'`), and the run starts with a fenced move of the reserved job to
 * another running state (`set status = 'running' where id = $1 and status = 'claimed' and claimed_by = $2`) that no
 * claim takes. What comes back from the reservation never started: a job that kills its worker does so in the started
 * state, whose recovery (a sweep of it, judged on its own) is not this claim's.
 */
function startedElsewhere(claim: ClaimFact, table: TableFacts): boolean {
  const reserved = new Set(claim.sets ?? []);
  if (reserved.size === 0) return false;
  const retaken = new Set(table.claims.flatMap((c) => c.fact.takes));
  return table.finishes.some(
    ({ fact: start }) =>
      start.gatedOn !== undefined &&
      start.gatedOn.length > 0 &&
      start.gatedOn.every((state) => reserved.has(state)) &&
      start.sets.length > 0 &&
      start.sets.every((state) => !reserved.has(state) && !retaken.has(state) && RUNNING_STATUS.test(state)) &&
      fenceOf(start, table) !== undefined,
  );
}

/** Retries by copy with no limit in their WHERE, of tables no claim or sweep of the project stops at a limit. */
function unlimitedCopies(files: readonly FileFacts<QueueFacts>[]): Decision[] {
  const limited = new Set<string>();
  for (const { facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const c of facts.claims) if (c.limitAt || c.limitUnknown || c.reclaimByHost) limited.add(tableKey(c, defaultSchema));
    for (const s of facts.sweeps) if (s.limitAt) limited.add(tableKey(s, defaultSchema));
  }
  const out: Decision[] = [];
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const retry of facts.retries ?? []) {
      if (retry.limitAt || limited.has(tableKey(retry, defaultSchema))) continue;
      const { under } = limitTexts(retry.counter, retry.countsDown === true);
      const count = `${retry.counter} ${retry.countsDown ? '-' : '+'} 1`;
      out.push({ file, at: retry.counterAt, messageId: 'noCopyLimit', data: { table: writtenName(retry), count, under } });
    }
  }
  return out;
}

function pgmqData(claim: ClaimFact): Record<string, string> {
  return { queue: claim.queue === undefined ? 'a queue the code names' : `queue '${claim.queue}'`, vt: claim.leaseSeconds === undefined ? 'its visibility timeout' : formatSeconds(claim.leaseSeconds) };
}

function claimFor(table: TableFacts, sweep: Located<SweepFact>): Located<ClaimFact> | undefined {
  return table.claims.find((c) => c.file === sweep.file) ?? table.claims[0];
}

function expiredText(claim: ClaimFact): string {
  if (claim.byWorkerBeat) return `whose worker stopped beating (${beatColumn(claim.byWorkerBeat)} older than the window)`;
  return 'whose lease expired';
}

function reclaimText(claim: ClaimFact): string {
  if (claim.byWorkerBeat) return `it takes the job back when its worker stops beating (${beatColumn(claim.byWorkerBeat)})`;
  return 'it takes the job back when its lease expires';
}

function sweepExpiredText(sweep: SweepFact): string {
  if (sweep.byWorkerBeat) {
    const window = sweep.leaseSeconds !== undefined ? ` for ${formatSeconds(sweep.leaseSeconds)}` : '';
    return `whose worker stopped beating (${beatColumn(sweep.byWorkerBeat)} unchanged${window})`;
  }
  return 'whose lease expired';
}

function beatColumn(beat: { table?: string; column: string }): string {
  return beat.table ? `\`${beat.table}.${beat.column}\`` : `\`${beat.column}\``;
}
