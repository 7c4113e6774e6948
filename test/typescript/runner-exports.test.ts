// A function a driver's runner calls gets the driver's value in its untyped
// first parameter: Knex's migrate:latest and seed:run call the module's
// exported up/down/seed with the Knex instance. Only those export names, only
// when the body uses the parameter through Knex's own members, and never over
// a type the code wrote.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const POLICY = "CREATE POLICY p ON t USING (tenant_id = current_setting('app.tenant')::uuid)";
/** The drivers of the SQL sites the front end found in `text`. */
const sitesOf = (text: string, file = 'migrations/001_rls.js') => typescriptFrontEnd.parse(text, file, {}).sites.map((s) => s.driver);

test('CommonJS exports.up / exports.down and module.exports = { up() {} }: the parameter is Knex', () => {
  assert.deepEqual(sitesOf(`exports.up = async function (knex) { await knex.raw(\`${POLICY}\`); };`), ['knex']);
  assert.deepEqual(sitesOf(`exports.down = (knex) => knex.schema.raw ? knex.raw(\`${POLICY}\`) : null;`), ['knex']);
  assert.deepEqual(sitesOf(`module.exports = { async up(knex) { await knex.raw(\`${POLICY}\`); } };`), ['knex']);
  assert.deepEqual(sitesOf(`module.exports.seed = async (db) => { await db.raw(\`${POLICY}\`); };`), ['knex']);
});

test('ESM export function up(knex) and export const up = async (knex) => ...', () => {
  assert.deepEqual(sitesOf(`export async function up(knex) { await knex.raw(\`${POLICY}\`); }`, 'migrations/001.mjs'), ['knex']);
  assert.deepEqual(sitesOf(`export const up = async (knex) => { await knex.raw(\`${POLICY}\`); };`, 'migrations/001.mjs'), ['knex']);
});

test('not Knex: another export name, a parameter not used through raw or schema, a typed parameter', () => {
  assert.deepEqual(sitesOf(`exports.apply = async function (knex) { await knex.raw(\`${POLICY}\`); };`), []);
  assert.deepEqual(sitesOf(`exports.up = async function (pgm) { pgm.createTable('t', {}); pgm.sql(\`${POLICY}\`); };`), []);
  assert.deepEqual(sitesOf(`import type { Kysely } from 'kysely';\nexport async function up(db: Kysely<unknown>) { await db.raw(\`${POLICY}\`); }`, 'migrations/001.ts'), []);
});
