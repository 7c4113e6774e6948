// Prisma model calls are read as the SQL they send: the table is the model's
// name, the columns its fields (camelCase, quoted), `where` filters and `data`
// writes (increment, set) as comparisons and assignments; a call whose filter
// it cannot read (AND/OR) sends nothing it could judge and is left out.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const writesOf = (text: string) =>
  typescriptFrontEnd
    .parse(text, '/virtual/jobs.ts', {})
    .sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.rowWrites.map((w) => ({ fn: s.functionName, scope: s.scope.kind, ...w }))));

test('update, updateMany and deleteMany of a model are UPDATE and DELETE of its table, with camelCase columns', () => {
  const writes = writesOf(`
import { PrismaClient } from '@prisma/client';
const prisma = new PrismaClient();
export async function finish(id: number, attempt: number) {
  await prisma.job.updateMany({ where: { id, attempts: attempt, leasedUntil: { gt: new Date() } }, data: { status: 'done', attempts: { increment: 1 } } });
}
export async function purge() {
  await prisma.job.deleteMany({ where: { status: 'done' } });
}
export async function inTx() {
  await prisma.$transaction(async (tx) => {
    await tx.job.update({ where: { id: 1 }, data: { leasedUntil: null } });
  });
}
export async function unread() {
  await prisma.job.updateMany({ where: { OR: [{ id: 1 }, { id: 2 }] }, data: { status: 'done' } });
}`);
  const finish = writes.find((w) => w.fn === 'finish');
  assert.ok(finish, 'updateMany is an UPDATE');
  assert.equal(finish.op, 'update');
  assert.equal(finish.table.toLowerCase(), 'job');
  assert.deepEqual(finish.assignments.map((a) => a.column).sort(), ['attempts', 'status']);
  assert.deepEqual(finish.where.map((c) => c.column.toLowerCase()).sort(), ['attempts', 'id', 'leaseduntil']);
  assert.equal(writes.find((w) => w.fn === 'purge')?.op, 'delete');
  const inTx = writes.find((w) => w.op === 'update' && w.assignments.some((a) => a.column.toLowerCase() === 'leaseduntil'));
  assert.equal(inTx?.scope, 'transaction', 'tx.job.update runs in the $transaction');
  assert.equal(inTx?.returning, true);
  assert.equal(writes.filter((w) => w.fn === 'unread').length, 0);
});

test('a time from the application clock is the SQL it stands for: new Date() is now(), new Date(Date.now() + literal or constant ms) a lease of that length', () => {
  const [write] = writesOf(`
import { PrismaClient } from '@prisma/client';
const prisma = new PrismaClient();
const LEASE_MS = 90 * 1000;
export async function lease(id: number, ms: number) {
  await prisma.job.updateMany({ where: { id }, data: { lockedUntil: new Date(Date.now() + 5 * 60 * 1000), byConstant: new Date(Date.now() + LEASE_MS), seenAt: new Date(), other: new Date(Date.now() + ms), past: new Date(Date.now() - 1000) } });
}`);
  const byColumn = Object.fromEntries(write.assignments.map((a) => [a.column, a.value]));
  assert.equal(byColumn.lockeduntil.kind, 'expression');
  assert.equal((byColumn.lockeduntil as { intervalSeconds?: number }).intervalSeconds, 300);
  assert.equal((byColumn.byconstant as { intervalSeconds?: number }).intervalSeconds, 90, 'a constant offset of the file');
  assert.deepEqual((byColumn.seenat as { functions?: string[] }).functions, ['now']);
  assert.equal(byColumn.other.kind, 'param', 'an offset the code computes stays a value');
  assert.deepEqual((byColumn.past as { functions?: string[] }).functions, ['now']);
});
