// A claim in a callback of a project function (inTenant(pool, tenant, async
// (client) => claim)) is a per-tenant worker's claim when every place that
// function runs the callback, on the handle the claim is sent on, set the
// tenant there first; otherwise the tenant policy on the queue hides its jobs.
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const migration = `create table export_jobs (id bigserial primary key, tenant_id text not null, status text not null default 'queued');
alter table export_jobs enable row level security;
create policy export_jobs_tenant on export_jobs using (tenant_id = nullif(current_setting('app.tenant', true), ''));
`;

const claim = "`update export_jobs set status = 'running' where id = (select id from export_jobs where status = 'queued' order by id limit 1 for update skip locked) returning id`";

/** The policy findings of a project made of the migration and these TS modules. */
async function policyFindings(modules: Record<string, string>): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'pgq-tenant-callback-'));
  dirs.push(dir);
  await writeFile(join(dir, 'package.json'), '{ "name": "p", "private": true, "dependencies": { "pg": "^8.13.0" } }');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'schema.sql'), migration);
  for (const [name, text] of Object.entries(modules)) await writeFile(join(dir, 'src', name), text);
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  return results.flatMap((r) => r.messages).filter((m) => m.ruleId?.endsWith('no-tenant-policy-on-queue')).length;
}

const wrapper = (body: string) => `import type { Pool, PoolClient } from 'pg';
export async function inTenant<T>(pool: Pool, tenant: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    ${body}
  } finally {
    client.release();
  }
}
`;
const setsTenant = "await client.query('BEGIN');\n    await client.query(\"select set_config('app.tenant', $1, true)\", [tenant]);\n    const r = await work(client);\n    await client.query('COMMIT');\n    return r;";

const worker = (receiver: string) => `import type { Pool } from 'pg';
import { inTenant } from './scope';
export function claimNext(pool: Pool, tenant: string) {
  return inTenant(pool, tenant, async (client) => (await ${receiver}.query(${claim})).rows[0]);
}
`;

test('the wrapper sets the tenant on the client before it runs the callback, which claims on that client: quiet', async () => {
  assert.equal(await policyFindings({ 'scope.ts': wrapper(setsTenant), 'worker.ts': worker('client') }), 0);
});

test('the wrapper sets a tenant setting the policy does not read (app.org, not app.tenant) before it runs the callback: reported', async () => {
  const setsOther = setsTenant.replace("'app.tenant'", "'app.org'");
  assert.equal(await policyFindings({ 'scope.ts': wrapper(setsOther), 'worker.ts': worker('client') }), 1);
});

test('the callback claims on the pool, not on the client the tenant was set on: reported', async () => {
  assert.equal(await policyFindings({ 'scope.ts': wrapper(setsTenant), 'worker.ts': worker('pool') }), 1);
});

test('the wrapper runs the callback in a transaction that sets no tenant: reported', async () => {
  const body = "await client.query('BEGIN');\n    const r = await work(client);\n    await client.query('COMMIT');\n    return r;";
  assert.equal(await policyFindings({ 'scope.ts': wrapper(body), 'worker.ts': worker('client') }), 1);
});

test('the tenant is set after the callback ran: reported', async () => {
  const body = "await client.query('BEGIN');\n    const r = await work(client);\n    await client.query(\"select set_config('app.tenant', $1, true)\", [tenant]);\n    await client.query('COMMIT');\n    return r;";
  assert.equal(await policyFindings({ 'scope.ts': wrapper(body), 'worker.ts': worker('client') }), 1);
});

test('one of the two places the wrapper runs the callback sets no tenant: reported', async () => {
  const body = `if (tenant === '') return work(client);\n    ${setsTenant}`;
  assert.equal(await policyFindings({ 'scope.ts': wrapper(body), 'worker.ts': worker('client') }), 1);
});

test('a wrapper declared as an arrow function in the same module: quiet', async () => {
  const text = `import type { Pool, PoolClient } from 'pg';
const inTenant = async (pool: Pool, tenant: string, work: (client: PoolClient) => Promise<unknown>) => {
  const client = await pool.connect();
  try {
    ${setsTenant}
  } finally {
    client.release();
  }
};
export function claimNext(pool: Pool, tenant: string) {
  return inTenant(pool, tenant, async (client) => (await client.query(${claim})).rows[0]);
}
`;
  assert.equal(await policyFindings({ 'worker.ts': text }), 0);
});

test("postgres.js: the wrapper sets the tenant in sql.begin's transaction and runs the callback there: quiet; on the outer sql: reported", async () => {
  const scope = (handle: string) => `import postgres from 'postgres';
export const sql = postgres();
export function inTenant<T>(tenant: string, work: (tx: any) => Promise<T>) {
  return sql.begin(async (tx) => {
    await tx\`select set_config('app.tenant', \${tenant}, true)\`;
    return work(${handle});
  });
}
`;
  const worker = `import type { TransactionSql } from 'postgres';
import { inTenant } from './scope';
export const claimNext = (tenant: string) => inTenant(tenant, (tx: TransactionSql) => tx.unsafe(${claim}));
`;
  assert.equal(await policyFindings({ 'scope.ts': scope('tx'), 'worker.ts': worker }), 0);
  assert.equal(await policyFindings({ 'scope.ts': scope('sql'), 'worker.ts': worker }), 1);
});
