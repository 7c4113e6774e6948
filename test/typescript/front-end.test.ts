// The TS/JS front end on its own: where SQL is found, which transaction and
// connection each site gets, how offsets map back through escapes and
// templates, and that a file that does not parse is one fatal message.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const model = (code: string, file = 'job.ts'): FileModel => typescriptFrontEnd.parse(code, file, {});
/** Each site as "<first statement kind> <scope kind> <connection kind>". */
const sites = (m: FileModel) => m.sites.map((s) => `${s.analysis.statements[0].kind} ${s.scope.kind} ${s.connection.kind}`);

test('a syntax error is one fatal diagnostic, and the scan goes on with the other files', async () => {
  const m = model('const x = ;\n');
  assert.match(m.fatal!.message, /^Parsing error: (Expression expected|Unexpected token)/);
  const dir = mkdtempSync(join(tmpdir(), 'pgq-ts-'));
  // (It holds a trigger: a file without any is not parsed at all.)
  writeFileSync(join(dir, 'broken.ts'), "await pool.query(\"SET app.tenant = '1'\");\nexport function (\n");
  writeFileSync(join(dir, 'worker.ts'), "import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query(\"SET app.tenant = '1'\");\n");
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  const [broken, worker] = results;
  assert.equal(broken.messages.length, 1);
  assert.equal(broken.messages[0].fatal, true);
  assert.deepEqual(worker.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
});

test('JSX parses in .tsx and .jsx (and .js); TS-only syntax in .ts', () => {
  assert.equal(model('const a = <div>{x}</div>;', 'a.tsx').fatal, undefined);
  assert.equal(model('const a = <div>{x}</div>;', 'a.jsx').fatal, undefined);
  assert.equal(model('const a = <T,>(x: T) => x;', 'a.ts').fatal, undefined);
});

test('string escapes and CRLF templates map statement spans to the raw source', () => {
  const code = "import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query('select 1;\\n\\tSET app.tenant = \\'\\u0031\\'');\nawait pool.query(`select 2;\r\n  SET app.x = ${v}`);\n";
  const m = model(code);
  const writes = m.sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.settingWrites));
  assert.deepEqual(writes.map((w) => code.slice(w.span.start, w.span.end)), ["SET app.tenant = \\'\\u0031\\'", 'SET app.x = ${v}']);
});

test('node-postgres: BEGIN..COMMIT in try/catch/finally, and pool calls', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
export async function run() {
  await pool.query('select 1');
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('select 2');
    await c.query('COMMIT');
    await c.query('select 3');
  } catch (e) {
    await c.query('ROLLBACK');
  } finally {
    c.release();
  }
}`);
  assert.deepEqual(sites(m), [
    'SelectStmt autocommit pool',
    'TransactionStmt autocommit pooled-client',
    'SelectStmt transaction pooled-client',
    'TransactionStmt transaction pooled-client',
    'SelectStmt autocommit pooled-client',
    'TransactionStmt unknown pooled-client',
  ]);
});

test('transaction callbacks of every listed driver put their sites in one transaction', () => {
  const cases: [string, string][] = [
    ['postgres.js sql.begin', "import postgres from 'postgres';\nconst sql = postgres();\nawait sql.begin('read write', async (tx) => { await tx`select 1`; await sql`select 2`; });"],
    ['Kysely db.transaction().execute', "import { Kysely, sql } from 'kysely';\nconst db = new Kysely<any>({} as any);\nawait db.transaction().execute(async (trx) => { await sql`select 1`.execute(trx); await sql`select 2`.execute(db); });"],
    ['Knex knex.transaction', "import knex from 'knex';\nconst db = knex({});\nawait db.transaction(async (trx) => { await trx.raw('select ?', [1]); await db.raw('select 2'); });"],
    ['Drizzle db.transaction', "import { sql } from 'drizzle-orm';\nimport { drizzle } from 'drizzle-orm/node-postgres';\nconst db = drizzle('');\nawait db.transaction(async (tx) => { await tx.execute(sql`select 1`); await db.execute(sql`select 2`); });"],
    ['Slonik pool.transaction', "import { createPool, sql } from 'slonik';\nconst pool = await createPool('');\nawait pool.transaction(async (tx) => { await tx.query(sql.type(z)`select 1`); await pool.query(sql.unsafe`select 2`); });"],
    ['pg-promise db.tx', "import pgPromise from 'pg-promise';\nconst pgp = pgPromise();\nconst db = pgp('');\nawait db.tx('job', async (t) => { await t.one('select $1', [1]); await db.none('select 2'); });"],
    ['TypeORM dataSource.transaction', "import { DataSource } from 'typeorm';\nconst ds = new DataSource({} as any);\nawait ds.transaction(async (m) => { await m.query('select 1'); await ds.query('select 2'); });"],
    ['Prisma $transaction', "import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nawait prisma.$transaction(async (tx) => { await tx.$queryRaw`select 1`; await prisma.$executeRawUnsafe('select 2'); });"],
  ];
  for (const [name, code] of cases) {
    assert.deepEqual(sites(model(code)), ['SelectStmt transaction pooled-client', 'SelectStmt autocommit pool'], name);
  }
});

test('TypeORM queryRunner.startTransaction() .. commitTransaction() is followed like BEGIN..COMMIT', () => {
  const m = model("import { DataSource } from 'typeorm';\nconst ds = new DataSource({} as any);\nconst qr = ds.createQueryRunner();\nawait qr.query('select 1');\nawait qr.startTransaction();\nawait qr.query('select 2');\nawait qr.commitTransaction();\nawait qr.query('select 3');");
  assert.deepEqual(sites(m), ['SelectStmt autocommit pooled-client', 'SelectStmt transaction pooled-client', 'SelectStmt autocommit pooled-client']);
});

test('connection configs: named pg queries, postgres.js prepare, and a query config by name', () => {
  const m = model(`import pg from 'pg';
