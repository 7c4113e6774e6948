// The shapes real TS/JS code writes its queries in, as model facts: values
// bound to placeholders, pool hooks, per-tenant and one-connection pools, the
// drivers beyond node-postgres, ORM builders and schema policies as the SQL
// they send, transaction state from the parser's facts, and a walk that stays
// linear in nested finally blocks.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const model = (code: string, file = 'job.ts'): FileModel => typescriptFrontEnd.parse(code, file, {});
const placed = (s: SqlSite) => `${s.driver} ${s.scope.kind} ${s.connection.kind}`;

test('params: the values array, { text, values }, unsafe/raw args, Prisma args, Sequelize bind, template holes', () => {
  const m = model(`import pg from 'pg';
import postgres from 'postgres';
import knex from 'knex';
import { PrismaClient } from '@prisma/client';
const pool = new pg.Pool();
const sql = postgres();
const db = knex({});
const prisma = new PrismaClient();
const NAME = 'app.tenant_id';
export async function setSetting(client: pg.PoolClient, key: string, value: string) {
  await client.query('SELECT set_config($1, $2, false)', [key, value]);
}
export async function job(job: { tenantId: string }, t: string) {
  await pool.query("SELECT set_config($1, $2, false)", ['app.tenant_id', t]);
  await pool.query({ text: 'SELECT set_config($1, $2, false)', values: [NAME, String(job.tenantId)] });
  await sql.unsafe('SELECT set_config($1, $2, false)', [NAME, job.tenantId]);
  await db.raw('SELECT set_config(?, ?, false)', ['app.tenant_id', t]);
  await prisma.$executeRawUnsafe('SELECT set_config($1, $2, false)', 'app.tenant_id', t);
  await sql\`SELECT set_config(\${'app.tenant_id'}, \${t}, false)\`;
  await pool.query(\`SELECT set_config('app.tenant_id', '\${t}', false), $1\`, [42]);
  await pool.query('SELECT $1', [...rest(), 1]);
}
declare function rest(): unknown[];`);
  const params = m.sites.map((s) => (s.params ?? []).map((p) => (p.kind === 'literal' ? JSON.stringify(p.value) : p.kind === 'caller-parameter' ? `param:${p.name}` : '?')).join(' '));
  assert.deepEqual(params, [
    'param:key param:value',
    '"app.tenant_id" param:t',
    '"app.tenant_id" param:job.tenantId',
    '"app.tenant_id" param:job.tenantId',
    '"app.tenant_id" param:t',
    '"app.tenant_id" param:t',
    '"app.tenant_id" param:t',
    '42 param:t',
    '',
  ]);
  // A callback's parameters come from the code that runs it, not from a caller.
  const callback = model("import pg from 'pg';\nconst pool = new pg.Pool();\n[['a.b', '1']].forEach(([k, v]) => pool.query('select set_config($1, $2, false)', [k, v]));");
  assert.equal(callback.sites[0].params, undefined);
});

test('pool hooks: pool.on("connect"), pg onConnect, Knex afterCreate, Kysely onCreateConnection/onReserveConnection, Sequelize afterConnect', () => {
  const m = model(`import pg from 'pg';
import knex from 'knex';
import { Kysely, PostgresDialect, CompiledQuery } from 'kysely';
import { Sequelize } from 'sequelize';
const pool = new pg.Pool({ onConnect: async (c) => { await c.query('SET ROLE app') } });
pool.on('connect', (client) => { client.query('SET search_path TO app'); });
pool.on('acquire', setTimezone);
function setTimezone(client) { client.query("SET TIME ZONE 'UTC'"); }
const k = knex({ client: 'pg', pool: { afterCreate(conn, done) { conn.query('SET search_path TO app', done); } } });
const ky = new Kysely({ dialect: new PostgresDialect({ pool, onReserveConnection: async (c) => { await c.executeQuery(CompiledQuery.raw('SET ROLE reader')); } }) });
const s = new Sequelize('', { hooks: { afterConnect: async (connection) => { await connection.query('SET search_path TO app'); } } });`);
  assert.deepEqual(
    m.sites.map((s) => `${s.callback?.role} ${m.connections.find((c) => c.id === s.callback?.configId)?.driver}`),
    ['configure pg', 'configure pg', 'checkout pg', 'configure knex', 'checkout pg', 'configure sequelize'],
  );
  const pg = m.connections.find((c) => c.driver === 'pg')!;
  assert.deepEqual(pg.callbacks.map((c) => `${c.role}:${c.name}`), ['configure:onConnect', 'configure:on(\'connect\')', 'checkout:on(\'acquire\')', 'checkout:onReserveConnection']);
});

