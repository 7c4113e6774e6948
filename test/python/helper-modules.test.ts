// Functions of another module of the project handed the caller's connection
// (`claim(conn)` with `from app.queue import claim`), walked at the call: the
// SQL they run there in a transaction is the caller's only as run there
// (FileModel.calledSites, at the call, as the TS front end records it), so the
// lease and claim rules read it once, in its module, and the rules that join
// one transaction still see it; so is SQL whose state the call does not know
// either (a session the caller was handed). In autocommit, and a function
// walked only for the thread's transaction (Django's atomic block, handed no
// connection), the module's own walk knows neither state: at the call, in sites.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import type { FileModel } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-helpers-'));
  for (const [name, text] of Object.entries({ 'pyproject.toml': '[project]\nname = "w"\n', 'app/__init__.py': '', ...files })) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  return root;
}

const QUEUE = [
  'def claim(conn):',
  '    with conn.cursor() as cur:',
  '        cur.execute("UPDATE jobs SET status = \'running\', locked_until = now() + interval \'5 minutes\' WHERE id = (SELECT id FROM jobs WHERE status = \'queued\' OR (status = \'running\' AND locked_until < now()) ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id")',
  '        return cur.fetchone()',
  '',
  'def as_tenant(conn, tenant):',
  '    conn.execute("SELECT set_config(\'app.tenant\', %s, true)", (tenant,))',
  '',
].join('\n');

function worker(root: string, body: string[]): FileModel {
  const file = join(root, 'app/worker.py');
  const text = ['import psycopg', 'from app.queue import claim, as_tenant', '', 'def run(dsn, tenant):', ...body.map((l) => `    ${l}`), ''].join('\n');
  writeFileSync(file, text);
  return pythonFrontEnd.parse(text, file, {});
}

const lineOf = (model: FileModel, offset: number) => model.text.slice(0, offset).split('\n').length;

test('a claim helper run in the caller transaction is a called site at the call, not one of the file', () => {
  const root = project({ 'app/queue.py': QUEUE });
  const model = worker(root, ['with psycopg.connect(dsn) as conn:', '    with conn.transaction():', '        job = claim(conn)']);
  assert.deepEqual(model.sites, []);
  const [site] = model.calledSites ?? [];
  assert.ok(site, 'the helper claim is recorded as run at the call');
  assert.equal(site.scope.kind, 'transaction');
  assert.equal(model.text.slice(site.calledAt!.start, site.calledAt!.end), 'claim(conn)');
  assert.equal(lineOf(model, site.span.start), 7);
});

test('a helper run on a connection outside a transaction stays a site of the caller: its state is known only there', () => {
  const root = project({ 'app/queue.py': QUEUE });
  const model = worker(root, ['with psycopg.connect(dsn, autocommit=True) as conn:', '    as_tenant(conn, tenant)']);
  assert.deepEqual(model.calledSites ?? [], []);
  assert.deepEqual(
    model.sites.map((s) => [s.scope.kind, s.calledAt]),
    [['autocommit', undefined]],
  );
});

test('scanned as a project: each lease finding once, in the helper module; the joined-transaction rules at the call', async () => {
  const root = project({
    'app/queue.py': QUEUE + ['def mark_sent(conn, hook_id):', '    conn.execute("UPDATE hooks SET status = \'sent\' WHERE id = %s", (hook_id,))', '', 'def lock_next(conn):', '    return conn.execute("SELECT id, url FROM hooks WHERE status = \'queued\' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1").fetchone()', ''].join('\n'),
  });
  const text = [
    'import psycopg',
    'import requests',
    'from app.queue import claim, lock_next, mark_sent',
    '',
    'def run(dsn):',
    '    with psycopg.connect(dsn) as conn:',
    '        with conn.transaction():',
    '            job = claim(conn)',
    '        with conn.transaction():',
    '            hook = lock_next(conn)',
    '            requests.post(hook[1], timeout=5)',
    '            mark_sent(conn, hook[0])',
    '',
  ].join('\n');
  writeFileSync(join(root, 'app/worker.py'), text);
  const result = await scan({ paths: [root], cwd: root, concurrency: 'off' });
  const found = result.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId?.replace(/^pgq\//, '')}`)).sort();
  assert.deepEqual(found, [
    'app/queue.py:3 require-claim-attempt-limit',
    'app/queue.py:3 require-claim-attempt-limit',
    'app/queue.py:3 require-lease-heartbeat',
    'app/worker.py:10 no-attempts-in-rollback-scope',
    'app/worker.py:11 no-side-effects-in-locking-transaction',
  ]);
});

test('a session write helper handed a session the caller was handed: reported once, in the helper module', async () => {
  const root = project({
    'app/tenancy.py': ['from sqlalchemy import text', '', 'async def use_schema(session, schema):', '    await session.execute(text(f\'SET search_path TO "{schema}"\'))', ''].join('\n'),
    'app/deps.py': ['from sqlalchemy.ext.asyncio import AsyncSession', 'from app.tenancy import use_schema', '', 'async def tenant_db(db: AsyncSession, tenant_id: int):', '    await use_schema(db, f"tenant_{tenant_id}")', '    return db', ''].join('\n'),
  });
  const result = await scan({ paths: [root], cwd: root, concurrency: 'off' });
  const found = result.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId?.replace(/^pgq\//, '')}`));
  assert.deepEqual(found, ['app/tenancy.py:4 no-session-tenant-setting']);
});
