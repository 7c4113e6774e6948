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
