// Django 3.2.25 + psycopg2 on PostgreSQL 17.10, run on the fixture projects
// through their own middleware and view with Django's request signals: with
// CONN_MAX_AGE = 600 the connection outlives the request and the next
// request, setting no tenant, reads tenant 1's 20,000 rows on the same
// backend; with CONN_MAX_AGE = 0 (the default) request_finished closes it
// and the next request starts on a new backend with no tenant. Without a
// request cycle (a management command's loop) nothing closes it, whatever
// CONN_MAX_AGE says. Rule: no-session-tenant-setting (reuse of Django's connection).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof, type ProofOutput } from './python/run-python.ts';

type Seen = { tenant: string | null; invoices: number; backend: number };
let db: TestDatabase;
const out: Record<string, ProofOutput<Seen[]>> = {};

before(async () => {
  db = await startTestDatabase();
  for (const name of ['persistent', 'per-request', 'command']) out[name] = await runProof<Seen[]>(name, db.workerUrl, 'django');
});
after(async () => {
  await db?.stop();
});

test('CONN_MAX_AGE = 600: the next request runs on the same connection as tenant 1', { timeout: 180_000 }, () => {
  assert.equal(out.persistent.django, '3.2.25');
  const [first, second] = out.persistent.result;
  assert.deepEqual([first.tenant, first.invoices], ['1', 20000]);
  assert.deepEqual([second.tenant, second.invoices], ['1', 20000], 'the second request set no tenant');
  assert.equal(second.backend, first.backend);
});

test('CONN_MAX_AGE = 0: request_finished closes the connection, the next request sees no tenant', { timeout: 180_000 }, () => {
  const [first, second] = out['per-request'].result;
  assert.deepEqual([first.tenant, first.invoices], ['1', 20000]);
  assert.deepEqual([second.tenant, second.invoices], [null, 0]);
  assert.notEqual(second.backend, first.backend);
});

test('outside a request cycle the connection is kept whatever CONN_MAX_AGE says', { timeout: 180_000 }, () => {
  const [first, second] = out.command.result;
  assert.deepEqual([second.tenant, second.invoices], ['1', 20000]);
  assert.equal(second.backend, first.backend);
});