test('reuse: a pool per tenant (kept by a tenant key from the parameters, or configured from them), a one-connection script client; not a pool kept by its URL, a shared max: 1 pool or one ended at shutdown', () => {
  const m = model(`import pg from 'pg';
import knex from 'knex';
import postgres from 'postgres';
const pools = new Map();
export function byKey(tenant: { id: string }) {
  let p = pools.get(tenant.id);
  if (!p) { p = new pg.Pool({ database: 'app' }); pools.set(tenant.id, p); }
  return p;
}
export function byHook(schema: string) {
  return knex({ client: 'pg', pool: { afterCreate(conn, done) { conn.query(\`SET search_path TO \${schema}\`, done); } } });
}
export function factory(url: string) { return new pg.Pool({ connectionString: url }); }
export async function script() { const sql = postgres('', { max: 1 }); await sql\`select 1\`; await sql.end(); }
export async function client() { const c = new pg.Client(); await c.connect(); await c.end(); }
export const shared = postgres('', { max: 1 });
// Kept by its URL: one pool for every tenant that shares it.
export function byUrl(url: string) {
  let p = pools.get(url);
  if (!p) { p = new pg.Pool({ connectionString: url }); pools.set(url, p); }
  return p;
}
// Ended by a shutdown handler: a long-lived pool.
export const worker = postgres('', { max: 1 });
process.on('SIGTERM', () => void worker.end());`);
  assert.deepEqual(m.connections.map((c) => `${c.driver} ${c.reuse ?? 'shared'}`), [
    'pg per-tenant',
    'knex per-tenant',
    'pg shared',
    'postgres.js single-connection',
    'pg single-connection',
    'postgres.js shared',
    'pg shared',
    'postgres.js shared',
  ]);
  // The one-connection pool's calls run on the connection the script opened.
  assert.equal(m.sites.find((s) => s.driver === 'postgres.js')!.connection.kind, 'dedicated');
});

test('drivers: Bun SQL, Neon HTTP and Pool, @vercel/postgres, Sequelize, Supabase rpc, Prisma adapters and extensions', () => {
  const m = model(`import { SQL, sql as bunSql } from 'bun';
import { neon, Pool as NeonPool } from '@neondatabase/serverless';
import { sql as vercel, db as vercelDb } from '@vercel/postgres';
import { createClient } from '@supabase/supabase-js';
import { Sequelize } from 'sequelize';
import { PrismaClient } from '@prisma/client';
const bun = new SQL('');
const http = neon('');
const ws = new NeonPool();
const supabase = createClient('', '');
const sequelize = new Sequelize('');
const prisma = new PrismaClient().$extends({});
await bun\`select 1\`;
await bunSql.unsafe('select 2');
const reserved = await bun.reserve();
await reserved\`select 3\`;
await http\`select 4\`;
await http.query('select 5', []);
const c = await ws.connect();
await c.query('select 6');
await vercel\`select 7\`;
const vc = await vercelDb.connect();
await vc.sql\`select 8\`;
await supabase.rpc('enter_tenant', { tenant_id: 't1' });
await sequelize.query('select 9');
await prisma.$queryRaw\`select 10\`;`);
  assert.deepEqual(m.sites.map(placed), [
    'bun autocommit pool',
    'bun autocommit pool',
    'bun autocommit pooled-client',
    'neon autocommit pool',
    'neon autocommit pool',
    'neon autocommit pooled-client',
    'vercel-postgres autocommit pool',
    'vercel-postgres autocommit pooled-client',
    'supabase autocommit pool',
    'sequelize autocommit pool',
    'prisma autocommit pool',
  ]);
  // The RPC is the routine's call, named arguments and all.
  const rpc = m.sites.find((s) => s.driver === 'supabase')!;
  assert.equal(rpc.analysis.statements[0].kind, 'SelectStmt');
  assert.deepEqual(rpc.params, [{ kind: 'literal', value: 't1' }]);
  assert.equal(m.text.slice(rpc.span.start, rpc.span.end), "supabase.rpc('enter_tenant', { tenant_id: 't1' })");
});

