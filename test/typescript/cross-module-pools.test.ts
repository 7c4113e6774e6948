// Pools whose facts are spread over a module boundary: the options a helper
// builds (a knexfile's settings plus the tenant's afterCreate hook) are the
// pool's options; a call of a project function that makes a pool is a maker
// of its own pool, kept (and ended or not) by the caller; the project fixtures' good folders stay quiet and their bad
// twins are flagged on their `expect:` lines only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { expectationsOf } from '../helpers/expectations.ts';

before(() => loadSqlParser());

const projects = join(import.meta.dirname, '../../fixtures/projects');

test('a hook in the options a class method returns is the pool hook of the Knex pool made from them', () => {
  const file = join(projects, 'js-knex-tenant-config-good/src/db/tenant-knex.js');
  const model = typescriptFrontEnd.parse(readFileSync(file, 'utf8'), file, {});
  const pool = model.connections.find((c) => c.driver === 'knex');
  assert.ok(pool, 'the Knex pool has a config');
  assert.deepEqual(pool.callbacks.map((c) => c.name), ['afterCreate']);
  const set = model.sites.find((s) => s.analysis.statements.some((st) => st.settingWrites.length > 0));
  assert.ok(set, 'the SET in afterCreate is a SQL site');
  assert.equal(set.callback?.configId, pool.id, 'the SET runs as the pool hook');
});

test('a call of an imported maker of one-connection clients is a script client where the caller ends it, and shared where it keeps it', () => {
  const read = (name: string, file: string) => {
    const path = join(projects, name, file);
    return typescriptFrontEnd.parse(readFileSync(path, 'utf8'), path, {}).connections.find((c) => c.driver === 'postgres.js');
  };
  const script = read('ts-script-client-module-good', 'db/migrate-tenant.ts');
  assert.equal(script?.reuse, 'single-connection');
  assert.equal(script?.definedIn, join(projects, 'ts-script-client-module-good/db/script-utils.ts'));
  const worker = read('ts-script-client-module-bad', 'db/worker.ts');
  assert.ok(worker, 'the worker\'s client has a config');
  assert.equal(worker.reuse, undefined, 'ended only by a shutdown handler: shared by every job');
});

for (const name of ['js-knex-tenant-config-good', 'js-knex-tenant-config-bad', 'ts-script-client-module-good', 'ts-script-client-module-bad']) {
  test(`fixtures/projects/${name} is flagged on its expect: lines only`, async () => {
    const { results } = await scan({ paths: [join(projects, name)], concurrency: 'off' });
    for (const result of results) {
      const expected = expectationsOf(readFileSync(result.filePath, 'utf8'));
      const actual = result.messages.map((m) => ({ line: m.line, ruleId: m.ruleId! }));
      assert.deepEqual(actual, expected, `${result.filePath}: ${result.messages.map((m) => `${m.line} ${m.message}`).join('\n')}`);
    }
    assert.ok(results.length > 0);
    if (name.endsWith('-bad')) assert.ok(results.some((r) => r.messages.length > 0), 'the bad twin is flagged');
  });
}
