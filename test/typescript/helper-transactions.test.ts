// A project function handed the caller's transaction (a client after BEGIN,
// a driver's callback handle) runs its SQL in that transaction: the walk at
// the call records it as the caller's site, in the caller's scope, at its own
// spans with the call it runs at (a function of the file or of the class), or
// moved to the call (a function of another module), in calledSites (the
// function's own site stays its module's one reading). Its claim and finish are
// the transaction's; a call that only keeps the queue's books is not the
// job's work. Quiet: a helper handed a pool outside a catch, a helper handed
// a client outside any transaction, and what a helper sends on its own pool.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel } from '../../src/model/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const parse = (text: string, file = '/virtual/worker.ts'): FileModel => typescriptFrontEnd.parse(text, file, {});
/** The scopes of the sites whose text holds `fragment`: 'tx' for the caller's transaction (opened at `opened`), else the scope's kind. */
const scopesOf = (model: FileModel, fragment: string, opened: string) =>
  [...model.sites, ...(model.calledSites ?? [])]
    .filter((s) => model.text.slice(s.span.start, s.span.end).includes(fragment))
    .map((s) => (s.scope.kind === 'transaction' && s.scope.id.endsWith(`@${model.text.indexOf(opened)}`) ? `tx${s.calledAt ? '@call' : ''}` : s.scope.kind))
    .sort();

const helpers = (open: string, close: string, handle: string, type: string) => `
async function lockNext(db: ${type}) {
  const rows = await db.query("select id from jobs where state = 'queued' order by id limit 1 for update skip locked");
  return rows[0];
}
async function countAttempt(db: ${type}, id: number) {
  await db.query('update jobs set attempts = attempts + 1 where id = $1', [id]);
}
async function markDone(db: ${type}, id: number) {
  await db.query("update jobs set state = 'done' where id = $1", [id]);
}
declare function work(id: number): Promise<void>;
export async function runNext() {
  ${open}
    const job = await lockNext(${handle});
    await countAttempt(${handle}, job.id);
    await work(job.id);
    await markDone(${handle}, job.id);
  ${close}
}`;

test('node-postgres: a client after BEGIN handed to functions of the file runs their SQL in its transaction', () => {
  const model = parse(`import pg, { type PoolClient } from 'pg';
const pool = new pg.Pool();
${helpers("const c = await pool.connect();\n  try {\n    await c.query('BEGIN');", "    await c.query('COMMIT');\n  } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }", 'c', 'PoolClient')}`);
  assert.deepEqual(scopesOf(model, 'attempts + 1', "c.query('BEGIN')"), ['tx@call', 'unknown']);
  assert.deepEqual(scopesOf(model, "state = 'done'", "c.query('BEGIN')"), ['tx@call', 'unknown']);
  assert.equal(model.jobTransactions.length, 1, 'the claim, the work and the finish are one transaction');
});

test('TypeORM, Prisma, Knex and postgres.js callback handles handed to functions of the file', () => {
  const typeorm = parse(`import { DataSource, EntityManager } from 'typeorm';
const ds = new DataSource({ type: 'postgres' });
${helpers('await ds.transaction(async (manager) => {', '});', 'manager', 'EntityManager')}`);
  assert.deepEqual(scopesOf(typeorm, 'attempts + 1', 'ds.transaction'), ['tx@call', 'unknown']);
  assert.equal(typeorm.jobTransactions.length, 1);
  const knex = parse(
    `import knex, { type Knex } from 'knex';
const db = knex({ client: 'pg' });
${helpers('await db.transaction(async (trx) => {', '});', 'trx', 'Knex.Transaction')}`.replaceAll('db.query(', 'db.raw('),
  );
  assert.ok(scopesOf(knex, 'attempts + 1', 'db.transaction').includes('tx@call'));
  assert.equal(knex.jobTransactions.length, 1);
  const prisma = parse(`import { PrismaClient, Prisma } from '@prisma/client';
const prisma = new PrismaClient();
${helpers('await prisma.$transaction(async (tx) => {', '});', 'tx', 'Prisma.TransactionClient')}`.replaceAll('db.query(', 'db.$queryRawUnsafe('));
  assert.ok(scopesOf(prisma, 'attempts + 1', 'prisma.$transaction').includes('tx@call'));
  assert.equal(prisma.jobTransactions.length, 1);
  const postgres = parse(`import postgres from 'postgres';
const sql = postgres();
${helpers('await sql.begin(async (tx) => {', '});', 'tx', 'postgres.TransactionSql')}`.replaceAll('db.query(', 'db.unsafe('));
  assert.ok(scopesOf(postgres, 'attempts + 1', 'sql.begin').includes('tx@call'));
  assert.equal(postgres.jobTransactions.length, 1);
});

