// A worker process that dies in the middle of its job (process.exit(1)), for
// test/proofs/queue-crash-mid-job.test.ts. It claims one job with the
// statements it is given, prints what it claimed, starts the work and exits.
import pg from 'pg';

const { PGQ_URL, PGQ_DESIGN, PGQ_STATEMENTS } = process.env;
const statements = JSON.parse(PGQ_STATEMENTS ?? '{}');
const client = new pg.Client({ connectionString: PGQ_URL, application_name: 'pgq-crash-worker' });
await client.connect();

let job;
if (PGQ_DESIGN === 'one-transaction') {
  await client.query('begin');
  job = (await client.query(statements.dequeue)).rows[0];
  if (job) await client.query(statements.countAttempt, [job.id]);
  if (job) job = { ...job, attempts: job.attempts + 1 };
} else {
  job = (await client.query(statements.claim, [`worker-${process.pid}`])).rows[0];
}
process.stdout.write(JSON.stringify(job ? { id: Number(job.id), attempts: job.attempts } : null) + '\n');
if (!job) {
  await client.end();
  process.exit(0);
}
// The job starts, and the process dies before it ends: no rollback, no fail, no finish.
setTimeout(() => process.exit(1), 20);
await new Promise(() => {});
