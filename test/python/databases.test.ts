// The Python front end's model of databases (encode), read from its source
// (0.7.0 and 0.9.0): Database(url) is a pool of the backend the URL picks
// (asyncpg by default, aiopg for postgresql+aiopg); a query of the Database
// outside a transaction runs alone in autocommit on any of its connections;
// inside `database.transaction()` (a block or a decorator) or
// `database.connection()` it runs on the task's connection.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { fileDriverOf } from '../../src/languages/python/drivers/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parse, siteWith } from './support/sites.ts';

before(async () => {
  await loadSqlParser();
});



describe('databases (encode)', () => {
  test("the URL's scheme picks the backend: asyncpg (its reset on release) by default and for a computed URL, aiopg (none) for postgresql+aiopg", () => {
    const model = parse([
      'import os',
      'from databases import Database',
      'a = Database("postgresql://localhost/app")',
      'b = Database("postgresql+aiopg://localhost/app")',
      'c = Database(os.environ["DATABASE_URL"])',
      'd = Database("postgresql://localhost/app", statement_cache_size=0, reset=my_reset)',
    ]);
    const [a, b, c, d] = model.connections;
    assert.deepEqual([a.driver, a.kind, a.autocommit, a.preparedStatements], ['databases', 'pool', true, 'yes']);
    assert.ok(a.driverReset?.statements.includes('RESET ALL'));
    assert.deepEqual([b.preparedStatements, b.driverReset], ['no', undefined]);
    assert.ok(c.driverReset?.statements.includes('RESET ALL') && /URL is computed/.test(c.driverReset.reason));
    assert.deepEqual([d.preparedStatements, d.driverReset], ['no', undefined]);
  });

  test("a query of the Database runs alone on the pool; inside database.transaction() or connection() it runs on the task's connection", () => {
    const model = parse([
      'from databases import Database',
      'database = Database("postgresql+aiopg://localhost/app")',
      'async def job(tenant):',
      '    await database.execute(query="select set_config(\'app.tenant\', :t, false)", values={"t": tenant})',
      '    async with database.transaction():',
      '        await database.execute("select 1 as in_tx")',
      '        async with database.transaction():',
      '            await database.fetch_one("select 2 as nested")',
      '    await database.fetch_all("select 3 as after_tx")',
      '    async with database.connection() as conn:',
      '        await conn.execute("select 4 as held")',
      '        async with conn.transaction():',
      '            await database.fetch_val("select 5 as held_tx")',
      '@database.transaction()',
      'async def decorated():',
      '    await database.execute("select 6 as decorated")',
    ]);
    const pool = siteWith(model, 'set_config');
    assert.deepEqual([pool.driver, pool.connection.kind, pool.scope.kind], ['databases', 'pool', 'autocommit']);
    assert.deepEqual(pool.params, [{ kind: 'caller-parameter', name: 'tenant' }]);
    const inTx = siteWith(model, 'in_tx');
    assert.deepEqual([inTx.connection.kind, inTx.scope.kind], ['pooled-client', 'transaction']);
    const nested = siteWith(model, 'nested').scope;
    assert.ok(inTx.scope.kind === 'transaction' && nested.kind === 'transaction' && nested.id === inTx.scope.id, 'a nested transaction is a savepoint of the same one');
    assert.equal(siteWith(model, 'after_tx').connection.kind, 'pool');
    const held = siteWith(model, 'held');
    assert.deepEqual([held.connection.kind, held.scope.kind], ['pooled-client', 'autocommit']);
    assert.equal(siteWith(model, 'held_tx').scope.kind, 'transaction');
    const decorated = siteWith(model, 'decorated').scope;
    assert.ok(decorated.kind === 'transaction' && decorated.form === '`@database.transaction()`', JSON.stringify(decorated));
  });

  test('a file that imports databases talks to it, whatever it imports of SQLAlchemy', () => {
    assert.equal(fileDriverOf(new Set(['databases', 'sqlalchemy'])), 'databases');
  });
});
