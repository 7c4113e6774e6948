// pgq_audit.guard on SQLAlchemy engines (Debian's SQLAlchemy 1.4.46: sync with
// psycopg2, asyncio with asyncpg) and on asyncpg pools (Debian's 0.27.0), on
// PostgreSQL 17.10. SQLAlchemy: the seed's sequence leaks unguarded and is
// refused guarded through the pool's checkout event. asyncpg: its reset on
// release clears the tenant, so nothing is refused there; SET ROLE,
// set_config('role', ...) and SET SESSION AUTHORIZATION survive the reset and
// are refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './support.ts';

type Next = { setting: string | null; rows: number } | { refused: string; settings: string[]; released_at: string | null };
interface Step {
  tenant: number;
  next: Next;
}
type Seen = { setting: string | null; user: string; session_user: string } | { refused: string; settings: string[]; released_at: string | null };
interface Job {
  job: string;
  next: Seen;
  stats: { violations: number } | null;
}

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase();
  const owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  try {
    // The tenant's role the jobs switch to; two test files may create it at once.
    await owner.query(`do $$ begin create role pgq_tenant_role; exception when duplicate_object then null; end $$`).catch((error) => {
      if (!/already exists|duplicate key/.test(String(error))) throw error;
    });
    await owner.query(`grant pgq_tenant_role to ${WORKER_ROLE}`);
  } finally {
    await owner.end();
  }
});
after(async () => {
  await db?.stop();
});

const seedLeak = [
  { setting: '1', rows: 20000 },
  { setting: '1', rows: 20000 },
  { setting: '3', rows: 6666 },
];

function refusedSettings(steps: Step[]): unknown[] {
  return steps.map((s) => ('refused' in s.next ? s.next.settings : s.next));
}

test('SQLAlchemy (psycopg2): the seed\'s sequence leaks unguarded; guarded, the checkout event refuses it or discards it', async () => {
  const out = await runProof<{ unguarded: Step[]; guarded: Step[]; discard: Step[]; discard_reports: Array<{ released_via: string }> }>(
    'sqlalchemy_asyncpg_proofs.py',
    'sqlalchemy',
    [db.workerUrl],
  );
  assert.match(String(out.sqlalchemy), /^1\.4\./);
  assert.deepEqual(out.result.unguarded.map((s) => s.next), seedLeak);
  assert.deepEqual(refusedSettings(out.result.guarded), [['app.tenant'], { setting: '', rows: 0 }, ['app.tenant']]);
  for (const step of [out.result.guarded[0]!, out.result.guarded[2]!]) {
    const next = step.next as { refused: string; released_at: string };
    assert.match(next.released_at, /^sa_sequence \(.*sqlalchemy_asyncpg_proofs\.py:\d+\)$/, 'names the job\'s `with engine.begin()` line');
    assert.ok(next.refused.includes(`at ${next.released_at}`));
  }
  assert.deepEqual(out.result.discard.map((s) => (s.next as { rows: number }).rows), [0, 0, 0]);
  assert.deepEqual(out.result.discard_reports.map((r) => r.released_via), ['checkin', 'checkin']);
});

test('SQLAlchemy asyncio (asyncpg): the same leak, refused; job_name names the job where the stack cannot', async () => {
  const out = await runProof<{ unguarded: Step[]; guarded: Step[] }>('sqlalchemy_asyncpg_proofs.py', 'sqlalchemy_async', [db.workerUrl]);
  assert.deepEqual(out.result.unguarded.map((s) => s.next), seedLeak);
  assert.deepEqual(refusedSettings(out.result.guarded), [['app.tenant'], { setting: '', rows: 0 }, ['app.tenant']]);
  const third = out.result.guarded[2]!.next as { refused: string };
  assert.match(third.refused, /released dirty by job "invoice-export tenant job 3"/);
});

test('asyncpg: the reset on release clears the tenant (nothing refused); a role the reset keeps is refused', async () => {
  const out = await runProof<{ unguarded: Job[]; guarded: Job[]; owner_unguarded: Job[]; owner_guarded: Job[] }>(
    'sqlalchemy_asyncpg_proofs.py',
    'asyncpg',
    [db.workerUrl, db.ownerUrl],
  );
  assert.equal(out.asyncpg, '0.27.0');
  const [tenant, setRole, setConfigRole, localRole] = out.result.unguarded;
  assert.deepEqual(tenant!.next, { setting: '', user: WORKER_ROLE, session_user: WORKER_ROLE }, "asyncpg's RESET ALL cleared the tenant");
  assert.equal((setRole!.next as { user: string }).user, 'pgq_tenant_role', 'SET ROLE survived the reset');
  assert.equal((setConfigRole!.next as { user: string }).user, 'pgq_tenant_role');
  assert.equal((localRole!.next as { user: string }).user, WORKER_ROLE);

  const guarded = out.result.guarded.map((j) => ('refused' in j.next ? j.next.settings : 'handed out'));
  assert.deepEqual(guarded, ['handed out', ['role'], ['role'], 'handed out']);
  for (const job of out.result.guarded.filter((j) => 'refused' in j.next)) {
    const next = job.next as { refused: string; released_at: string };
    assert.match(next.refused, /role differs from the value at connect/);
    assert.match(next.released_at, /^asyncpg_job \(.*sqlalchemy_asyncpg_proofs\.py:\d+\)$/);
    assert.doesNotMatch(next.refused, /pgq_tenant_role/, 'the value is not in the message');
  }
  assert.deepEqual(out.result.guarded.map((j) => j.stats?.violations), [0, 1, 1, 0]);

  // SET SESSION AUTHORIZATION (a superuser session): survives the reset, refused guarded.
  assert.equal((out.result.owner_unguarded[0]!.next as { session_user: string }).session_user, WORKER_ROLE);
  assert.deepEqual((out.result.owner_guarded[0]!.next as { settings: string[] }).settings, ['session_authorization']);
});
