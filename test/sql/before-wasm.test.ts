// The setup registered before the SQL parser's wasm (the CLI's V8 setting,
// src/cli/wasm-tier.ts) runs once, before libpg-query is loaded.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { beforeWasm } from '../../src/before-wasm.ts';
import { loadSqlParser } from '../../src/sql/parser.ts';

test('the setup registered before the wasm runs once, before libpg-query is loaded', async () => {
  const require = createRequire(import.meta.url);
  const loadedAt: boolean[] = [];
  beforeWasm(() => loadedAt.push(require.cache[require.resolve('libpg-query')] !== undefined));
  await loadSqlParser();
  await loadSqlParser();
  assert.deepEqual(loadedAt, [false]);
});
