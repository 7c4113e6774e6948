// What a statement is to the claims of its table, decided over the facts of
// one table (one file or the whole project): which compared column fences a
// finish (a column the claim itself writes, not a name), whether a sweep
// puts jobs back where a claim takes them or retires them, and what takes a
// job back after its worker is gone.
import { WAITING_STATUS } from './queue-columns.ts';
import { LEASE_END_COLUMN, LEASE_START_COLUMN, type ClaimFact, type Ref, type SweepFact } from './queue.ts';
import { type Located, type TableFacts } from './queue-tables.ts';

/**
 * The fence of a finish or heartbeat: a column its WHERE compares with the
 * worker's value that a claim of the table writes — the attempt counter the
 * claim increments, or a token or lease it sets (`locked_by = $1`,
 * `lease_token = gen_random_uuid()`). A column the claim never writes
 * (`owner_id`, a tenant's user) is the same for every run of the job and
 * fences nothing.
 */
export function fenceOf(fact: { compared: readonly string[] }, table: TableFacts): string | undefined {
  const { written } = rolesOf(table);
  return fact.compared.find((column) => written.has(column));
}

/** A heartbeat of the table's lease: it moves the lease column of a claim (or a lease column by its name). */
export function extendsLease(heartbeat: { column: string }, table: TableFacts): boolean {
  if (table.claims.some((c) => c.fact.leaseColumn === heartbeat.column)) return true;
  // Where every claim and sweep names the column it takes jobs back by, a write of another column (`started_at`,
  // `deadline` as a reserved job is started) extends no lease that anything takes back.
  // A claim that takes nothing back has no say in it.
  const takesBackBy = [...table.claims.filter((c) => c.fact.reclaimAt).map((c) => (c.fact.byWorkerBeat ? undefined : c.fact.leaseColumn)), ...table.sweeps.filter((s) => s.fact.reclaimAt).map((s) => (s.fact.byWorkerBeat ? undefined : s.fact.reclaimColumn))];
  if (takesBackBy.every((column) => column !== undefined)) return takesBackBy.includes(heartbeat.column);
  return LEASE_END_COLUMN.test(heartbeat.column) || LEASE_START_COLUMN.test(heartbeat.column);
}

/** The sweep puts jobs back where a claim takes them: a waiting state, the lock cleared, or a state a claim re-takes (`failed`). */
export function requeues(sweep: SweepFact, table: TableFacts): boolean {
  return sweep.requeue || sweep.sets.some((state) => takenBack(state, table));
}

/**
 * The sweep retires jobs: it deletes them, or moves them to a dead state that
 * no claim takes back — or that claims take back only under the attempt
 * limit (`status in ('queued', 'failed') and attempts < max_attempts`), where
 * an exhausted job stays for good.
 */
export function retires(sweep: SweepFact, table: TableFacts): boolean {
  if (!sweep.dead) return false;
  if (sweep.sets.length === 0) return true;
  return sweep.sets.some((state) => !WAITING_STATUS.test(state) && claimsTaking(state, table).every((c) => c.fact.limitAt || c.fact.limitUnknown));
}


function claimsTaking(state: string, table: TableFacts): readonly Located<ClaimFact>[] {
  return rolesOf(table).taking.get(state.toLowerCase()) ?? [];
}

function takenBack(state: string, table: TableFacts): boolean {
  return claimsTaking(state, table).length > 0;
}

export interface Reclaimer {
  file: string;
  at: Ref;
  by: 'claim' | 'sweep';
  leaseSeconds?: number;
  /** The jobs come back because their worker stopped beating (a workers table's heartbeat), not because a lease of the job ran out. */
  workerBeat?: { table?: string; column: string };
  sweep?: Located<SweepFact>;
}

/** What takes back a job whose lease expired (or whose worker stopped beating): the claim itself, or a sweep that puts it back in the queue. */
export function reclaimerOf(table: TableFacts, claim: Located<ClaimFact>): Reclaimer | undefined {
  if (claim.fact.reclaimAt) return { file: claim.file, at: claim.fact.reclaimAt, by: 'claim', workerBeat: claim.fact.byWorkerBeat };
  const sweep = requeueSweeps(table)[0];
  return sweep
    ? { file: sweep.file, at: sweep.fact.reclaimAt!, by: 'sweep', leaseSeconds: sweep.fact.leaseSeconds, workerBeat: sweep.fact.byWorkerBeat, sweep }
    : undefined;
}

/** The sweeps that put jobs whose lease expired back in the queue. */
export function requeueSweeps(table: TableFacts): Located<SweepFact>[] {
  const roles = rolesOf(table);
  roles.requeueSweeps ??= table.sweeps.filter((s) => s.fact.reclaimAt && requeues(s.fact, table));
  return roles.requeueSweeps;
}

/**
 * What the claims of a table write and take, indexed once: a project with
 * thousands of claims and sweeps of one table asks per claim and per finish,
 * and filtering every claim each time made the project pass quadratic.
 */
interface TableRoles {
  claims: number;
  sweeps: number;
  written: ReadonlySet<string>;
  taking: ReadonlyMap<string, Located<ClaimFact>[]>;
  requeueSweeps?: Located<SweepFact>[];
}

const roles = new WeakMap<TableFacts, TableRoles>();

function rolesOf(table: TableFacts): TableRoles {
  const known = roles.get(table);
  // Facts are added to a table before any rule reads it; the counts keep a table that grows anyway honest.
  if (known && known.claims === table.claims.length && known.sweeps === table.sweeps.length) return known;
  const taking = new Map<string, Located<ClaimFact>[]>();
  for (const claim of table.claims) {
    for (const state of new Set(claim.fact.takes.map((t) => t.toLowerCase()))) {
      const list = taking.get(state);
      if (list) list.push(claim);
      else taking.set(state, [claim]);
    }
  }
  const fresh: TableRoles = {
    claims: table.claims.length,
    sweeps: table.sweeps.length,
    written: new Set(table.claims.flatMap((c) => c.fact.writes)),
    taking,
  };
  roles.set(table, fresh);
  return fresh;
}