test('a Drizzle database imported from a module the scan cannot read is the database; a parameter, a transaction callback or a tag that is not Drizzle\'s is not', () => {
  const m = model(`import { sql } from 'drizzle-orm';
import { appDb } from '@acme/db';
import { frag } from '@acme/sql';
export async function a() { await appDb.execute(sql\`select 1\`); }
export async function b() { await appDb.execute(sql.raw('select 2')); }
export async function c(appDb: any) { await appDb.execute(sql\`select 3\`); }
export async function d() { await appDb.transaction(async (tx: any) => { await tx.execute(sql\`select 4\`); }); }
export async function e() { await appDb.execute(frag\`select 5\`); }`);
  assert.deepEqual(m.sites.map(placed), ['drizzle autocommit pool', 'drizzle autocommit pool', 'drizzle unknown unknown', 'drizzle transaction pooled-client', 'drizzle unknown unknown']);
});

test('execute({ sql, params }) with the object written at the call sends that SQL on any receiver; execute(plan) does not', () => {
  const m = model(`export async function run(conn: any, plan: any, role: string) {
  await conn.execute({ sql: 'select set_config($1, $2, false)', params: ['role', role] });
  await conn.execute(plan);
  await conn.execute({ text: 'select 1' });
}`);
  assert.equal(m.sites.length, 1);
  assert.deepEqual(
    m.sites[0].params?.map((p) => (p.kind === 'literal' ? p.value : p.kind)),
    ['role', 'caller-parameter'],
  );
});

test('transactions of the new drivers: Bun sql.begin, Neon sql.transaction([...]), Sequelize managed and unmanaged, a Prisma adapter transaction', () => {
  const m = model(`import { SQL } from 'bun';
import { neon } from '@neondatabase/serverless';
import { Sequelize } from 'sequelize';
import { PrismaPg } from '@prisma/adapter-pg';
const bun = new SQL('');
const http = neon('');
const sequelize = new Sequelize('');
const adapter = new PrismaPg({ connectionString: '' });
await bun.begin(async (tx) => { await tx\`select 1\`; });
await http.transaction([http\`select 2\`, http\`select 3\`]);
await sequelize.transaction(async (t) => { await sequelize.query('select 4', { transaction: t }); await sequelize.query('select 5'); });
const t = await sequelize.transaction();
await sequelize.query('select 6', { transaction: t });
await t.commit();
const conn = await adapter.connect();
const tx = await conn.startTransaction();
await tx.executeRaw({ sql: 'select 7', args: [] });
await tx.commit();
await tx.queryRaw({ sql: 'select 8', args: [] });`);
  assert.deepEqual(m.sites.map((s) => `${s.driver} ${s.scope.kind}`), [
    'bun transaction',
    'neon transaction',
    'neon transaction',
    'sequelize transaction',
    'sequelize autocommit',
    'sequelize transaction',
    'prisma transaction',
    'prisma autocommit',
  ]);
});

test('ORM builders are the SQL they send: Drizzle, Kysely and Knex claims, finishes and sweeps give the queue facts raw SQL gives', () => {
  const m = model(`import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, integer, text, timestamp } from 'drizzle-orm/pg-core';
import { and, eq, lt, inArray, sql } from 'drizzle-orm';
import { Kysely } from 'kysely';
import knex from 'knex';
const jobs = pgTable('jobs', { id: integer('id'), status: text('status'), attempts: integer('attempts'), lockedUntil: timestamp('locked_until') });
const db = drizzle('');
const k = new Kysely<any>({} as any);
const kn = knex({});
export const claim = () => db.update(jobs).set({ status: 'running', attempts: sql\`\${jobs.attempts} + 1\`, lockedUntil: sql\`now() + interval '30 seconds'\` })
  .where(inArray(jobs.id, db.select({ id: jobs.id }).from(jobs).where(and(eq(jobs.status, 'queued'), lt(jobs.attempts, 5))).limit(1).for('update', { skipLocked: true })))
  .returning();
export const done = (id: number, attempt: number) => db.update(jobs).set({ status: 'done' }).where(and(eq(jobs.id, id), eq(jobs.attempts, attempt)));
export async function more(id: number) {
  await k.updateTable('jobs').set({ status: 'done' }).where('id', '=', id).execute();
  await kn('jobs').where({ id }).update({ status: 'failed', locked_until: null });
  await kn('jobs').where('status', 'running').where('locked_until', '<', kn.fn.now()).whereRaw('attempts >= max_attempts').update({ status: 'dead' });
  const notRun = k.updateTable('jobs').set({ status: 'x' });
}`);
  const facts = queueFactsOf(m);
  assert.deepEqual(facts.claims.map((c) => [c.table, c.design, c.increments, !!c.limitAt, c.leaseSeconds]), [['jobs', 'lease', true, true, 30]]);
  assert.deepEqual(facts.finishes.map((f) => [f.kind, f.compared.includes('attempts') ? 'attempts' : '-', f.by]), [['finish', 'attempts', 'id'], ['finish', '-', 'id'], ['fail', '-', 'id']]);
  assert.deepEqual(facts.sweeps.map((s) => s.dead), [true]);
  // One site per query (the subquery is part of its claim), none for a builder that never runs.
  assert.equal(m.sites.length, 5);
  // The finish's fence comparison is reported at the code that writes it.
  const fenced = m.sites[1].analysis.statements[0].rowWrites[0].where.find((c) => c.column === 'attempts')!;
  assert.equal(m.text.slice(fenced.span.start, fenced.span.end), 'eq(jobs.attempts, attempt)');
});

