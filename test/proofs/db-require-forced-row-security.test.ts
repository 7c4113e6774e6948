// Proof for require-forced-row-security, on the tables and roles of
// fixtures/db/schema.sql: the tenant policy of a table the worker's role owns
// (or inherits the owner's privileges of) does not filter the worker's
// queries until row level security is forced; a BYPASSRLS role is filtered by
// no policy at all, forced or not; a tenant policy on a table without row
// level security filters no one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startLintDatabase, type LintDatabase } from '../db/support.ts';

let db: LintDatabase;
before(async () => {
  db = await startLintDatabase();
  // Three tenants' rows in every table the proof reads: 3, 2 and 1 rows.
  for (const table of ['orders', 'ledger', 'accounts', 'invoices', 'drafts']) {
    const column = { orders: 'total_cents', ledger: 'cents', accounts: 'name', invoices: 'amount_cents', drafts: 'body' }[table];
    const value = table === 'accounts' || table === 'drafts' ? "'x'" : '1';
    await db.run(`insert into public.${table} (tenant_id, ${column}) select t, ${value} from (values (1), (1), (1), (2), (2), (3)) v(t)`);
  }
  await db.run('grant select on all tables in schema public to pgq_db_app, pgq_db_bypass');
});
after(async () => {
  await db?.stop();
});

/** Rows of `table` that `role` sees as tenant 2, in a job's transaction as it should be written. */
async function seenAsTenant2(role: string, table: string): Promise<number> {
  const client = new pg.Client(db.urlAs(role));
  await client.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', '2', true)");
    const { rows } = await client.query(`select count(*)::int as n from public.${table}`);
    await client.query('commit');
    return rows[0].n;
  } finally {
    await client.end();
  }
}

test('the owner of a table whose row level security is not forced reads every tenant; forced, its own', { timeout: 60_000 }, async () => {
  assert.equal(await seenAsTenant2('pgq_db_app', 'orders'), 6, 'pgq_db_app owns public.orders: the policy does not apply');
  assert.equal(await seenAsTenant2('pgq_db_app', 'ledger'), 6, 'pgq_db_app inherits the privileges of pgq_db_owners, which owns public.ledger');
  assert.equal(await seenAsTenant2('pgq_db_app', 'accounts'), 2, 'public.accounts is forced: the owner is filtered too');
  await db.run('alter table public.orders force row level security');
  try {
    assert.equal(await seenAsTenant2('pgq_db_app', 'orders'), 2);
  } finally {
    await db.run('alter table public.orders no force row level security');
  }
});

test('a BYPASSRLS role reads every tenant, even where row level security is forced', { timeout: 60_000 }, async () => {
  assert.equal(await seenAsTenant2('pgq_db_bypass', 'invoices'), 6, 'public.invoices is forced');
  assert.equal(await seenAsTenant2('pgq_db_app', 'invoices'), 2, 'a role without BYPASSRLS is filtered');
});

test('a tenant policy on a table without row level security filters no one', { timeout: 60_000 }, async () => {
  assert.equal(await seenAsTenant2('pgq_db_bypass', 'drafts'), 6);
  await db.run('grant select on public.drafts to pgq_db_reader');
  assert.equal(await seenAsTenant2('pgq_db_reader', 'drafts'), 6, 'not the owner, no BYPASSRLS, and still every tenant');
});
