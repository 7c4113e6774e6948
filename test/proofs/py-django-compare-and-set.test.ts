// Django 3.2 + psycopg2 on PostgreSQL 17.10, the optimistic claims of
// fixtures/python/require-claim-attempt-limit/ run as they are (loaded as the
// models module of an app, the table made by Django's schema editor): a task
// whose worker dies every time is claimed with claim_task() and its lease runs
// out, 7 times.
// - bad-django-compare-and-set.py: the read without a lock and the
//   compare-and-set update take the task back after every lease, and nothing
//   counts: claimed 7 times of 7, still 'running';
// - good-django-compare-and-set.py: the update counts (`tries = F("tries") +
//   1`) and the read stops at MAX_TRIES (5): claimed 5 times, then not, and
//   bury_exhausted() retires it.
// Rule: require-claim-attempt-limit (an optimistic claim is one claim).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { claims: (number | boolean | null)[]; state: string; tries: number | null };
let db: TestDatabase;
const out: Record<string, ProofOutput<Seen>> = {};

before(async () => {
  db = await startTestDatabase({ seed: false });
  // Each proof makes its own table: one database each (the good one in its test).
  out.bad = await runProof<Seen>('cas-bad', db.ownerUrl, 'django');
});
after(async () => {
  await db?.stop();
});

test('no count, no limit: the task that kills its worker is claimed after every lease, 7 times of 7', { timeout: 180_000 }, () => {
  assert.match(out.bad.django as string, /^3\.2\./);
  assert.deepEqual(out.bad.result, { claims: [true, true, true, true, true, true, true], state: 'running', tries: null });
});

test('counted in the compare-and-set and limited in the read: claimed 5 times, then buried', { timeout: 180_000 }, async () => {
  const second = await startTestDatabase({ seed: false });
  try {
    const good = await runProof<Seen>('cas-good', second.ownerUrl, 'django');
    assert.deepEqual(good.result, { claims: [1, 2, 3, 4, 5, null, null], state: 'dead', tries: 5 });
  } finally {
    await second.stop();
  }
});
