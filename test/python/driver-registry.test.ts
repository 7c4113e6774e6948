// The Python front end's shape: the registry of driver modules answers for
// every driver's API paths, and the flow engine names no driver (it asks the
// registry), so adding a driver touches no flow code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  annotationOf,
  checkoutOf,
  DRIVERS,
  fileDriverOf,
  makerOf,
  sqlMethodsOf,
  transactionBlockOf,
} from '../../src/languages/python/drivers/index.ts';

const PYTHON = join(import.meta.dirname, '../../src/languages/python');

describe('the driver registry', () => {
  test('makers: each driver module claims its own pool classes and connect functions, and nothing else', () => {
    const cases: [string, string | undefined, string | undefined][] = [
      ['psycopg_pool.ConnectionPool', 'psycopg', 'pool'],
      ['psycopg_pool.pool_async.AsyncConnectionPool', 'psycopg', 'pool'],
      ['psycopg.connect', 'psycopg', 'connect'],
      ['psycopg.connection_async.AsyncConnection.connect', 'psycopg', 'connect'],
      ['psycopg2.pool.ThreadedConnectionPool', 'psycopg2', 'pool'],
      ['psycopg2.connect', 'psycopg2', 'connect'],
      ['asyncpg.create_pool', 'asyncpg', 'pool'],
      ['asyncpg.connect', 'asyncpg', 'connect'],
      ['sqlalchemy.ext.asyncio.create_async_engine', 'sqlalchemy', 'pool'],
      ['sqlmodel.create_engine', 'sqlalchemy', 'pool'],
      ['psycopg_pool.PoolTimeout', undefined, undefined],
      ['mylib.create_pool', undefined, undefined],
    ];
    for (const [path, driver, kind] of cases) {
      const maker = makerOf(path);
      assert.deepEqual([maker?.driver, maker?.kind], [driver, kind], path);
    }
    assert.equal(makerOf('psycopg_pool.NullConnectionPool')?.name, 'NullConnectionPool');
  });

  test('the driver of a file: SQLAlchemy over its DBAPI; asyncpg and Django only without psycopg; psycopg and psycopg2 exclude each other', () => {
    const of = (...modules: string[]) => fileDriverOf(new Set(modules));
    assert.equal(of('sqlalchemy', 'psycopg2'), 'sqlalchemy');
    assert.equal(of('sqlmodel'), 'sqlalchemy');
    assert.equal(of('asyncpg'), 'asyncpg');
    assert.equal(of('asyncpg', 'psycopg'), 'psycopg');
    assert.equal(of('django'), 'django');
    assert.equal(of('django', 'psycopg2'), 'psycopg2');
    assert.equal(of('psycopg_pool'), 'psycopg');
    assert.equal(of('psycopg', 'psycopg2'), 'unknown');
    assert.equal(of('requests'), 'unknown');
  });

  test('annotations, checkouts, transaction blocks and SQL methods come from the module of the driver they name', () => {
    assert.deepEqual([annotationOf('asyncpg.Pool')?.driver.name, annotationOf('asyncpg.Pool')?.kind], ['asyncpg', 'pool']);
    assert.deepEqual([annotationOf('sqlalchemy.orm.Session')?.driver.name, annotationOf('sqlalchemy.orm.Session')?.kind], ['sqlalchemy', 'conn']);
    assert.equal(annotationOf('psycopg.Connection'), undefined);
    assert.deepEqual(checkoutOf('asyncpg', 'acquire'), { method: 'acquire', origin: 'acquire', autocommit: true, exitEnds: 'rollback' });
    assert.equal(checkoutOf('psycopg', 'connection')?.origin, 'pool.connection');
    assert.equal(checkoutOf('sqlalchemy', 'getconn'), undefined);
    assert.equal(transactionBlockOf('transaction', 'unknown')?.form, '`with conn.transaction()`');
    // `begin()` is SQLAlchemy's transaction block only in files that talk to SQLAlchemy.
    assert.equal(transactionBlockOf('begin', 'psycopg'), undefined);
    assert.equal(transactionBlockOf('begin', 'sqlalchemy')?.onNewConnection, true);
    assert.ok(sqlMethodsOf('asyncpg', 'conn').has('fetchrow'));
    assert.ok(!sqlMethodsOf('psycopg', 'cursor').has('fetchrow'));
  });

  test('every driver module names itself once and lists the modules a file imports to use it', () => {
    const names = DRIVERS.map((d) => d.name);
    assert.equal(new Set(names).size, names.length);
    for (const driver of DRIVERS) assert.ok(driver.modules.length > 0, driver.name);
  });
});

/** The .ts files under a folder of the Python front end. */
function sources(folder: string): string[] {
  return readdirSync(join(PYTHON, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(folder, f));
}

/** The code of a file without its comments (line and block comments). */
function code(file: string): string {
  return readFileSync(join(PYTHON, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('the flow engine', () => {
  test('names no driver: no driver module name in its code, and drivers only through the registry', () => {
    const driverNames = /['"`](psycopg2?|psycopg_pool|asyncpg|sqlalchemy|sqlmodel|django)(\.[\w.]*)?['"`]/;
    for (const file of sources('flow')) {
      const text = code(file);
      assert.doesNotMatch(text, driverNames, file);
      for (const [, path] of text.matchAll(/from '([^']+)'/g)) {
        if (path.includes('/drivers/')) assert.equal(path, '../drivers/index.ts', `${file} imports ${path}`);
      }
    }
  });

  test('driver modules do not import the engine walks: they see them through the interface in flow/driver-api.ts', () => {
    for (const file of sources('drivers')) {
      for (const [, path] of code(file).matchAll(/from '([^']+)'/g)) {
        assert.doesNotMatch(path, /flow\/(file|walk|calls|bindings)\.ts$/, `${file} imports ${path}`);
      }
    }
  });

  test('no file of the Python front end is over 700 lines', () => {
    const top = readdirSync(PYTHON).filter((f) => f.endsWith('.ts'));
    for (const file of [...top, ...['flow', 'drivers', 'orm'].flatMap((f) => sources(f))]) {
      const lines = readFileSync(join(PYTHON, file), 'utf8').split('\n').length;
      assert.ok(lines <= 700, `${file}: ${lines} lines`);
    }
  });
});
