// Prisma model calls are read as the SQL they send: the table is the model's
// name, the columns its fields (camelCase, quoted), `where` filters and `data`
// writes (increment, set) as comparisons and assignments, reads (findFirst,
// findMany, findUnique, count) as SELECT; a call whose filter it cannot read
// (a relation filter) sends nothing it could judge and is left out. A write
// that takes the row a one-row read of its model picked in the same function
// takes it by that read's filter: `"id" = (SELECT "id" FROM ... WHERE ...)`;
// the first row of a findMany (`const [job] = ...`) is such a row, and the
// rows of a findMany taken by their ids (`{ in: jobs.map((j) => j.id) }`) are
// `"id" IN (SELECT "id" FROM ... WHERE ... LIMIT <take>)`.
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
  await prisma.job.updateMany({ where: { queue: { name: 'mail' } }, data: { status: 'done' } });
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

test('a time from the application clock is the SQL it stands for: new Date() is now(), new Date(Date.now() + literal or constant ms) a lease of that length, + a computed amount a lease the code decides', () => {
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
  assert.equal(byColumn.other.kind, 'expression', 'an offset the code computes: now() plus a value');
  assert.deepEqual((byColumn.other as { functions?: string[]; params?: boolean }).functions, ['now']);
  assert.equal((byColumn.other as { params?: boolean }).params, true);
  assert.equal((byColumn.other as { intervalSeconds?: number }).intervalSeconds, undefined);
  assert.deepEqual((byColumn.past as { functions?: string[] }).functions, ['now']);
});

const sqlOf = (text: string) =>
  typescriptFrontEnd
    .parse(`import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\n${text}`, '/virtual/jobs.ts', {})
    .sites.map((s) => ({ fn: s.functionName, scope: s.scope.kind, statement: s.analysis.statements[0] }));

test('findFirst, findMany, findUnique and count are the SELECT they send: AND/OR/NOT, not, in, orderBy, take', () => {
  const sites = sqlOf(`
export async function next() {
  return prisma.job.findFirst({ where: { OR: [{ status: 'queued' }, { status: 'running', leasedUntil: { lt: new Date() } }], attemptCount: { lt: 5 }, NOT: { kind: { in: ['import', 'export'] } }, lockedBy: { not: null } }, orderBy: [{ runAt: 'asc' }, { id: 'asc' }] });
}
export async function batch() {
  return prisma.job.findMany({ where: { AND: [{ status: 'queued' }, { runAt: { lte: new Date() } }] }, orderBy: { runAt: { sort: 'asc', nulls: 'last' } }, take: 10 });
}
export async function one(id: string) {
  return prisma.job.findUnique({ where: { id } });
}
export async function waiting() {
  return prisma.job.count({ where: { status: 'queued', kind: undefined } });
}
export async function related() {
  return prisma.job.findMany({ where: { queue: { is: { paused: false } } } });
}`);
  const byFn = Object.fromEntries(sites.map((s) => [s.fn, s.statement]));
  for (const fn of ['next', 'batch', 'one', 'waiting']) {
    assert.equal(byFn[fn]?.kind, 'SelectStmt', `${fn} is a SELECT`);
    assert.deepEqual(byFn[fn].lockingReads, [], `${fn} locks nothing`);
    assert.deepEqual(byFn[fn].rowWrites, [], `${fn} writes nothing`);
  }
  assert.equal(byFn.related, undefined, 'a relation filter is not read');
});

test('a write that takes the row a findFirst of its model picked: the read is a subquery of its WHERE, its filter the claim predicate', () => {
  const sites = sqlOf(`
const LEASE_MS = 60_000;
export async function claim(worker: string) {
  const job = await prisma.job.findFirst({ where: { OR: [{ status: 'queued' }, { status: 'running', leasedUntil: { lt: new Date() } }], attemptCount: { lt: 5 } }, orderBy: { runAt: 'asc' } });
  if (!job) return null;
  return prisma.job.updateMany({ where: { id: job.id, status: job.status }, data: { status: 'running', lockedBy: worker, leasedUntil: new Date(Date.now() + LEASE_MS), attemptCount: { increment: 1 } } });
}
export async function inTransaction() {
  return prisma.$transaction(async (tx) => {
    const job = await tx.job.findFirst({ where: { status: 'queued' } });
    return tx.job.update({ where: { id: job!.id }, data: { status: 'running' } });
  });
}
export async function otherModel() {
  const user = await prisma.user.findFirst({ where: { active: true } });
  return prisma.job.updateMany({ where: { id: user?.id }, data: { status: 'running' } });
}
export async function unreadRead() {
  const job = await prisma.job.findFirst({ where: { queue: { is: { paused: false } } } });
  return prisma.job.updateMany({ where: { id: job!.id }, data: { status: 'running' } });
}
export async function many() {
  const jobs = await prisma.job.findMany({ where: { status: 'queued' } });
  return prisma.job.updateMany({ where: { id: jobs.id }, data: { status: 'running' } });
}`);
  const writeOf = (fn: string) => sites.find((s) => s.fn === fn && s.statement.kind === 'UpdateStmt')!.statement.rowWrites[0];
  const picked = (fn: string) => writeOf(fn).where.find((c) => c.value.kind === 'subquery');
  const claim = picked('claim');
  assert.ok(claim && claim.value.kind === 'subquery', 'id = (SELECT id FROM "Job" WHERE ...)');
  assert.deepEqual(claim.value.tables, ['job']);
  assert.deepEqual(claim.value.where!.map((c) => `${c.column} ${c.op}${c.underOr ? ' (or)' : ''}`), ['status = (or)', 'status = (or)', 'leaseduntil < (or)', 'attemptcount <']);
  assert.ok(writeOf('claim').where.some((c) => c.column === 'status' && c.value.kind === 'param'), 'the compare-and-set stays');
  const inTx = sites.filter((s) => s.fn === 'inTransaction');
  assert.ok(inTx.every((s) => s.scope === 'transaction'));
  assert.ok(picked('inTransaction'), 'tx.job.findFirst then tx.job.update');
  assert.equal(picked('otherModel'), undefined, 'a row of another model');
  assert.equal(picked('many'), undefined, 'findMany picks no one row');
  assert.equal(picked('unreadRead'), undefined, 'a read whose filter is not read');
  assert.deepEqual(writeOf('unreadRead').where.map((c) => `${c.column} ${c.value.kind}`), ['id param'], 'the write is still read, by a value');
});