import postgres from 'postgres';
const pool = new pg.Pool();
const q = { name: 'cnt', text: 'select count(*) from invoices' };
const sql = postgres({ prepare: false });
const other = postgres('');
await pool.query(q);`);
  assert.deepEqual(m.connections.map((c) => `${c.driver} ${c.preparedStatements}`), ['pg yes', 'postgres.js no', 'postgres.js yes']);
  assert.equal(m.sites[0].preparedName, 'cnt');
  assert.deepEqual(m.connections[2].driverClearsCache, ['DISCARD ALL', 'DEALLOCATE ALL']);
});

test('what is not SQL or cannot be resolved gives no site and no error', () => {
  const m = model("const r = router.query('id');\nconst t = await db.query(makeSql());\nconst s = `hello ${name}`;\nelement.query('.x');");
  assert.deepEqual(m.sites, []);
  assert.deepEqual(m.sqlErrors, []);
});

test('the one-transaction job: claim, work, finish; not a lease claim without work', () => {
  const job = model(`import pg from 'pg';
const pool = new pg.Pool();
declare function work(): Promise<void>;
const c = await pool.connect();
await c.query('BEGIN');
await c.query("select id from jobs for update skip locked limit 1");
await work();
await c.query("update jobs set status = 'done' where id = $1", [1]);
await c.query('COMMIT');`);
  assert.equal(job.jobTransactions.length, 1);
  const lease = model(`import pg from 'pg';
const pool = new pg.Pool();
const c = await pool.connect();
await c.query('BEGIN');
await c.query("select id from jobs for update skip locked limit 1");
console.log('claimed');
await c.query("update jobs set status = 'running', attempts = attempts + 1 where id = $1", [1]);
await c.query('COMMIT');`);
  assert.equal(lease.jobTransactions.length, 0);
});

test('a function of the file handed a checked-out client is walked at the call: its BEGIN places what follows, its sites are not recorded twice', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
async function beginReadOnly(c: pg.PoolClient) { await c.query('BEGIN TRANSACTION READ ONLY'); }
const client = await pool.connect();
await beginReadOnly(client);
await client.query("select set_config('app.tenant', $1, true)", ['1']);
await client.query('COMMIT');
await client.query('select 1');
client.release();`);
  assert.deepEqual(sites(m), ['TransactionStmt unknown pooled-client', 'SelectStmt transaction pooled-client', 'TransactionStmt transaction pooled-client', 'SelectStmt autocommit pooled-client']);
});

test('a flag kept beside the client follows its transaction: the branch on it goes on only with the states it can be taken in', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
const client = await pool.connect();
let open = false;
if (Math.random() > 0.5) { await client.query('BEGIN'); open = true; }
if (open) await client.query('select 1');
if (!open) await client.query('select 2');`);
  assert.deepEqual(sites(m), ['TransactionStmt autocommit pooled-client', 'SelectStmt transaction pooled-client', 'SelectStmt autocommit pooled-client']);
});

test('a flag a callback sets may hold either value after it', () => {
  const m = model(`import pg from 'pg';
const pool = new pg.Pool();
const client = await pool.connect();
let failed = false;
await Promise.all([1, 2].map(async () => { try { await work(); } catch { failed = true; } }));
if (failed) await client.query('select 1');`);
  assert.deepEqual(sites(m), ['SelectStmt autocommit pooled-client']);
});
