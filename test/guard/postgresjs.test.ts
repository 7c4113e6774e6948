// postgres.js has no checkout hook, so the guard cannot wrap its pool. These
// tests prove the advice docs/guard.md gives its users: the check snippet
// for sql.reserve() finds a session leak and an open transaction, passes a
// clean connection, and must go through the simple protocol (unsafe() with
// no parameters), because the open-transaction test is wrong otherwise.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import postgres from 'postgres';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
before(async () => {
  db = await startTestDatabase({ seed: false });
});
after(async () => {
  await db.stop();
});

// The snippet of docs/guard.md, verbatim.
const CHECK =
  "select coalesce(current_setting('app.tenant', true), '') as tenant, " +
  '(now() <> statement_timestamp())::text as in_tx';

async function assertClean(reserved: postgres.ReservedSql): Promise<void> {
  const [row] = await reserved.unsafe(CHECK); // no parameters: simple protocol
  if (row!.tenant !== '' || row!.in_tx === 'true') {
    reserved.release();
    throw new Error(`dirty reserved connection: tenant set: ${row!.tenant !== ''}, transaction open: ${row!.in_tx}`);
  }
}

test('the documented reserve() check finds a session leak and an open transaction, and passes a clean one', async () => {
  const sql = postgres(db.workerUrl, { max: 1, onnotice: () => {} });
  try {
    let r = await sql.reserve();
    await assertClean(r);
    await r`select set_config('app.tenant', '3', false)`;
    r.release();
    r = await sql.reserve();
    await assert.rejects(assertClean(r), /tenant set: true, transaction open: false/);
    await r`select set_config('app.tenant', '', false)`;
    await assertClean(r);

    // reserve().release() hands the connection back with the transaction open.
    await r`begin`;
    await r`select set_config('app.tenant', '1', true)`;
    r.release();
    r = await sql.reserve();
    await assert.rejects(assertClean(r), /tenant set: true, transaction open: true/);
    await r`rollback`;
    await assertClean(r);
    r.release();
  } finally {
    await sql.end();
  }
});

test('the open-transaction test is only right with the simple protocol', async () => {
  const sql = postgres(db.workerUrl, { max: 1, onnotice: () => {} });
  try {
    const r = await sql.reserve();
    await assertClean(r);
    // Tagged template = extended protocol (Parse/Bind/Execute): the implicit
    // transaction starts before the message statement_timestamp() is taken from.
    const [extended] = await r`select (now() <> statement_timestamp())::text as in_tx`;
    assert.equal(extended!.in_tx, 'true', 'a false "open transaction" on a clean connection');
    const [simple] = await r.unsafe('select (now() <> statement_timestamp())::text as in_tx');
    assert.equal(simple!.in_tx, 'false');
    r.release();
  } finally {
    await sql.end();
  }
});
