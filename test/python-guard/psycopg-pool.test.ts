// pgq_audit.guard on psycopg_pool (Debian's psycopg 3.1.7 / psycopg_pool 3.1.5)
// and PostgreSQL 17.10: the seed's sequence (tenants 1, 2, 3, job 2 failing)
// leaks to the next job unguarded and is refused guarded; a transaction-local
// setting passes; a tenant set by a routine or a trigger, which the job's code
// does not show, is refused too. The reset callback's proof is in reset.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { PgProxy } from '../guard/support.ts';
import { runProof, type ProofOutput } from './support.ts';

type Next = { setting: string | null; rows: number } | { refused: string; settings: string[]; released_at?: string };
interface Step {
  tenant: number;
  failed?: boolean;
  next: Next;
}
interface Stats {
  checkouts: number;
  checks: number;
  violations: number;
  check_errors: number;
  reset_violations: number;
}

let db: TestDatabase;
let seed: ProofOutput<{
  unguarded: Step[];
  guarded: Step[];
  guarded_stats: Stats;
  discard: Step[];
  discard_reports: Array<{ settings: string[]; released_at: string; action: string; values?: unknown }>;
  local: Step[];
  local_stats: Stats;
  job_line: number;
}>;

before(async () => {
  db = await startTestDatabase();
  seed = await runProof('psycopg_pool_proofs.py', 'seed', [db.workerUrl]);
  // Where a static rule cannot see the write: a routine, and a trigger on an insert.
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  try {
    await owner.query(`
      create function pgq_set_tenant(t int) returns void language sql
        as $$ select set_config('app.tenant', t::text, false) $$;
      create function pgq_jobs_tenant() returns trigger language plpgsql
        as $$ begin perform set_config('app.tenant', new.tenant_id::text, false); return new; end $$;
      create trigger jobs_tenant before insert on jobs for each row execute function pgq_jobs_tenant();`);
  } finally {
    await owner.end();
  }
});
after(async () => {
  await db?.stop();
});

const leaked = (setting: string, rows: number) => ({ setting, rows });

test('runs on Debian\'s psycopg 3.1 and psycopg_pool 3.1', () => {
  assert.match(String(seed.psycopg), /^3\.1\./);
  assert.match(String(seed.psycopg_pool), /^3\.1\./);
});

test('unguarded: the seed\'s sequence leaks the last committed tenant to the next job (F2)', () => {
  assert.deepEqual(
    seed.result.unguarded.map((s) => s.next),
    [leaked('1', 20000), leaked('1', 20000), leaked('3', 6666)],
  );
  assert.deepEqual(seed.result.unguarded.map((s) => s.failed), [false, true, false]);
});

test('guarded: the next job is refused after jobs 1 and 3, with the setting and the job\'s line, never the value', () => {
  const [first, second, third] = seed.result.guarded;
  for (const step of [first!, third!]) {
    assert.ok('refused' in step.next, JSON.stringify(step.next));
    assert.deepEqual(step.next.settings, ['app.tenant']);
    assert.match(step.next.refused, /^pgq-audit guard: refused a pooled connection \(backend pid \d+\): app\.tenant was still set for the session/);
    assert.ok(
      step.next.released_at?.startsWith(`seed_job (`) && step.next.released_at.endsWith(`psycopg_pool_proofs.py:${seed.result.job_line})`),
      `names the job's line: ${step.next.released_at}`,
    );
    assert.ok(step.next.refused.includes(step.next.released_at!));
    assert.doesNotMatch(step.next.refused, /"[13]"|= ?'?[13]'?/, 'the tenant id is not in the message');
  }
  // Job 2 ran on a new connection (the dirty one was closed) and its setting rolled back with it.
  assert.deepEqual(second!.next, { setting: '', rows: 0 });
  assert.equal(seed.result.guarded_stats.violations, 2);
});

