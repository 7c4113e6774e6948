// What a scan served from the cache loads: nothing is hashed (the cache's keys are compared as
// text), so node:crypto is not loaded. (node:v8 is: the CLI makes its V8 settings before its code is
// compiled, src/cli/launch.ts.) Counted by the Node modules each run of the built CLI loaded, never
// timed.
import assert from 'node:assert/strict';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { BAD_SESSION_SQL, project } from '../cli/project.ts';

test('a scan served from the cache loads no node:crypto; the first one, which hashes, does', { timeout: 120_000 }, () => {
  const dir = project({ 'db/migrations/001_jobs.sql': BAD_SESSION_SQL, 'db/migrations/002_more.sql': 'create table notes (id int, body text);\n' });
  // Written a while ago: a stat as young as the scan is not trusted (cache.ts's statKey), and the file is read and hashed.
  const past = new Date(Date.now() - 60_000);
  for (const file of ['db/migrations/001_jobs.sql', 'db/migrations/002_more.sql']) utimesSync(join(dir, file), past, past);
  const preload = join(dir, 'modules.cjs');
  writeFileSync(
    preload,
    "process.on('exit', () => require('fs').writeFileSync(process.env.PGQ_TEST_MODULES, process.moduleLoadList.join('\\n')));\n",
  );
  const run = (name: string) => {
    const out = join(dir, `${name}.txt`);
    const result = runCli(['scan', 'db', '-f', 'json', '--cache', '--cache-location', join(dir, '.cache')], {
      cwd: dir,
      env: { NODE_OPTIONS: `--require ${preload}`, PGQ_TEST_MODULES: out },
    });
    return { result, modules: readFileSync(out, 'utf8').split('\n') };
  };
  const cold = run('cold');
  const cached = run('cached');
  assert.equal(cold.result.code, 1, cold.result.stderr);
  assert.equal(cached.result.stdout, cold.result.stdout);
  assert.ok(JSON.parse(cold.result.stdout).some((r: { messages: unknown[] }) => r.messages.length > 0));
  for (const name of ['NativeModule crypto']) {
    assert.ok(cold.modules.includes(name), `the run that hashes loads ${name}`);
    assert.ok(!cached.modules.includes(name), `the cached run does not load ${name}`);
  }
});
