// The project modules a file imports are parsed once per process, whatever
// the import depth they are read at (a service is read at depth 3 from a job
// and at depth 2 from a handler's controller), and a file the scan reaches
// after a file that imports it is analysed on that parse. What the chain says
// is the same as when each depth parsed its own copy: the pool made four
// modules away still makes the handler's set_config a session-level write.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { moduleParses } from '../../src/languages/typescript/flow/modules.ts';
import { scan } from '../../src/scan/scan.ts';

function project(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'pgq-module-parses-')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const files = {
  'package.json': '{ "name": "shop", "type": "module" }',
  'src/db/pool.ts': "import pg from 'pg';\nexport const pool = new pg.Pool({ max: 4 });\n",
  'src/db/index.ts': "export { pool } from './pool.js';\n",
  'src/services/orders.ts':
    "import { pool } from '../db/index.js';\nexport { pool };\nexport async function loadOrder(id: number) {\n  const client = await pool.connect();\n  try {\n    return await client.query('select id from orders where id = $1', [id]);\n  } finally {\n    client.release();\n  }\n}\n",
  'src/controllers/orders.ts': "import { loadOrder, pool } from '../services/orders.js';\nexport { pool };\nexport const show = (id: number) => loadOrder(id);\n",
  'src/handlers/a.ts':
    "import { pool } from '../controllers/orders.js';\nexport async function handle(tenant: string) {\n  await pool.query(\"select set_config('app.tenant', $1, false)\", [tenant]);\n}\n",
  'src/jobs/sweep.ts':
    "import { pool } from '../services/orders.js';\nexport async function sweep() {\n  const client = await pool.connect();\n  try {\n    await client.query('delete from sessions where expires_at < now()');\n  } finally {\n    client.release();\n  }\n}\n",
};

test('each imported module is parsed once across import depths, and a file imported before the scan reaches it is not parsed again', async () => {
  const dir = project(files);
  const before = { ...moduleParses };
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  // controllers/orders, services/orders, db/index, db/pool: once each (by depth they were six reads).
  assert.equal(moduleParses.count - before.count, 4);
  // services/orders is analysed (it passes the prefilter) after handlers/a.ts imported it through the controller.
  assert.equal(moduleParses.reused - before.reused, 1);
  const findings = result.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line} ${m.ruleId}`));
  assert.deepEqual(findings, ['src/handlers/a.ts:3 no-session-tenant-setting']);
});

// pool.ts reads no project module (free from depth 0), repo.ts only pool.ts (from depth 1),
// service.ts only repo.ts (from depth 2): the job reads service at depth 3, repo at 2, pool at 1,
// and the scan then reaches each of them at the top (depth 4), where that reading is the same.
const checkout = (name: string) => `export async function ${name}() {\n  const client = await pool.connect();\n  try {\n    await client.query('select 1');\n  } finally {\n    client.release();\n  }\n}\n`;
const layered = {
  'package.json': '{ "name": "shop", "type": "module" }',
  'src/a-job.ts': `import { settle, pool } from './service.js';\nexport async function run(tenant: string) {\n  await settle(tenant);\n}\n${checkout('ping')}`,
  'src/db/pool.ts': `import pg from 'pg';\nexport const pool = new pg.Pool({ max: 4 });\n${checkout('warm')}`,
  'src/repo.ts': `import { pool } from './db/pool.js';\nexport async function markPaid(tenant: string) {\n  await pool.query("select set_config('app.tenant', $1, false)", [tenant]);\n  await pool.query('update invoices set paid = true');\n}\n`,
  'src/service.ts': `import { markPaid } from './repo.js';\nimport { pool } from './db/pool.js';\nexport { pool };\nexport async function settle(tenant: string) {\n  await markPaid(tenant);\n}\n${checkout('check')}`,
};

test('a module whose imports all end within the depth left is walked once for every depth it is read at', async () => {
  const dir = project(layered);
  const before = { ...moduleParses };
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  // pool, repo and service: each parsed once as an import, and that reading is the file's own model at the
  // top; service reads pool at depth 2 on the reading the job made at depth 1 through repo.
  assert.equal(moduleParses.count - before.count, 3);
  assert.equal(moduleParses.reused - before.reused, 3);
  assert.equal(moduleParses.shared - before.shared, 4);
  const findings = result.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line} ${m.ruleId}`));
  // What each file says read on its own (a scan of it alone has no reading to share).
  const alone: string[] = [];
  for (const file of ['src/a-job.ts', 'src/db/pool.ts', 'src/repo.ts', 'src/service.ts']) {
    const single = await scan({ paths: [join(project(layered), file)], cwd: dir, concurrency: 'off' });
    alone.push(...single.results.flatMap((r) => r.messages.map((m) => `${file}:${m.line} ${m.ruleId}`)));
  }
  assert.deepEqual(findings, alone);
  assert.ok(findings.includes('src/repo.ts:3 no-session-tenant-setting'), findings.join('\n'));
});

