// Proof for no-side-effects-in-locking-transaction on PostgreSQL 17.10: a
// procedure that COMMITs each round before it waits (PL/pgSQL transaction
// control, CALL outside a transaction) waits with no transaction that wrote:
// its rounds are visible to others and it holds no transaction id, while the
// one that waits before it commits holds both back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { readFixture } from '../helpers/fixture-sql.ts';

const DIR = 'queue/no-side-effects-in-locking-transaction';

let db: TestDatabase;
let caller: pg.Client;
let watcher: pg.Client;

before(async () => {
  db = await startTestDatabase();
  caller = new pg.Client(db.ownerUrl);
  watcher = new pg.Client(db.ownerUrl);
  await Promise.all([caller.connect(), watcher.connect()]);
  await watcher.query('create table receipts_old (id int primary key, payload text); create table receipts_archive (id int primary key, payload text)');
  await watcher.query(readFixture(`${DIR}/good-procedure-commits-before-sleep.sql`));
  await watcher.query(readFixture(`${DIR}/bad-procedure-sleeps-before-commit.sql`));
});
after(async () => {
  await Promise.all([caller?.end(), watcher?.end()]);
  await db?.stop();
});

/** Calls the procedure and, at its first pause, reads what another session sees: archived rows and the caller's transaction id. */
async function atFirstPause(procedure: string): Promise<{ archived: number; holdsXid: boolean }> {
  await watcher.query("truncate receipts_old, receipts_archive; insert into receipts_old select g, 'r' || g from generate_series(1, 30) g");
  const pid = (await caller.query('select pg_backend_pid() as pid')).rows[0].pid as number;
  const call = caller.query(`call ${procedure}(10)`);
  let seen: { archived: number; holdsXid: boolean } | undefined;
  for (let i = 0; i < 200 && !seen; i++) {
    const { rows } = await watcher.query("select backend_xid is not null as holds from pg_stat_activity where pid = $1 and wait_event = 'PgSleep'", [pid]);
    // The count in a statement of its own, begun after the pause was seen: a snapshot taken with the pause
    // query could predate the commit just before the pause (the 0.5 s pause outlasts this second query).
    if (rows.length > 0) seen = { archived: (await watcher.query('select count(*)::int as n from receipts_archive')).rows[0].n, holdsXid: rows[0].holds };
    else await new Promise((r) => setTimeout(r, 20));
  }
  await call;
  assert.ok(seen, 'the procedure paused');
  return seen;
}

test('the good fixture commits each round before its pause: the round is visible and no transaction id is held; the bad fixture holds both', { timeout: 60_000 }, async () => {
  assert.deepEqual(await atFirstPause('receipts_backfill'), { archived: 10, holdsXid: false });
  assert.deepEqual(await atFirstPause('receipts_backfill_slow'), { archived: 0, holdsXid: true });
});
