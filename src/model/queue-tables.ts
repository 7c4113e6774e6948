// The queue facts of a unit's files joined by table: the lease-design tables the queue rules judge.
import type { ClaimFact, FinishFact, HeartbeatFact, QueueFacts, SweepFact } from './queue.ts';
import { withoutTestEvidence } from './test-evidence.ts';
import { DEFAULT_SCHEMA, tableKey, writtenName, type TableName } from './tables.ts';

export interface Located<T> {
  file: string;
  fact: T;
}

export interface TableFacts {
  /** The table as the first claim names it, for messages. */
  table: string;
  /** Its identity in the unit: `schema.table`. */
  key: string;
  /** Lease-design claims only: the one-transaction design has rules of its own. */
  claims: Located<ClaimFact>[];
  finishes: Located<FinishFact>[];
  heartbeats: Located<HeartbeatFact>[];
  sweeps: Located<SweepFact>[];
  /** The attempt counter and limit columns its CREATE TABLE gives it (`tries`, `max_tries`), in any file of the unit. */
  counterColumns: string[];
  limitColumns: string[];
}

/**
 * The queue facts of several files, by table, for tables that have a lease-design claim.
 * A file's unqualified names are in its `defaultSchema` (its unit's; public when not given),
 * so `billing.jobs` and `public.jobs` never lend each other facts.
 */
export function leaseTables(all: readonly { file: string; facts: QueueFacts; defaultSchema?: string }[]): TableFacts[] {
  const files = withoutTestEvidence(all);
  const tables = new Map<string, TableFacts>();
  const of = (name: TableName, defaultSchema: string) => {
    const key = tableKey(name, defaultSchema);
    let t = tables.get(key);
    if (!t) tables.set(key, (t = { table: writtenName(name), key, claims: [], finishes: [], heartbeats: [], sweeps: [], counterColumns: [], limitColumns: [] }));
    return t;
  };
  const futureTimes = new Set(files.flatMap(({ facts }) => facts.futureTimes ?? []));
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const fact of facts.claims) {
      // A claim by a function's value counts where the files define that function as a later time.
      if (fact.design === 'lease' && (!fact.leaseBy || fact.leaseBy.some((f) => futureTimes.has(f)))) of(fact, defaultSchema).claims.push({ file, fact });
    }
  }
  // Named after a claim: only then are the other facts added.
  for (const { file, facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const fact of facts.finishes) of(fact, defaultSchema).finishes.push({ file, fact });
    for (const fact of facts.heartbeats) of(fact, defaultSchema).heartbeats.push({ file, fact });
    for (const fact of facts.sweeps) of(fact, defaultSchema).sweeps.push({ file, fact });
  }
  for (const { facts, defaultSchema = DEFAULT_SCHEMA } of files) {
    for (const created of facts.createdCounters ?? []) {
      const table = tables.get(tableKey(created, defaultSchema));
      table?.counterColumns.push(...created.counters);
      table?.limitColumns.push(...created.limits);
    }
  }
  // A row taken on a cadence and finished by nothing (no state, no finish, sweep or heartbeat of the table) recurs by
  // design: each turn is a new run, and a crash is only retried at the next turn. Its claims are not leases.
  const recurring = (t: TableFacts) => t.claims.every((c) => c.fact.cadence) && t.finishes.length === 0 && t.sweeps.length === 0 && t.heartbeats.length === 0;
  return [...tables.values()].filter((t) => t.claims.length > 0 && !recurring(t));
}
