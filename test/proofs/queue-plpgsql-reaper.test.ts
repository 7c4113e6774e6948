// Proof: queue functions whose meaning is in PL/pgSQL variables and loops, run
// whole from the fixtures on PostgreSQL 17.10, each in a schema of its own. A
// worker "crashes" by claiming a job and never finishing it; its lease running
// out is the lease end moved back (the functions compare it with the clock).
// - require-dead-sweep/bad-reaper-loop-strands.sql: the reaper loop puts every
//   stale run back in 'waiting', the claim stops at the limit: after the last
//   allowed crash the job waits for ever, and no claim takes it.
// - good-reaper-loop-retires.sql: the loop's update by the row, under `if
//   r.tries >= r.max_tries`, moves that job to 'dead'.
// - require-claim-attempt-limit/bad-clock-variable.sql: the claim takes back
//   runs whose lease ended before `v_now := clock_timestamp()`, and neither
//   counts nor stops: the crashing job is handed out after every crash.
// - good-clock-variable.sql counts, stops at max_attempts and retires the job.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';

const fixtures = join(import.meta.dirname, '../../fixtures/queue');

let db: TestDatabase;
let client: pg.Client;
before(async () => {
  db = await startTestDatabase({ seed: false });
  client = new pg.Client(db.ownerUrl);
  await client.connect();
});
after(async () => {
  await client?.end();
  await db?.stop();
});

/** Loads a fixture into a schema of its own and makes it the one the statements see. */
async function load(fixture: string, schema: string): Promise<void> {
  await client.query(`create schema ${schema}; set search_path = ${schema}, public`);
  await client.query(readFileSync(join(fixtures, fixture), 'utf8'));
}

test('a reaper loop that re-queues every stale run strands the job at its limit; the one that retires it buries it', async () => {
  const outcome: Record<string, { phase: string; tries: number; taken: number }> = {};
  for (const [fixture, schema] of [
    ['require-dead-sweep/bad-reaper-loop-strands.sql', 'strands'],
    ['require-dead-sweep/good-reaper-loop-retires.sql', 'retires'],
  ] as const) {
    await load(fixture, schema);
    await client.query("insert into renders default values");
    // Four crashes (max_tries = 4): each claim commits, the worker dies, the lease passes, the reaper runs.
    for (let crash = 1; crash <= 4; crash++) {
      assert.equal((await client.query("select * from take_render('w')")).rowCount, 1, `${schema}: claim ${crash}`);
      await client.query("update renders set locked_until = now() - interval '1 second'");
      await client.query('select reap_renders()');
    }
    const taken = (await client.query("select * from take_render('w')")).rowCount ?? 0;
    const row = (await client.query('select phase, tries from renders')).rows[0];
    outcome[schema] = { phase: row.phase, tries: row.tries, taken };
  }
  // Stranded: back in the queue, never claimed again, and nothing says it failed.
  assert.deepEqual(outcome.strands, { phase: 'waiting', tries: 4, taken: 0 });
  assert.deepEqual(outcome.retires, { phase: 'dead', tries: 4, taken: 0 });
});

test('a claim that takes back leases ended before a clock variable hands a crashing job out for ever unless it counts and stops', async () => {
  const handed: Record<string, number> = {};
  for (const [fixture, schema] of [
    ['require-claim-attempt-limit/bad-clock-variable.sql', 'clock_bad'],
    ['require-claim-attempt-limit/good-clock-variable.sql', 'clock_good'],
  ] as const) {
    await load(fixture, schema);
    await client.query('insert into scans default values');
    let n = 0;
    for (let crash = 1; crash <= 8; crash++) {
      if ((await client.query("select * from take_scan('w')")).rowCount === 1) n++;
      await client.query("update scans set locked_until = now() - interval '1 second'");
    }
    handed[schema] = n;
    const row = (await client.query('select status, attempts from scans')).rows[0];
    if (schema === 'clock_bad') assert.deepEqual(row, { status: 'running', attempts: 0 });
    else assert.deepEqual(row, { status: 'dead', attempts: 3 });
  }
  assert.equal(handed.clock_bad, 8, 'handed out after every crash, its count still 0');
  assert.equal(handed.clock_good, 3, 'max_attempts runs, then retired');
});
