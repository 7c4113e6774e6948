// Drizzle chains on a database and a table imported from modules the scan
// cannot read (drivers/drizzle-builder.ts): in a file that imports Drizzle,
// they are the UPDATE/DELETE/locking SELECT they send, on a pool in
// autocommit, the table named as its raw-SQL interpolation `${jobs}` is, its
// columns snake_case. A condition given by name is read where it is written;
// a conditional one only when both branches send the same SQL. What it cannot
// tell stays unknown: no site.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const writesOf = (text: string) =>
  typescriptFrontEnd
    .parse(text, '/virtual/worker.ts', {})
    .sites.flatMap((s) =>
      s.analysis.statements.flatMap((st) =>
        st.rowWrites.map((w) => ({
          fn: s.functionName,
          where: `${s.scope.kind} ${s.connection.kind} ${w.op} ${w.table}: ${w.assignments.map((a) => a.column).join(',')} | ${w.where.map((c) => `${c.column} ${c.op}`).join(' & ')}`,
          line: text.slice(0, w.span.start).split('\n').length,
        })),
      ),
    );

const header = `import { and, eq, lt, sql } from 'drizzle-orm';
import { db } from './database';
import { jobs } from './schema';
`;

test('an update and a delete on an unread database and table are read, the table as its interpolation and columns in snake_case', () => {
  const writes = writesOf(`${header}
export async function beat(id: number, since: Date) {
  await db.update(jobs).set({ lockedSince: new Date() }).where(and(eq(jobs.id, id), eq(jobs.lockedSince, since)));
}
export async function purge() {
  await db.delete(jobs).where(lt(jobs.finishedAt, sql\`now() - interval '7 days'\`));
}`);
  assert.deepEqual(
    writes.map((w) => `${w.fn}: ${w.where}`),
    ['beat: autocommit pool update ${jobs}: locked_since | id = & locked_since =', 'purge: autocommit pool delete ${jobs}:  | finished_at <'],
  );
});

test('a condition given by name is read where it is written, and reported at the name', () => {
  const text = `${header}
export async function finish(id: number) {
  const byId = eq(jobs.id, id);
  await db.update(jobs).set({ status: 'done' }).where(byId);
}`;
  const [write] = writesOf(text);
  assert.equal(write.where, 'autocommit pool update ${jobs}: status | id =');
  const site = typescriptFrontEnd.parse(text, '/virtual/worker.ts', {}).sites[0];
  const where = site.analysis.statements[0].rowWrites[0].where[0];
  assert.equal(text.slice(where.span.start, where.span.end), 'byId');
});

test('a conditional condition is read when both branches send the same SQL, and unknown where they differ', () => {
  const writes = writesOf(`${header}
export async function same(id: number, retry?: { id: number }) {
  const target = retry ? eq(jobs.id, retry.id) : eq(jobs.id, id);
  await db.update(jobs).set({ status: 'done' }).where(target);
}
export async function differs(id: number, since?: Date) {
  const target = since ? and(eq(jobs.id, id), eq(jobs.lockedSince, since)) : eq(jobs.id, id);
  await db.update(jobs).set({ status: 'done' }).where(target);
}
export async function literals(id: number, urgent: boolean) {
  await db.update(jobs).set({ status: 'done' }).where(urgent ? eq(jobs.queue, 'urgent') : eq(jobs.queue, 'bulk'));
}`);
  assert.deepEqual(
    writes.map((w) => w.fn),
    ['same'],
  );
});

test('without a Drizzle import, or on a table that is neither a pgTable nor an unread import, nothing is read', () => {
  const noDrizzle = writesOf(`import { db } from './database';
import { jobs } from './schema';
import { eq } from './operators';
export async function finish(id: number) {
  await db.update(jobs).set({ status: 'done' }).where(eq(jobs.id, id));
}`);
  assert.deepEqual(noDrizzle, []);
  const localTable = writesOf(`${header}
export async function finish(id: number, table: unknown) {
  await db.update(table).set({ status: 'done' }).where(eq(jobs.id, id));
}`);
  assert.deepEqual(localTable, []);
});

test('raw SQL that interpolates a table the walk read names it as its pgTable call does, as its builders do; an unread one stays its interpolation', () => {
  const writes = writesOf(`import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { archived } from './schema';
const tasks = pgTable('export_task', { id: integer('id').primaryKey(), status: text('status') });
const db = drizzle(process.env.URL ?? '');
export async function take() {
  await db.execute(sql\`UPDATE \${tasks} SET status = 'running' WHERE id = 1\`);
  await db.execute(sql\`UPDATE \${archived} SET status = 'gone' WHERE id = 1\`);
}
export async function finish(id: number) {
  await db.update(tasks).set({ status: 'done' }).where(eq(tasks.id, id));
}`);
  assert.deepEqual(
    writes.map((w) => w.where.split(':')[0]),
    ['autocommit pool update export_task', 'autocommit pool update ${archived}', 'autocommit pool update export_task'],
  );
});