test('SQL built by the code: a helper that returns it, and table-name holes named after their expression', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
function claimSql(table: string, limit = 1) {
  return \`update \${table} set status = 'running' where id = (select id from \${table} where status = 'queued' limit \${limit} for update skip locked)\`;
}
export class Q {
  constructor(private table: string) {}
  a() { return pool.query(claimSql('jobs')); }
  b(id: number) { return pool.query(\`update \${this.table} set status = 'done' where id = $1\`, [id]); }
}`);
  assert.deepEqual(m.sites.map((s) => s.analysis.statements[0].rowWrites[0].table), ['jobs', '${this_table}']);
  // The helper's SQL is reported where it is used.
  assert.equal(m.text.slice(m.sites[0].span.start, m.sites[0].span.end), "claimSql('jobs')");
});

test('Drizzle pgPolicy and enableRLS: the CREATE POLICY and ALTER TABLE drizzle-kit writes, casts at their code', () => {
  const m = model(`import { pgTable, pgPolicy, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
export const jobs = pgTable('jobs', { tenantId: uuid('tenant_id') }, (t) => [
  pgPolicy('by_tenant', { for: 'select', using: sql\`\${t.tenantId} = current_setting('app.tenant_id')::uuid\` }),
]).enableRLS();`);
  const statements = m.sites.flatMap((s) => s.analysis.statements);
  assert.deepEqual(statements.map((s) => s.kind).sort(), ['AlterTableStmt', 'CreatePolicyStmt']);
  const policy = statements.find((s) => s.kind === 'CreatePolicyStmt')!;
  assert.deepEqual(policy.policies.map((p) => [p.name, p.table]), [['by_tenant', 'jobs']]);
  assert.equal(m.text.slice(policy.settingCasts[0].span.start, policy.settingCasts[0].span.end), "current_setting('app.tenant_id')::uuid");
  assert.deepEqual(m.sites.map((s) => s.scope.kind), ['script', 'script']);
});

test('transaction state comes from the parser: ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT keep the transaction open', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
export async function run() {
  const c = await pool.connect();
  await c.query('BEGIN');
  try { await c.query('SAVEPOINT s'); } finally { await c.query('ROLLBACK TO SAVEPOINT s'); }
  await c.query('RELEASE SAVEPOINT s');
  await c.query('select 1');
  c.release();
}`);
  assert.deepEqual(m.sites.map((s) => s.scope.kind), ['autocommit', 'transaction', 'transaction', 'transaction', 'transaction']);
  assert.equal(m.releases[0].openTransaction?.reason, 'no-end');
});

test('nested finally blocks: one walk each (60 levels finish within the test timeout), the release on the error path still seen', { timeout: 20_000 }, () => {
  let nested = 'c.release();';
  for (let i = 0; i < 60; i++) nested = `try { await c.query('select ${i}'); } finally { ${nested} }`;
  const m = model(`import pg from 'pg';\nconst pool = new pg.Pool();\nexport async function f() {\n  const c = await pool.connect();\n  await c.query('BEGIN');\n  ${nested}\n}\n`);
  assert.equal(m.sites.length, 61);
  assert.equal(m.releases.length, 1);
  assert.ok(m.releases[0].openTransaction, 'the release runs with the BEGIN still open');
  // After a finally block only its normal entries go on: a release inside one does not leak the error path's state out of it.
  const after = model(`import pg from 'pg';
const pool = new pg.Pool();
export async function f(work: () => Promise<void>) {
  const c = await pool.connect();
  try { await c.query('BEGIN'); await work(); await c.query('COMMIT'); } catch (e) { await c.query('ROLLBACK'); throw e; } finally { await c.query('select 1'); }
  await c.query('select 2');
  c.release();
}`);
  assert.equal(after.sites.find((s) => after.text.slice(s.span.start, s.span.end) === "'select 2'")!.scope.kind, 'autocommit');
  assert.equal(after.releases[0].openTransaction, undefined);
});