test('guarded with on_violation="discard": every next job gets a clean connection, and each leak is reported', () => {
  for (const step of seed.result.discard) {
    assert.ok(!('refused' in step.next));
    assert.equal((step.next as { rows: number }).rows, 0);
  }
  assert.equal(seed.result.discard_reports.length, 2);
  for (const report of seed.result.discard_reports) {
    assert.deepEqual(report.settings, ['app.tenant']);
    assert.equal(report.action, 'discard');
    assert.equal(report.values, undefined, 'no values without include_values');
    assert.match(report.released_at, /^seed_job \(/);
  }
});

test('a job that sets the tenant with set_config(..., true) passes: no violation, nothing leaks', () => {
  assert.deepEqual(
    seed.result.local.map((s) => s.next),
    [leaked('', 0), leaked('', 0), leaked('', 0)],
  );
  assert.equal(seed.result.local_stats.violations, 0);
  assert.equal(seed.result.local_stats.checks, seed.result.local_stats.checkouts, 'every checkout was checked (one query each)');
});

test('AsyncConnectionPool: the same leak unguarded, refused guarded', async () => {
  const out = await runProof<{ unguarded: Step[]; guarded: Step[]; stats: Stats }>('psycopg_pool_proofs.py', 'async', [db.workerUrl]);
  assert.deepEqual(out.result.unguarded.map((s) => s.next), [leaked('1', 20000), leaked('1', 20000), leaked('3', 6666)]);
  const refused = out.result.guarded.map((s) => ('refused' in s.next ? s.next.settings : s.next));
  assert.deepEqual(refused, [['app.tenant'], { setting: '', rows: 0 }, ['app.tenant']]);
  assert.equal(out.result.stats.violations, 2);
});

test('options at work: keep, a handler answering nonsense, include_values, sample_rate=0, job_name, a misspelt setting, configure=', async () => {
  type Outcome = { setting?: string; rows?: number; refused?: string; settings?: string[]; error?: string; message?: string; actions?: string[]; stats?: Stats };
  const { result: r } = await runProof<Record<'keep' | 'bogus' | 'values' | 'unsampled' | 'named', Outcome> & { misspelt: { opened: boolean; pool_log: string[] }; configure: { seen: Outcome[]; stats: Stats } }>(
    'psycopg_pool_proofs.py',
    'options',
    [db.workerUrl],
  );
  // A handler returning 'keep' hands the dirty connection out (observe-only) and on_report hears of it.
  assert.deepEqual([r.keep.setting, r.keep.rows, r.keep.actions, r.keep.stats?.violations], ['7', 2857, ['keep'], 1]);
  assert.equal(r.bogus.error, 'TypeError');
  assert.equal(r.bogus.message, "pgq-audit guard: on_violation returned 'ignore'; valid values: 'raise', 'discard', 'keep' or None (= 'discard')");
  assert.match(r.values.refused ?? '', /app\.tenant = "7" was still set/, 'include_values=True puts the value in the message');
  // sample_rate=0: only the read at connect; the leak goes through unchecked.
  assert.deepEqual([r.unsampled.setting, r.unsampled.stats?.checks, r.unsampled.stats?.violations], ['7', 1, 0]);
  assert.match(r.named.refused ?? '', /released dirty by job "nightly-invoices" at seed_job \(/);
  // configure= runs first: its search_path is the value at connect; a job's session change of it is refused.
  const configured = r.configure.seen;
  assert.deepEqual(configured.slice(0, 3), [{ setting: '', rows: 0 }, { setting: '', rows: 0 }, { setting: '', rows: 0 }]);
  assert.deepEqual(configured[3]?.settings, ['search_path']);
  assert.equal(r.configure.stats.violations, 1);
  assert.equal(r.misspelt.opened, false);
  assert.match(r.misspelt.pool_log[0] ?? '', /unrecognized configuration parameter "serach_path"/);
});

test('a tenant set by a routine the job calls, or by a trigger on its insert, leaks unguarded and is refused guarded', async () => {
  type Probe = { setting?: string; rows?: number; refused?: string; settings?: string[]; released_at?: string };
  const { result } = await runProof<Record<'routine' | 'trigger', { unguarded: Probe; guarded: Probe }>>('psycopg_pool_proofs.py', 'hidden', [db.workerUrl]);
  for (const [name, job] of [['routine', 'routine_job'], ['trigger', 'trigger_job']] as const) {
    assert.deepEqual(result[name].unguarded, { setting: '2', rows: 10000 }, `${name}: the next job runs as tenant 2`);
    assert.deepEqual(result[name].guarded.settings, ['app.tenant'], name);
    assert.match(result[name].guarded.released_at ?? '', new RegExp(`^${job} \\(`), name);
  }
});

test('one round trip per checkout: counted at a proxy, 50 jobs cost 50 more round trips guarded', async () => {
  const proxy = await PgProxy.start(db.workerUrl);
  try {
    // The proxy frames server messages; libpq's SSLRequest answer is one byte, so no SSL through it.
    const url = `${proxy.url(db.workerUrl)}?sslmode=disable`;
    const count = async (guarded: string) => {
      const before = proxy.roundTrips;
      const out = await runProof<{ stats: Stats | null }>('psycopg_pool_proofs.py', 'round_trips', [url, guarded, '50']);
      return { trips: proxy.roundTrips - before, stats: out.result.stats };
    };
    const unguarded = await count('unguarded');
    const guarded = await count('guarded');
    console.log(`round trips for 50 jobs: unguarded ${unguarded.trips}, guarded ${guarded.trips}`);
    // Unguarded: the connection's startup, then BEGIN, set_config, SELECT, COMMIT per job.
    assert.ok(unguarded.trips >= 1 + 50 * 4, String(unguarded.trips));
    // Guarded: the read at connect, then one check per checkout but the first (the connection is known clean).
    assert.deepEqual([guarded.stats?.checks, guarded.stats?.checkouts], [50, 50]);
    assert.equal(guarded.trips - unguarded.trips, 50, 'one round trip per check, nothing else');
  } finally {
    await proxy.close();
  }
});
