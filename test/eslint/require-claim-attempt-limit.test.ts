import { pgqRule, ruleTester } from './rule-tester.ts';

// A Prisma claim in two calls: findFirst picks the job, a compare-and-set updateMany takes it.
const claim = (filter: string) => `import { PrismaClient } from '@prisma/client';
const prisma = new PrismaClient();
export async function claim(worker: string) {
  const job = await prisma.job.findFirst({
    where: { ${filter} },
    orderBy: { runAt: 'asc' },
  });
  if (!job) return null;
  const { count } = await prisma.job.updateMany({
    where: { id: job.id, status: job.status },
    data: { status: 'running', lockedBy: worker, leasedUntil: new Date(Date.now() + 60_000), attemptCount: { increment: 1 } },
  });
  return count === 1 ? job : null;
}`;
const takesExpired = "OR: [{ status: 'queued' }, { status: 'running', leasedUntil: { lt: new Date() } }]";

// node-postgres text with an optional filter interpolated from a const (`AND ...` or ''): read without it.
const optionalFilter = (predicate: string) => `import pg from 'pg';
const pool = new pg.Pool();
export async function claim(worker: string, kind?: string) {
  const byKind = kind ? \`AND kind = $2\` : '';
  const { rows } = await pool.query(
    \`UPDATE jobs SET status = 'running', locked_by = $1, attempts = attempts + 1
      WHERE id = (SELECT id FROM jobs WHERE ${predicate} \${byKind} ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING *\`,
    kind ? [worker, kind] : [worker],
  );
  return rows[0];
}`;

// A store built around the query function its caller hands in: `query(text)` sends like `deps.query(text)`.
const handedStore = (sweepLimit: string) => `export function createStore({ query }: { query: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }> }) {
  return {
    requeue: () => query("UPDATE jobs SET state = 'retry' WHERE state = 'running' AND taken_at < now() - interval '5 minutes'${sweepLimit}"),
    claim: (w: string) => query("UPDATE jobs SET state = 'running', taken_by = $1, taken_at = now(), tries = tries + 1 WHERE id = (SELECT id FROM jobs WHERE state IN ('new', 'retry') ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING *", [w]),
    fail: (id: number, w: string) => query("UPDATE jobs SET state = CASE WHEN tries >= 5 THEN 'dead' ELSE 'retry' END WHERE id = $1 AND taken_by = $2", [id, w]),
  };
}`;

ruleTester.run('require-claim-attempt-limit', pgqRule('require-claim-attempt-limit'), {
  valid: [
    // The limit is in the read: the claim's predicate.
    claim(`${takesExpired}, attemptCount: { lt: 5 }`),
    // Only new jobs, nothing takes a job back.
    claim("status: 'queued'"),
    optionalFilter("status IN ('queued', 'failed') AND attempts < max_attempts"),
    handedStore(' AND tries < 5'),
  ],
  invalid: [
    {
      // It takes expired leases back and has no limit: reported at the read's expired-lease test.
      code: claim(takesExpired),
      errors: [{ messageId: 'noLimit', line: 5, column: 77 }],
    },
    {
      // It takes failed jobs back with no limit; the optional filter does not hide the predicate.
      code: optionalFilter("status IN ('queued', 'failed')"),
      errors: [{ messageId: 'noRetryLimit', line: 7 }],
    },
    {
      // The sweep re-queues expired leases with no limit, and the claim has none: reported at the sweep.
      code: handedStore(''),
      errors: [{ messageId: 'noLimitSweep', line: 3 }],
    },
  ],
});
