// Bindings decide what a receiver is, not its name: project modules read for
// what they export (relative, tsconfig paths, package.json imports, CommonJS,
// re-exports), function returns, type annotations; unknown stays unknown. The
// model records the files it read, and the CLI cache keys on them.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { resolveProjectModule } from '../../src/languages/typescript/flow/modules.ts';
import type { FileModel } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-bindings-'));
  writeFileSync(join(dir, 'package.json'), '{}');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const modelOf = (dir: string, file: string): FileModel => {
  const path = join(dir, file);
  return typescriptFrontEnd.parse(readFileSync(path, 'utf8'), path, {});
};

/** Each site as "<scope> <connection> <config's file>". */
const placed = (m: FileModel) =>
  m.sites.map((s) => {
    const config = m.connections.find((c) => c.id === s.connection.configId);
    return `${s.scope.kind} ${s.connection.kind} ${config?.definedIn?.split('/').pop() ?? (config ? 'here' : '-')}`;
  });

const POOL = "import pg from 'pg';\nexport const primaryPool = new pg.Pool();\nexport default primaryPool;\nexport function getPool() { return primaryPool; }\nexport const getClient = () => primaryPool.connect();\n";

test('a pool exported by another module: named, default, namespace, re-exported, through a function', () => {
  const dir = project({
    'src/db/pool.ts': POOL,
    'src/db/index.ts': "export { primaryPool as pool } from './pool';\nexport * from './pool';\n",
    'src/worker.ts': `import { primaryPool } from './db/pool';
import db from './db/pool.js';
import * as dbs from './db';
import { pool, getPool, getClient } from './db/index';
await primaryPool.query('select 1');
await db.query('select 2');
await dbs.pool.query('select 3');
await pool.query('select 4');
await getPool().query('select 5');
const c = await getClient();
await c.query('BEGIN');
await c.query('select 6');
c.release();`,
  });
  const m = modelOf(dir, 'src/worker.ts');
  assert.deepEqual(placed(m), [
    'autocommit pool pool.ts',
    'autocommit pool pool.ts',
    'autocommit pool pool.ts',
    'autocommit pool pool.ts',
    'autocommit pool pool.ts',
    'autocommit pooled-client pool.ts',
    'transaction pooled-client pool.ts',
  ]);
  // The config enters this file at the import: its span is here, and it says where it is made.
  const config = m.connections[0];
  assert.equal(config.definedIn, join(dir, 'src/db/pool.ts'));
  assert.ok(config.span.end <= m.text.length);
  assert.equal(m.releases[0].openTransaction?.reason, 'no-end');
  assert.deepEqual(m.dependencies, [join(dir, 'src/db/index.ts'), join(dir, 'src/db/pool.ts')]);
});

test('Drizzle, Kysely and Prisma made over an imported pool run on its config', () => {
  const dir = project({
    'db/pool.ts': POOL,
    'db/orm.ts': `import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { primaryPool } from './pool';
export const db = drizzle(primaryPool);
export const k = new Kysely<any>({ dialect: new PostgresDialect({ pool: primaryPool }) });
export const prisma = new PrismaClient({ adapter: new PrismaPg(primaryPool) });`,
    'app.ts': `import { sql } from 'drizzle-orm';
import { sql as ksql } from 'kysely';
import { db, k, prisma } from './db/orm';
await db.execute(sql\`select 1\`);
await ksql\`select 2\`.execute(k);
await prisma.$executeRaw\`select 3\`;`,
  });
  const m = modelOf(dir, 'app.ts');
  assert.deepEqual(placed(m), ['autocommit pool pool.ts', 'autocommit pool pool.ts', 'autocommit pool pool.ts']);
  assert.deepEqual(m.sites.map((s) => s.driver), ['drizzle', 'kysely', 'prisma']);
  assert.equal(new Set(m.sites.map((s) => s.connection.configId)).size, 1);
});

test('tsconfig paths, baseUrl, package.json imports and CommonJS modules resolve; packages and files outside the unit do not', () => {
  const dir = project({
    'tsconfig.json': '{ // comments and trailing commas, as tsconfig allows\n "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["./src/*"], }, }, }',
    'src/lib/db.ts': "import { Pool } from 'pg';\nexport default new Pool();\n",
    'src/cjs.js': "const { Pool } = require('pg');\nmodule.exports = { pool: new Pool() };\n",
    'src/whole.cjs': "const pg = require('pg');\nmodule.exports = new pg.Pool();\n",
    'src/app.ts': "import pool from '@/lib/db';\nimport other from 'src/lib/db';\nimport hashed from '#db';\nconst { pool: cjs } = require('./cjs');\nconst whole = require('./whole.cjs');\nawait pool.query('select 1');\nawait other.query('select 2');\nawait hashed.query('select 3');\nawait cjs.query('select 4');\nawait whole.query('select 5');\n",
  });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ imports: { '#db': './src/lib/db.ts' } }));
  const m = modelOf(dir, 'src/app.ts');
  assert.deepEqual(m.sites.map((s) => s.connection.kind), ['pool', 'pool', 'pool', 'pool', 'pool']);
  assert.equal(resolveProjectModule(join(dir, 'src/app.ts'), 'pg'), undefined);
  // A file above the unit's root (its package.json) is another project: not read.
  const outer = mkdtempSync(join(tmpdir(), 'pgq-outer-'));
  writeFileSync(join(outer, 'db.ts'), POOL);
  mkdirSync(join(outer, 'app'));
  writeFileSync(join(outer, 'app/package.json'), '{}');
  assert.equal(resolveProjectModule(join(outer, 'app/x.ts'), '../db'), undefined);
});

