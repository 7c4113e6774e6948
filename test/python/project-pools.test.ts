// Pools read across a project: a module of the file's own package imported
// by its absolute name from a folder with no project marker and no
// __init__.py, and what a Session handed in as a parameter comes from when
// every engine the project makes agrees (flow/project-pools.ts).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { configOf } from '../../src/model/index.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache, importRoot, resolveModule } from '../../src/languages/python/flow/project.ts';
import { clearProjectPools } from '../../src/languages/python/flow/project-pools.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

/** Writes files under a new temp folder (no marker, no .git above it); returns its path. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-pools-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  clearProjectPools();
  return root;
}

function parseFile(path: string): FileModel {
  return pythonFrontEnd.parse(readFileSync(path, 'utf8'), path, {});
}

function siteWith(model: FileModel, needle: string): SqlSite {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(needle));
  assert.ok(site, `no site with ${needle}`);
  return site;
}

const NULLPOOL_ENGINE = [
  'from sqlalchemy import pool',
  'from sqlalchemy.ext.asyncio import create_async_engine',
  'def build_engine():',
  '    return create_async_engine("postgresql+asyncpg://app@db/app", poolclass=pool.NullPool)',
  'engine = build_engine()',
  '',
].join('\n');
const POOLED_ENGINE = ['from sqlalchemy.ext.asyncio import create_async_engine', 'engine = create_async_engine("postgresql+asyncpg://app@db/app", pool_size=5)', ''].join('\n');
const SESSIONS = ['from sqlalchemy.ext.asyncio import async_sessionmaker', 'from shop.db.engine import engine', 'Sessions = async_sessionmaker(bind=engine)', ''].join('\n');
const HELPER = [
  'from sqlalchemy import text',
  'from sqlalchemy.ext.asyncio import AsyncSession',
  'from shop.util import quote',
  'async def use_schema(session: AsyncSession, schema):',
  '    await session.execute(text(f"SET search_path TO {schema}"))',
  'async def use_schema_untyped(session, schema):',
  '    await session.execute(text(f"SET search_path TO {schema}"))',
  '',
].join('\n');

describe("the file's own package", () => {
  test('is imported from the folder above it, without a marker or __init__.py', () => {
    const root = project({ 'svc/shop/db/engine.py': POOLED_ENGINE, 'svc/shop/db/sessions.py': SESSIONS, 'svc/shop/jobs/run.py': 'x = 1\n' });
    const from = join(root, 'svc/shop/jobs/run.py');
    assert.equal(resolveModule(from, 'shop.db.engine', 0), join(root, 'svc/shop/db/engine.py'));
    assert.equal(resolveModule(from, 'other.db.engine', 0), undefined, 'a package the file is not in is not looked for above it');
    assert.equal(importRoot(from, new Set(['shop', 'sqlalchemy'])), join(root, 'svc'));
    assert.equal(importRoot(from, new Set(['sqlalchemy'])), undefined, 'no import of its own package, no marker: not known');
  });

  test('an engine made by a function of the module a session factory imports it from', () => {
    const root = project({
      'svc/shop/db/engine.py': NULLPOOL_ENGINE,
      'svc/shop/db/sessions.py': SESSIONS,
      'svc/shop/jobs/run.py': [
        'from sqlalchemy import text',
        'from shop.db.sessions import Sessions',
        'async def job(t):',
        '    async with Sessions() as s:',
        '        await s.execute(text("SET app.tenant = \'1\'"))',
        '        await s.commit()',
        '',
      ].join('\n'),
    });
    const model = parseFile(join(root, 'svc/shop/jobs/run.py'));
    assert.equal(configOf(model, siteWith(model, 'app.tenant'))?.reuse, 'no-reuse');
  });
});

describe('a Session handed in as a parameter', () => {
  test('comes from the NullPool engine when it is the only one the project makes (tests and migrations aside)', () => {
    const root = project({
      'svc/shop/db/engine.py': NULLPOOL_ENGINE,
      'svc/shop/tenancy.py': HELPER,
      'svc/tests/conftest.py': POOLED_ENGINE,
      'svc/shop/test_engine.py': POOLED_ENGINE,
      'svc/migrations/env.py': POOLED_ENGINE,
    });
    const model = parseFile(join(root, 'svc/shop/tenancy.py'));
    for (const site of model.sites) {
      const config = configOf(model, site);
      assert.equal(config?.reuse, 'no-reuse');
      assert.equal(config?.definedIn, join(root, 'svc/shop/db/engine.py'));
    }
    assert.equal(model.sites.length, 2);
    assert.ok(model.dependencies?.includes(join(root, 'svc/shop/db/engine.py')));
  });

  test('is not known when the project also makes a pooled engine, none, or one from options the reader does not see', () => {
    const cases: Record<string, string>[] = [
      { 'svc/shop/db/engine.py': NULLPOOL_ENGINE, 'svc/shop/db/reporting.py': POOLED_ENGINE },
      {},
      { 'svc/shop/db/engine.py': NULLPOOL_ENGINE, 'svc/shop/ext.py': 'from flask_sqlalchemy import SQLAlchemy\ndb = SQLAlchemy()\n' },
      { 'svc/shop/db/engine.py': 'from sqlalchemy.ext.asyncio import create_async_engine\nengine = create_async_engine(URL, **OPTIONS)\n' },
    ];
    for (const files of cases) {
      const root = project({ ...files, 'svc/shop/tenancy.py': HELPER });
      const model = parseFile(join(root, 'svc/shop/tenancy.py'));
      for (const site of model.sites) assert.equal(configOf(model, site), undefined, JSON.stringify(Object.keys(files)));
    }
  });
});

describe('pools made for one tenant (flow/tenant-pools.ts)', () => {
  test('a factory keeping its engine under the tenant key, one building it from the tenant, one built from the tenant role in a request', () => {
    const root = project({
      'svc/shop/engines.py': [
        'from sqlalchemy import create_engine',
        '_engines = {}',
        'def engine_for(org_id):',
        '    engine = _engines.get(org_id)',
        '    if engine is None:',
        '        engine = create_engine(URL)',
        '        _engines[org_id] = engine',
        '    return engine',
        '',
      ].join('\n'),
      'svc/shop/jobs.py': [
        'from sqlalchemy import create_engine, text',
        'from shop.engines import engine_for',
        'def local_for(schema_name):',
        '    return create_engine(URL, connect_args={"options": f"-csearch_path={schema_name}"})',
        'def shared_for(tenant_id):',
        '    return create_engine(settings.TENANT_DATABASE_URL)',
        'def imported(t):',
        '    with engine_for(t).begin() as c:',
        '        c.execute(text("SET app.a = \'1\'"))',
        'def local(t):',
        '    with local_for(t).begin() as c:',
        '        c.execute(text("SET app.b = \'1\'"))',
        'def by_role(request):',
        '    org_role = request.state.org_role',
        '    with create_engine(URL, connect_args={"options": f"-c role={org_role}"}).begin() as c:',
        '        c.execute(text("SET app.c = \'1\'"))',
        'def from_settings(t):',
        '    with shared_for(t).begin() as c:',
        '        c.execute(text("SET app.d = \'1\'"))',
        'def from_config(t):',
        '    cfg = load_settings()',
        '    with create_engine(cfg.tenant_db_url).begin() as c:',
        '        c.execute(text("SET app.e = \'1\'"))',
        '',
      ].join('\n'),
    });
    const model = parseFile(join(root, 'svc/shop/jobs.py'));
    assert.equal(configOf(model, siteWith(model, 'app.a'))?.reuse, 'per-tenant');
    assert.equal(configOf(model, siteWith(model, 'app.b'))?.reuse, 'per-tenant');
    assert.equal(configOf(model, siteWith(model, 'app.c'))?.reuse, 'per-tenant');
    assert.equal(configOf(model, siteWith(model, 'app.d'))?.reuse, undefined, "a module setting is one value for every tenant");
    assert.equal(configOf(model, siteWith(model, 'app.e'))?.reuse, undefined, 'a setting read in the function, not from its caller, is one value for every tenant');
  });
});
