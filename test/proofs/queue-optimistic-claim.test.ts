// Proof: an optimistic claim (compare-and-set, no row lock), with the
// fixtures' own statements on PostgreSQL 17.10. A worker reads a sync whose
// lease has expired and takes it with `update ... where id = $2 and
// locked_until = $3` (the value it read). That is a claim: two workers that
// read the same value cannot both take the sync. It is also a lease the next
// worker takes back once it has run out (moved back here instead of waiting):
// - require-fenced-finish/bad-optimistic-claim.sql finishes by id only: the
//   worker that outlived its lease finishes after the sync was taken back,
//   its finish succeeds, and it clears the lease of the worker that holds the
//   sync now (whose heartbeat then matches nothing);
// - good-optimistic-claim.sql finishes by id and the token its claim wrote:
//   the late finish matches no row and the new holder keeps its lease.
// The lease value is read as text: a JavaScript Date would drop the
// microseconds, and the compare would never match. The table starts leases at
// '-infinity': a lease that is NULL (as these finishes leave it) equals
// nothing, so `locked_until = $3` never takes that row again (code of this
// shape needs `is not distinct from`, or a lease that is never NULL).
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const BAD = 'queue/require-fenced-finish/bad-optimistic-claim.sql';
const GOOD = 'queue/require-fenced-finish/good-optimistic-claim.sql';

let db: TestDatabase;
let a: pg.Client;
let b: pg.Client;
let syncId: number;
before(async () => {
  db = await startTestDatabase({ seed: false });
  const owner = new pg.Client(db.ownerUrl);
  await owner.connect();
  await owner.query(`create table mailbox_syncs (
    id bigserial primary key,
    mailbox text not null,
    locked_until timestamptz default '-infinity',
    locked_by text,
    synced_at timestamptz)`);
  await owner.query('grant select, insert, update, delete on mailbox_syncs to pgq_worker; grant usage on mailbox_syncs_id_seq to pgq_worker');
  await owner.end();
  a = new pg.Client(db.workerUrl);
  b = new pg.Client(db.workerUrl);
  await Promise.all([a.connect(), b.connect()]);
});
after(async () => {
  await Promise.all([a?.end(), b?.end()]);
  await db?.stop();
});
beforeEach(async () => {
  await a.query('delete from mailbox_syncs');
  syncId = Number((await a.query("insert into mailbox_syncs (mailbox) values ('inbox') returning id")).rows[0].id);
});

/** What a worker reads before its compare-and-set: the lease end of the sync, if it has expired. */
async function readExpired(client: pg.Client): Promise<string | undefined> {
  return (await client.query('select locked_until::text as seen from mailbox_syncs where id = $1 and locked_until < now()', [syncId])).rows[0]?.seen;
}

const lease = async () => (await a.query('select locked_by, locked_until > now() as held from mailbox_syncs where id = $1', [syncId])).rows[0];

/** A takes the sync and outlives its lease; B reads the expired lease and takes it. */
async function takenBack(fixture: string): Promise<void> {
  const take = namedStatement(fixture, 'take_sync');
  const seen = await readExpired(a);
  assert.ok(seen, 'a new sync has an expired lease');
  assert.equal((await a.query(take, ['A', syncId, seen])).rowCount, 1);
  assert.equal(await readExpired(b), undefined, 'B sees the lease A holds');
  await a.query("update mailbox_syncs set locked_until = now() - interval '1 second' where id = $1", [syncId]);
  const expired = await readExpired(b);
  assert.ok(expired);
  assert.equal((await b.query(take, ['B', syncId, expired])).rowCount, 1);
  assert.deepEqual(await lease(), { locked_by: 'B', held: true });
}

test('compare-and-set: two workers that read the same expired lease, only one takes the sync', { timeout: 30_000 }, async () => {
  const take = namedStatement(BAD, 'take_sync');
  const [seenA, seenB] = [await readExpired(a), await readExpired(b)];
  assert.equal(seenA, seenB);
  const [byA, byB] = await Promise.all([a.query(take, ['A', syncId, seenA]), b.query(take, ['B', syncId, seenB])]);
  assert.equal(byA.rowCount! + byB.rowCount!, 1);
});

test('finish by id: the late finish of the worker whose lease was taken back succeeds and clears the new holder\'s lease', { timeout: 30_000 }, async () => {
  await takenBack(BAD);
  // A's work ends now, while B runs the sync.
  assert.equal((await a.query(namedStatement(BAD, 'finish_sync'), [syncId])).rowCount, 1);
  assert.deepEqual(await lease(), { locked_by: null, held: null });
  // B's heartbeat (by id and its token) now matches no row, and B's own finish by id succeeds as well: two finishes of one sync.
  assert.equal((await b.query(namedStatement(BAD, 'extend_sync'), [syncId, 'B'])).rowCount, 0);
  assert.equal((await b.query(namedStatement(BAD, 'finish_sync'), [syncId])).rowCount, 1);
});

test('finish by id and token: the late finish matches no row and the new holder keeps its lease', { timeout: 30_000 }, async () => {
  await takenBack(GOOD);
  assert.equal((await a.query(namedStatement(GOOD, 'finish_sync'), [syncId, 'A'])).rowCount, 0);
  assert.deepEqual(await lease(), { locked_by: 'B', held: true });
  assert.equal((await b.query(namedStatement(GOOD, 'extend_sync'), [syncId, 'B'])).rowCount, 1);
  assert.equal((await b.query(namedStatement(GOOD, 'finish_sync'), [syncId, 'B'])).rowCount, 1);
});
