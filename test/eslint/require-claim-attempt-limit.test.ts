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

ruleTester.run('require-claim-attempt-limit', pgqRule('require-claim-attempt-limit'), {
  valid: [
    // The limit is in the read: the claim's predicate.
    claim(`${takesExpired}, attemptCount: { lt: 5 }`),
    // Only new jobs, nothing takes a job back.
    claim("status: 'queued'"),
  ],
  invalid: [
    {
      // It takes expired leases back and has no limit: reported at the read's expired-lease test.
      code: claim(takesExpired),
      errors: [{ messageId: 'noLimit', line: 5, column: 77 }],
    },
  ],
});
