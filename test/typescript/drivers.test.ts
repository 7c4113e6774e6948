// The driver modules are the TS front end's only knowledge of a driver: the
// flow engine is given a registry and asks it. A registry without a module
// knows nothing of its driver; the same code with the module gets its pools,
// transactions and placements. (Adding a driver is a module and a line in
// DRIVERS: docs/architecture.md.)
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { DRIVERS, DriverRegistry, driverRegistry } from '../../src/languages/typescript/drivers/index.ts';
import { analyzeTypeScript } from '../../src/languages/typescript/flow/index.ts';
import { parseTypeScriptProgram } from '../../src/languages/typescript/parse.ts';
import { emptyFileModel, type FileModel } from '../../src/model/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

function modelWith(registry: DriverRegistry, code: string): FileModel {
  const model = emptyFileModel('job.ts', 'typescript', code);
  analyzeTypeScript(model, parseTypeScriptProgram(code, 'job.ts'), {}, registry);
  return model;
}

const sites = (m: FileModel) => m.sites.map((s) => `${s.analysis.statements[0].kind} ${s.scope.kind} ${s.connection.kind}`);

const typeormJob = `import { DataSource } from 'typeorm';
const dataSource = new DataSource({ type: 'postgres' });
export async function work(id: number) {
  const runner = dataSource.createQueryRunner();
  await runner.startTransaction();
  try {
    await runner.query("SELECT set_config('app.tenant', $1, true)", [id]);
    await runner.commitTransaction();
  } catch (error) {
    await runner.rollbackTransaction();
    throw error;
  }
}
`;

test("a query runner's transaction is TypeORM's module's knowledge: without it the runner is unknown", () => {
  const without = new DriverRegistry(DRIVERS.filter((d) => d.driver !== 'typeorm'));
  const bare = modelWith(without, typeormJob);
  assert.deepEqual(sites(bare), ['SelectStmt unknown unknown']);
  assert.deepEqual(bare.connections, []);

  const full = modelWith(driverRegistry, typeormJob);
  assert.deepEqual(sites(full), ['SelectStmt transaction pooled-client']);
  assert.deepEqual(full.sites[0].scope.kind === 'transaction' && full.sites[0].scope.form, 'queryRunner.startTransaction()');
  assert.deepEqual(full.connections.map((c) => `${c.driver} ${c.kind}`), ['typeorm pool']);
});

test('the registry answers by module specifier, export and type as the modules declare them', () => {
  assert.equal(driverRegistry.driverOfModule('drizzle-orm/node-postgres'), 'drizzle');
  assert.equal(driverRegistry.driverOfModule('../generated/prisma'), 'prisma');
  assert.equal(driverRegistry.driverOfModule('pg-boss'), undefined);
  assert.deepEqual(driverRegistry.exportOf('pg', 'default', 'pg-pool'), { kind: 'maker', driver: 'pg', makes: 'pool' });
  assert.deepEqual(driverRegistry.exportOf('pg', 'default', 'pg'), { kind: 'module', driver: 'pg' });
  // Names of Object's prototype are no export of a driver.
  assert.equal(driverRegistry.exportOf('pg', 'constructor', 'pg'), undefined);
  assert.equal(driverRegistry.typeOf('pg', 'toString', false), undefined);
  // A Knex.Transaction is a Knex too: a pool a transaction also satisfies.
  assert.deepEqual(driverRegistry.typeOf('knex', 'Knex', false), { driver: 'knex', what: 'pool', orTx: true });
  assert.deepEqual(driverRegistry.typeOf('kysely', 'Transaction', false), { driver: 'kysely', what: 'tx' });
  assert.deepEqual(driverRegistry.typeOf('drizzle', 'NodePgDatabase', false), { driver: 'drizzle', what: 'pool' });
  assert.equal(driverRegistry.typeOf('knex', 'Knex', true), undefined);
});