test('CommonJS module.exports = NAME where NAME is a const object of the module (or it frozen) exports its members: a pool, and SQL text', () => {
  const dir = project({
    'src/db.js': "const { Pool } = require('pg');\nconst db = { pool: new Pool() };\nmodule.exports = db;\n",
    'src/queries.js': "const queries = {\n  claim: 'select 1',\n};\nmodule.exports = Object.freeze(queries);\n",
    'src/short.js': "const finish = 'select 2';\nmodule.exports = { finish };\n",
    'src/app.js': "const { pool } = require('./db');\nconst q = require('./queries');\nconst { claim } = require('./queries');\nconst s = require('./short');\nasync function run() {\n  await pool.query(q.claim);\n  await pool.query(claim);\n  await pool.query(s.finish);\n}\n",
  });
  const m = modelOf(dir, 'src/app.js');
  assert.deepEqual(placed(m), ['autocommit pool db.js', 'autocommit pool db.js', 'autocommit pool db.js']);
  assert.deepEqual(m.sites.map((s) => s.analysis.statements[0]?.kind), ['SelectStmt', 'SelectStmt', 'SelectStmt'], 'the text of each statement is read where it is kept');
});

test('unknown bindings stay unknown whatever the name: an untyped parameter, a package we do not read, a module that does not parse', () => {
  const dir = project({
    'broken.ts': 'export const pool = ;',
    'job.ts': `import { pool as fromBroken } from './broken';
import { pool as fromPackage } from 'some-db-wrapper';
export async function run(pool, db) {
  await pool.query("select set_config('app.tenant', $1, true)", [1]);
  await db.query("select set_config('app.tenant', $1, true)", [1]);
  await fromBroken.query('select 1');
  await fromPackage.query('select 2');
}`,
  });
  const m = modelOf(dir, 'job.ts');
  assert.deepEqual(m.sites.map((s) => `${s.scope.kind} ${s.connection.kind}`), ['unknown unknown', 'unknown unknown', 'unknown unknown', 'unknown unknown']);
  // The module that did not parse is still a dependency: when it changes, the model may.
  assert.deepEqual(m.dependencies, [join(dir, 'broken.ts')]);
});

test('type annotations bind: driver types, unions with undefined, typeof, and type aliases exported by the db module', () => {
  const dir = project({
    'db.ts': `import pg from 'pg';
import type { Knex } from 'knex';
export const pool = new pg.Pool();
export type Db = typeof pool;
export type Trx = Knex.Transaction;`,
    'job.ts': `import type pg from 'pg';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { sql } from 'drizzle-orm';
export async function a(p: pg.Pool | undefined) { await p!.query('select 1'); }
export async function b(d: NodePgDatabase<any>) { await d.execute(sql\`select 2\`); }
let lazy: pg.Pool | null = null;
export async function c() { await lazy!.query('select 3'); }
import type { Db, Trx } from './db';
export async function d(x: Db) { await x.query('select 4'); }
export async function e(t: Trx) { await t.raw('select 5'); }`,
  });
  const m = modelOf(dir, 'job.ts');
  assert.deepEqual(m.sites.map((s) => `${s.scope.kind} ${s.connection.kind}`), ['autocommit pool', 'autocommit pool', 'autocommit pool', 'autocommit pool', 'transaction pooled-client']);
});

test('the CLI cache keys a file on the modules it read: a changed pool module is read again', async () => {
  const dir = project({
    'db.ts': "import pg from 'pg';\nexport const pool = new pg.Pool();\n",
    'job.ts': "import { pool } from './db';\nawait pool.query(\"select set_config('app.tenant', $1, false)\", [1]);\n",
  });
  const options = { paths: [join(dir, 'job.ts')], cwd: dir, cache: true, concurrency: 'off' as const };
  const first = await scan(options);
  assert.deepEqual(first.results[0].messages.map((m) => m.messageId), ['onPool']);
  // The db module now exports a client the code opened itself, not a pool.
  writeFileSync(join(dir, 'db.ts'), "import pg from 'pg';\nexport const pool = new pg.Client();\nawait pool.connect();\n// a longer file\n");
  const second = await scan(options);
  assert.equal(second.stats.cached, 0);
  assert.deepEqual(second.results[0].messages.map((m) => m.messageId), []);
  const third = await scan(options);
  assert.equal(third.stats.cached, 1);
  assert.deepEqual(third.results[0].messages, second.results[0].messages);
});

test('identical code gives identical findings whatever the pool is called (pool.query vs db.query)', async () => {
  const code = (name: string) => `import pg from 'pg';\nconst ${name} = new pg.Pool();\nexport async function enter(t: string) {\n  await ${name}.query("select set_config('app.tenant', $1, true)", [t]);\n}\n`;
  const dir = project({ 'a.ts': code('pool'), 'b.ts': code('db'), 'c.ts': code('primaryPool') });
  const { results } = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  const ids = results.map((r) => r.messages.map((m) => `${m.line} ${m.ruleId} ${m.messageId}`).join(', '));
  assert.equal(new Set(ids).size, 1, ids.join('\n'));
  // One finding: the local write does nothing on the pool; it leaks nothing, so no-session-tenant-setting is quiet.
  assert.deepEqual(results[0].messages.map((m) => m.ruleId), ['no-local-setting-outside-transaction']);
});
