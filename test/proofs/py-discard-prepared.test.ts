// F6 on psycopg 3: psycopg prepares a query on its 6th execution
// (prepare_threshold 5); a reset= callback running DISCARD ALL drops the
// statement on the server while psycopg still thinks it exists, so the 7th
// job fails. prepare_threshold=None avoids it. Rule:
// no-discard-all-with-prepared-statements. Runs the pools (reset= and kwargs=)
// of fixtures/python/no-discard-all-with-prepared-statements/bad.py and good.py.
//
// Versions: psycopg 3.3.5 (psycopg#1307) clears its cache when it sees
// DISCARD's command status — but only for a query that is new to its cache,
// so a DISCARD ALL that runs on every return is recognised at most on its
// first run, when nothing is prepared yet (read from its source; the source
// article measured the failure on 3.3.6). Only Debian's psycopg can be run
// here; the version-dependent expectation below is checked on whatever
// version runs (PGQ_PYTHON selects another interpreter).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { compareVersions, runProof, type ProofOutput } from './python/run-python.ts';

type Jobs = { job: number; error: string | null }[];

let db: TestDatabase;
let out: ProofOutput<{ default_threshold: Jobs; prepared_before_first_discard: Jobs; threshold_none: Jobs }>;
before(async () => {
  db = await startTestDatabase();
  out = await runProof('discard-prepared', db.workerUrl);
});
after(async () => {
  await db?.stop();
});

const failures = (jobs: Jobs) => jobs.filter((j) => j.error !== null);

test('DISCARD ALL in the reset callback: the 7th job fails with prepared statement "_pg3_0" does not exist', () => {
  const failed = failures(out.result.default_threshold);
  assert.equal(failed.length, 1, JSON.stringify(failed));
  assert.equal(failed[0].job, 7);
  assert.match(failed[0].error ?? '', /prepared statement "_pg3_0" does not exist/);
});

test('prepare_threshold=None: no job fails', () => {
  assert.deepEqual(failures(out.result.threshold_none), []);
});

test('a DISCARD ALL first seen after a query was prepared: fails before psycopg 3.3.5, recognised from 3.3.5 on', () => {
  const failed = failures(out.result.prepared_before_first_discard);
  if (compareVersions(String(out.psycopg), '3.3.5') < 0) {
    assert.equal(failed.length, 1, `psycopg ${out.psycopg}: ${JSON.stringify(failed)}`);
    assert.match(failed[0].error ?? '', /prepared statement "_pg3_0" does not exist/);
  } else {
    assert.deepEqual(failed, [], `psycopg ${out.psycopg} clears its cache on a DISCARD ALL it has not seen before`);
  }
});