test('a method of the class handed the manager; a helper that only keeps the books is not the work', () => {
  const service = (body: string) =>
    parse(`import { DataSource, EntityManager } from 'typeorm';
declare function work(id: number): Promise<void>;
export class Jobs {
  constructor(private readonly ds: DataSource) {}
  async tick() {
    await this.ds.transaction(async (manager) => {
      const job = await this.lockNext(manager);
      ${body}
      await this.markDone(manager, job.id);
    });
  }
  private async lockNext(manager: EntityManager) {
    return (await manager.query("select id from jobs where state = 'queued' limit 1 for update skip locked"))[0];
  }
  private async markDone(manager: EntityManager, id: number) {
    await manager.query("update jobs set state = 'done' where id = $1", [id]);
  }
}`);
  assert.deepEqual(service('await work(job.id);').jobTransactions.length, 1);
  // Lock and finish, nothing run between: no job's work in the transaction.
  assert.deepEqual(service('').jobTransactions.length, 0);
});

test('a function of another module is walked at the call; its sites are moved to the call', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-helper-tx-'));
  writeFileSync(join(dir, 'package.json'), '{"name":"t"}');
  writeFileSync(
    join(dir, 'store.ts'),
    `import type { Knex } from 'knex';
export async function take(trx: Knex.Transaction) { return trx('jobs').where({ state: 'queued' }).forUpdate().skipLocked().first(); }
export async function count(trx: Knex.Transaction, id: number) { await trx.raw('update jobs set attempts = attempts + 1 where id = ?', [id]); }
export async function done(trx: Knex.Transaction, id: number) { await trx('jobs').where({ id }).update({ state: 'done' }); }
export async function fail(db: Knex, id: number) { await db.raw('update jobs set attempts = attempts + 1 where id = ?', [id]); }`,
  );
  const worker = (body: string, catchBody: string) => {
    const file = join(dir, `worker${body.length}${catchBody.length}.ts`);
    const text = `import knex from 'knex';
import { take, count, done, fail } from './store';
const db = knex({ client: 'pg' });
declare function work(id: number): Promise<void>;
export async function run() {
  let id: number | undefined;
  try {
    await db.transaction(async (trx) => {
      const job = await take(trx);
      id = job.id;
      ${body}
      await work(job.id);
      await done(trx, job.id);
    });
  } catch (e) {
    ${catchBody}
    throw e;
  }
}`;
    writeFileSync(file, text);
    return parse(text, file);
  };
  const bad = worker('await count(trx, job.id);', '');
  const at = bad.text.indexOf('count(trx, job.id)');
  // Recorded once in the caller, as run there (calledSites), not among the file's own statements.
  assert.equal(bad.sites.length, 0);
  const counted = bad.calledSites?.find((s) => s.analysis.statements.some((st) => st.rowWrites.some((w) => w.assignments.some((a) => a.column === 'attempts'))));
  assert.ok(counted && counted.scope.kind === 'transaction', 'the count runs in the worker transaction');
  assert.ok(counted.span.start === at - 'await '.length || (counted.span.start <= at && at < counted.span.end), 'at the call');
  assert.deepEqual(bad.jobTransactions.map((j) => j.failureCountedOutside), [false]);
  // Counted on the pool in the catch, after the rollback: outside the job's transaction.
  const good = worker('', 'if (id !== undefined) await fail(db, id);');
  assert.deepEqual(good.jobTransactions.map((j) => j.failureCountedOutside), [true]);
});

