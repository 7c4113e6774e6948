// SQL chosen by the environment's name: the text a test runner does not take
// (NODE_ENV, or a config's `env`, compared with 'test') is the text production
// sends, and the one judged; a choice by anything else stays unknown.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const HEAD = "import pg from 'pg';\nconst pool = new pg.Pool();\ndeclare const config: { env: string; fast: boolean };\n";
const locks = (body: string): number[] => {
  const model = typescriptFrontEnd.parse(`${HEAD}${body}`, '/virtual/claim.ts', {});
  return model.sites.map((s) => s.analysis.statements.reduce((n, st) => n + st.lockingReads.length, 0));
};

test('a lock clause left out under tests only is read as production writes it', () => {
  assert.deepEqual(locks("const lock = process.env.NODE_ENV === 'test' ? '' : 'FOR UPDATE SKIP LOCKED';\nexport const claim = () => pool.query(`SELECT id FROM jobs LIMIT 1 ${lock}`);\n"), [1]);
  assert.deepEqual(locks("const lock = config.env !== 'test' ? 'FOR UPDATE SKIP LOCKED' : '';\nexport const claim = () => pool.query(`SELECT id FROM jobs LIMIT 1 ${lock}`);\n"), [1]);
});

test('a helper that returns early under tests returns its other text in production', () => {
  const body = "function claimSql(): string {\n  const base = 'SELECT id FROM jobs LIMIT 1';\n  if (config.env === 'test') return base;\n  return `${base} FOR UPDATE SKIP LOCKED`;\n}\nexport const claim = () => pool.query(claimSql());\n";
  assert.deepEqual(locks(body), [1]);
});

test('a choice by anything but the environment stays unknown', () => {
  assert.deepEqual(locks("const lock = config.fast ? '' : 'FOR UPDATE SKIP LOCKED';\nexport const claim = () => pool.query(`SELECT id FROM jobs LIMIT 1 ${lock}`);\n"), [], 'no text: no site');
  const body = "function claimSql(): string {\n  const base = 'SELECT id FROM jobs LIMIT 1';\n  if (config.fast) return base;\n  return `${base} FOR UPDATE SKIP LOCKED`;\n}\nexport const claim = () => pool.query(claimSql());\n";
  assert.deepEqual(locks(body), [1], 'the top-level return is read as before when the early return is not a test-only one');
});
