// The Python front end's model of aiopg (psycopg2 in asynchronous mode, read
// from aiopg 1.4.0's source): connections always in autocommit, SQL on
// cursors, transactions only where the code begins them (`cur.begin()`,
// `BEGIN`, aiopg.sa's `conn.begin()`), no reset on release.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { fileDriverOf, makerOf } from '../../src/languages/python/drivers/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parse, siteWith } from './support/sites.ts';

before(async () => {
  await loadSqlParser();
});



describe('aiopg', () => {
  test('create_pool: autocommit, nothing prepared, no reset on release; on_connect is a configure callback', () => {
    const model = parse([
      'import aiopg',
      'async def setup(conn):',
      '    async with conn.cursor() as cur:',
      '        await cur.execute("SET statement_timeout = 1000")',
      'async def job(tenant):',
      '    pool = await aiopg.create_pool("dbname=app", on_connect=setup)',
      '    async with pool.acquire() as conn:',
      '        async with conn.cursor() as cur:',
      '            await cur.execute("select set_config(\'app.tenant\', %s, false)", (tenant,))',
    ]);
    const [config] = model.connections;
    assert.deepEqual([config.driver, config.kind, config.autocommit, config.preparedStatements, config.driverReset], ['aiopg', 'pool', true, 'no', undefined]);
    assert.deepEqual(config.callbacks.map((c) => c.role), ['configure']);
    const site = siteWith(model, 'set_config');
    assert.deepEqual([site.driver, site.connection.kind, site.connection.configId, site.scope.kind], ['aiopg', 'pooled-client', config.id, 'autocommit']);
    assert.deepEqual(site.params, [{ kind: 'caller-parameter', name: 'tenant' }]);
  });

  test("a transaction only where the code begins one: `async with cur.begin()`, BEGIN sent as SQL, aiopg.sa's conn.begin()", () => {
    const model = parse([
      'import aiopg',
      'from aiopg.sa import create_engine',
      'async def job(pool: aiopg.Pool, tenant):',
      '    async with pool.acquire() as conn:',
      '        async with conn.cursor() as cur:',
      '            async with cur.begin():',
      '                await cur.execute("select 1 as in_block")',
      '            await cur.execute("select 2 as after_block")',
      '            await cur.execute("BEGIN")',
      '            await cur.execute("select 3 as after_begin")',
      '            await cur.execute("COMMIT")',
      'async def sa_job(tenant):',
      '    async with create_engine("dbname=app") as engine:',
      '        async with engine.acquire() as conn:',
      '            async with conn.begin():',
      '                await conn.execute("select set_config(\'app.tenant\', %(t)s, true)", t=tenant)',
      '            await conn.scalar("select 4 as sa_after")',
    ]);
    const inBlock = siteWith(model, 'in_block').scope;
    assert.ok(inBlock.kind === 'transaction' && inBlock.form === '`with cur.begin()`', JSON.stringify(inBlock));
    assert.equal(siteWith(model, 'after_block').scope.kind, 'autocommit');
    assert.equal(siteWith(model, 'after_begin').scope.kind, 'transaction');
    const sa = siteWith(model, 'set_config');
    assert.deepEqual([sa.driver, sa.scope.kind, sa.params], ['aiopg', 'transaction', [{ kind: 'caller-parameter', name: 'tenant' }]]);
    assert.equal(siteWith(model, 'sa_after').scope.kind, 'autocommit');
    assert.deepEqual(model.connections.map((c) => [c.driver, c.autocommit]), [['aiopg', true]]);
  });

  test('the registry: aiopg makers; a file that imports aiopg talks to it, whatever it imports of psycopg2 or SQLAlchemy', () => {
    assert.deepEqual([makerOf('aiopg.create_pool')?.driver, makerOf('aiopg.sa.create_engine')?.kind, makerOf('aiopg.connect')?.kind], ['aiopg', 'pool', 'connect']);
    assert.equal(fileDriverOf(new Set(['aiopg', 'psycopg2'])), 'aiopg');
    assert.equal(fileDriverOf(new Set(['aiopg', 'sqlalchemy'])), 'aiopg');
  });
});