test('a write that takes the rows a findMany of its model picked, by their ids, or its first row: the read is a subquery of its WHERE', () => {
  const sites = sqlOf(`
export async function batch(worker: string) {
  const jobs = await prisma.job.findMany({ where: { OR: [{ status: 'pending' }, { status: 'running', lockedUntil: { lt: new Date() } }], attempts: { lt: 5 } }, orderBy: { id: 'asc' }, take: 10 });
  await prisma.job.updateMany({ where: { id: { in: jobs.map((j) => j.id) }, status: 'pending' }, data: { status: 'running', lockedBy: worker, attempts: { increment: 1 } } });
}
export async function byConst() {
  const jobs = await prisma.job.findMany({ where: { status: 'pending' }, take: 5 });
  const ids = jobs.map(({ id }) => id);
  await prisma.job.updateMany({ where: { id: { in: ids } }, data: { status: 'running' } });
}
export async function firstOfMany() {
  const [job] = await prisma.job.findMany({ where: { status: 'pending' }, orderBy: { id: 'asc' }, take: 1 });
  if (!job) return;
  await prisma.job.updateMany({ where: { id: job.id, status: 'pending' }, data: { status: 'running' } });
}
export async function secondOfMany() {
  const [, job] = await prisma.job.findMany({ where: { status: 'pending' } });
  await prisma.job.updateMany({ where: { id: job.id }, data: { status: 'running' } });
}
export async function otherField() {
  const jobs = await prisma.job.findMany({ where: { status: 'pending' } });
  await prisma.job.updateMany({ where: { id: { in: jobs.map((j) => j.parentId) } }, data: { status: 'running' } });
}
export async function otherModel() {
  const users = await prisma.user.findMany({ where: { active: true } });
  await prisma.job.updateMany({ where: { id: { in: users.map((u) => u.id) } }, data: { status: 'running' } });
}
export async function oneRowMapped() {
  const job = await prisma.job.findFirst({ where: { status: 'pending' } });
  await prisma.job.updateMany({ where: { id: { in: [job].map((j) => j!.id) } }, data: { status: 'running' } });
}`);
  const writeOf = (fn: string) => sites.find((s) => s.fn === fn && s.statement.kind === 'UpdateStmt')!.statement.rowWrites[0];
  const picked = (fn: string) => writeOf(fn).where.find((c) => c.value.kind === 'subquery');
  const batch = picked('batch');
  assert.ok(batch && batch.value.kind === 'subquery', 'id IN (SELECT id FROM "Job" WHERE ... LIMIT 10)');
  assert.equal(batch.op, 'in');
  assert.deepEqual(batch.value.tables, ['job']);
  assert.deepEqual(batch.value.where!.map((c) => `${c.column} ${c.op}${c.underOr ? ' (or)' : ''}`), ['status = (or)', 'status = (or)', 'lockeduntil < (or)', 'attempts <']);
  assert.ok(writeOf('batch').where.some((c) => c.column === 'status' && c.value.kind === 'literal'), 'the compare-and-set stays');
  assert.equal(picked('byConst')?.op, 'in', 'a const bound to the map of the ids');
  const first = picked('firstOfMany');
  assert.equal(first?.op, '=', 'the first row of a findMany is one row: id = (SELECT ... LIMIT 1)');
  assert.deepEqual(first?.value.kind === 'subquery' && first.value.where!.map((c) => c.column), ['status']);
  assert.equal(picked('secondOfMany'), undefined, 'the second row is not the pick');
  assert.equal(picked('otherField'), undefined, 'ids of another field');
  assert.equal(picked('otherModel'), undefined, 'rows of another model');
  assert.equal(picked('oneRowMapped'), undefined, 'a map over something else than the rows of a findMany');
});
