// Proof for no-side-effects-in-locking-transaction on PostgreSQL 17.10: an
// outside-world call made while the claim's transaction is open (the
// one-transaction dequeue of the fixtures) is not undone by the rollback — a
// job that fails after its HTTP call makes the call again on every retry —
// and while the call waits, the open transaction keeps VACUUM from removing
// the dead rows of every table, not only the queue.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { namedStatement } from '../queue/support/named.ts';

const ONE = 'queue/designs/one-transaction.sql';

let db: TestDatabase;
let worker: pg.Client;
let other: pg.Client;
let owner: pg.Client;
let server: Server;
let url: string;
const received: string[] = [];

before(async () => {
  db = await startTestDatabase();
  worker = new pg.Client(db.workerUrl);
  other = new pg.Client(db.workerUrl);
  owner = new pg.Client(db.ownerUrl);
  await Promise.all([worker.connect(), other.connect(), owner.connect()]);
  // The outside world: a web hook that records what it was sent.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
});
after(async () => {
  server?.close();
  await Promise.all([worker?.end(), other?.end(), owner?.end()]);
  await db?.stop();
});

test('a call made inside the transaction is not rolled back: 3 failed attempts, 3 calls, the job still queued with attempts 0', { timeout: 30_000 }, async () => {
  await worker.query('delete from jobs');
  const id = Number((await worker.query("insert into jobs (tenant_id, kind) values (1, 'invoice mail') returning id")).rows[0].id);
  for (let attempt = 0; attempt < 3; attempt++) {
    await worker.query('begin');
    try {
      const job = (await worker.query(namedStatement(ONE, 'dequeue'))).rows[0];
      await worker.query(namedStatement(ONE, 'count_attempt'), [job.id]);
      await fetch(url, { method: 'POST', body: `invoice for job ${job.id}` });
      throw new Error('the job fails after its call');
    } catch {
      await worker.query('rollback');
    }
  }
  assert.deepEqual(received, Array(3).fill(`invoice for job ${id}`));
  assert.deepEqual((await worker.query('select status, attempts from jobs where id = $1', [id])).rows[0], { status: 'queued', attempts: 0 });
});

/** Dead rows VACUUM had to keep, as it reports them to the statistics. */
async function deadAfterVacuum(table: string): Promise<number> {
  await owner.query(`vacuum ${table}`);
  await owner.query('select pg_stat_clear_snapshot()');
  return Number((await owner.query('select n_dead_tup from pg_stat_user_tables where relname = $1', [table])).rows[0].n_dead_tup);
}

test('while the call waits, VACUUM cannot remove the dead rows of any table: 1,000 of jobs and 1,000 of invoices', { timeout: 30_000 }, async () => {
  await worker.query('delete from jobs');
  await worker.query("insert into jobs (tenant_id, kind) select 1, 'bulk' from generate_series(1, 1001)");
  await owner.query('vacuum jobs, invoices');

  // The worker claims a job (SELECT ... FOR UPDATE takes a transaction id) and waits on its HTTP call.
  await worker.query('begin');
  const job = (await worker.query(namedStatement(ONE, 'dequeue'))).rows[0];
  assert.ok(job);

  // Meanwhile other sessions finish 1,000 jobs and touch 1,000 invoices.
  await other.query('delete from jobs where id <> $1', [job.id]);
  await owner.query('update invoices set amount_cents = amount_cents + 1 where id <= 1000');
  const heldJobs = await deadAfterVacuum('jobs');
  const heldInvoices = await deadAfterVacuum('invoices');

  // The call returns, the transaction ends, and the same VACUUM removes them.
  await worker.query('commit');
  const afterJobs = await deadAfterVacuum('jobs');
  const afterInvoices = await deadAfterVacuum('invoices');

  assert.deepEqual({ heldJobs, heldInvoices, afterJobs, afterInvoices }, { heldJobs: 1000, heldInvoices: 1000, afterJobs: 0, afterInvoices: 0 });
});