// A job whose pool comes through b-repo.ts from a-pool.ts.
const importedLater = {
  'package.json': '{ "name": "shop", "type": "module" }',
  'src/a-pool.ts': `import pg from 'pg';\nexport const pool = new pg.Pool({ max: 4 });\n${checkout('warm')}`,
  'src/b-repo.ts': `import { pool } from './a-pool.js';\nexport { pool };\nexport async function markPaid(tenant: string) {\n  await pool.query('update invoices set paid = true where tenant = $1', [tenant]);\n}\n`,
  'src/c-job.ts': `import { markPaid, pool } from './b-repo.js';\nexport async function run(tenant: string) {\n  await pool.query("select set_config('app.tenant', $1, false)", [tenant]);\n  await markPaid(tenant);\n}\n`,
};

test('what a scan memoised of the files (their stats, where imports lead) is gone with it: the next scan reads a rewritten module again', async () => {
  const dir = project(importedLater);
  const first = await scan({ paths: [join(dir, 'src/c-job.ts')], cwd: dir, concurrency: 'off' });
  assert.equal(first.results[0].messages.filter((m) => m.ruleId === 'no-session-tenant-setting').length, 1);
  // The same size and a new module: the pool now comes from a file that did not exist before.
  writeFileSync(join(dir, 'src/b-repo.ts'), importedLater['src/b-repo.ts'].replace("'./a-pool.js'", "'./d-pool.js'"));
  writeFileSync(join(dir, 'src/d-pool.ts'), "import pg from 'pg';\n// One connection, its own: nothing else runs on it after the job.\nexport const pool = new pg.Client();\n");
  const second = await scan({ paths: [join(dir, 'src/c-job.ts')], cwd: dir, concurrency: 'off' });
  assert.deepEqual(second.results[0].messages.filter((m) => m.ruleId === 'no-session-tenant-setting'), []);
});

// The repository is scanned before the service that imports it (`r` < `s`): its own reading is kept for
// the service, which reads what findOrder returns (a name: a walk's answer) on it. The handler is
// scanned before the service too, but its export returns an object (read from its syntax alone by an
// importer): it is not kept, and the service's import of it parses it again.
const repositoryFirst = {
  'package.json': '{ "name": "shop", "type": "module" }',
  'src/db.ts': "import pg from 'pg';\nexport const pool = new pg.Pool({ max: 4 });\n",
  'src/handler.ts': `import { pool } from './db.js';\nexport async function handle(tenant: string) {\n  await pool.query("select set_config('app.tenant', $1, false)", [tenant]);\n  return { status: 200 };\n}\n`,
  'src/repository.ts': `import { pool } from './db.js';\nexport async function findOrder(id: number) {\n  const { rows } = await pool.query('update orders set seen = true where id = $1 returning id', [id]);\n  return rows[0];\n}\n`,
  'src/service.ts': `import { findOrder } from './repository.js';\nimport { handle } from './handler.js';\nimport { pool } from './db.js';\nexport async function show(tenant: string, id: number) {\n  await pool.query("select set_config('app.tenant', $1, false)", [tenant]);\n  await handle(tenant);\n  return findOrder(id);\n}\n`,
};

test('a scanned file a later file imports is read there on its own reading, unless its exports answer from their syntax', async () => {
  const dir = project(repositoryFirst);
  const before = { ...moduleParses };
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  // Two parses as imports, db.ts and handler.ts (again, for the service): repository.ts is not parsed again.
  assert.equal(moduleParses.count - before.count, 2);
  const findings = result.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line} ${m.ruleId}`));
  const alone: string[] = [];
  for (const file of ['src/db.ts', 'src/handler.ts', 'src/repository.ts', 'src/service.ts']) {
    const single = await scan({ paths: [join(project(repositoryFirst), file)], cwd: dir, concurrency: 'off' });
    alone.push(...single.results.flatMap((r) => r.messages.map((m) => `${file}:${m.line} ${m.ruleId}`)));
  }
  assert.deepEqual(findings, alone);
  assert.ok(findings.includes('src/service.ts:5 no-session-tenant-setting'), findings.join('\n'));
});