test('quiet: a pool handed outside a catch, a client outside any transaction, a helper on its own pool', () => {
  const model = parse(`import pg, { type PoolClient, type Pool } from 'pg';
const pool = new pg.Pool();
async function note(db: Pool, id: number) { await db.query('update jobs set seen = seen + 1 where id = $1', [id]); }
async function peek(c: PoolClient) { await c.query('update jobs set peeked = peeked + 1'); }
async function audit(c: PoolClient, id: number) { await pool.query('insert into audit(id) values ($1)', [id]); await c.query('update jobs set audited = true where id = $1', [id]); }
export async function run() {
  await note(pool, 1);
  const c = await pool.connect();
  await peek(c);
  await c.query('BEGIN');
  await audit(c, 1);
  await c.query('COMMIT');
  c.release();
}`);
  // One site each: the function's own walk's (a typed pool runs in autocommit), no copy at the call.
  assert.deepEqual(scopesOf(model, 'seen + 1', "c.query('BEGIN')"), ['autocommit']);
  assert.deepEqual(scopesOf(model, 'peeked + 1', "c.query('BEGIN')"), ['unknown']);
  assert.deepEqual(scopesOf(model, 'insert into audit', "c.query('BEGIN')"), ['autocommit']);
  assert.deepEqual(scopesOf(model, 'audited = true', "c.query('BEGIN')"), ['tx@call', 'unknown']);
});

test("TypeORM's query runner: its manager, read as a member or destructured, handed to methods after startTransaction", () => {
  const runner = (take: string, handle: string) =>
    parse(`import { DataSource, EntityManager } from 'typeorm';
declare function work(id: number): Promise<void>;
export class Jobs {
  constructor(private readonly ds: DataSource) {}
  async tick() {
    const runner = this.ds.createQueryRunner();
    ${take}
    await runner.connect();
    await runner.startTransaction();
    try {
      const rows = await this.lock(${handle});
      await work(rows[0].id);
      await this.finish(${handle}, rows[0].id);
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
  }
  private async lock(em: EntityManager) { return em.query("select id from jobs where state = 'queued' for update skip locked"); }
  private async finish(em: EntityManager, id: number) { await em.query("update jobs set state = 'done' where id = $1", [id]); }
}`);
  assert.equal(runner('', 'runner.manager').jobTransactions.length, 1);
  assert.equal(runner('const { manager } = runner;', 'manager').jobTransactions.length, 1);
  // A property the driver does not know holds no connection.
  assert.equal(runner('const { connection } = runner;', 'connection').jobTransactions.length, 0);
});

test('a call out made inside a function of the file walked in the caller transaction is recorded there, once, with the call', () => {
  const model = parse(`import pg, { type PoolClient } from 'pg';
const pool = new pg.Pool();
async function post(url: string) { await fetch(url, { method: 'POST' }); }
async function deliver(c: PoolClient) {
  const { rows } = await c.query('select id, url from hooks for update skip locked limit 1');
  await fetch(rows[0].url);
  await post(rows[0].url);
}
export async function tick() {
  const c = await pool.connect();
  await c.query('BEGIN');
  await deliver(c);
  await c.query('COMMIT');
  c.release();
}`);
  const call = model.text.indexOf('deliver(c);');
  const effects = model.sideEffects.filter((e) => e.scope.kind === 'transaction');
  assert.deepEqual(
    effects.map((e) => [e.callee, e.through ?? [], e.calledAt?.start === call - 'await '.length || e.calledAt?.start === call]),
    [
      ['fetch', [], true],
      ['post', ['post', 'fetch'], true],
    ],
  );
});
