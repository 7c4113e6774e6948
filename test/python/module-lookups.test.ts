// The Python front end's module lookups (resolveModule's candidates, readModule's stat) are asked
// once per scan (the TS module reader's scope, typescript/flow/modules.ts's beginScan): the same
// candidates come up from every file that imports a module. Outside a scan (the ESLint plugin,
// which lives as long as the editor) every lookup asks the filesystem again.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { clearProjectCache, readModule } from '../../src/languages/python/flow/project.ts';
import { resolveModule } from '../../src/languages/python/flow/module-paths.ts';
import { beginScan } from '../../src/languages/typescript/flow/modules.ts';

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-py-lookups-'));
  mkdirSync(join(dir, 'app'));
  writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "app"\n');
  writeFileSync(join(dir, 'app/__init__.py'), '');
  writeFileSync(join(dir, 'app/jobs.py'), 'from app.db import pool\n');
  return dir;
}

test('outside a scan, a module written after a lookup that missed it is found by the next one', () => {
  clearProjectCache();
  const dir = project();
  const jobs = join(dir, 'app/jobs.py');
  assert.equal(resolveModule(jobs, 'app.db', 0), undefined);
  assert.equal(readModule(join(dir, 'app/db.py')), null);
  writeFileSync(join(dir, 'app/db.py'), 'pool = None\n');
  assert.equal(resolveModule(jobs, 'app.db', 0), join(dir, 'app/db.py'));
  assert.ok(readModule(join(dir, 'app/db.py')), 'read once it is there');
});

test('within a scan a lookup is answered once; the next scan asks again', () => {
  clearProjectCache();
  const dir = project();
  const jobs = join(dir, 'app/jobs.py');
  const end = beginScan();
  try {
    assert.equal(resolveModule(jobs, 'app.db', 0), undefined);
    assert.equal(readModule(join(dir, 'app/db.py')), null);
    writeFileSync(join(dir, 'app/db.py'), 'pool = None\n');
    assert.equal(resolveModule(jobs, 'app.db', 0), undefined, 'the answer this scan already had');
    assert.equal(readModule(join(dir, 'app/db.py')), null, 'the stat this scan already took');
  } finally {
    end();
  }
  const next = beginScan();
  try {
    assert.equal(resolveModule(jobs, 'app.db', 0), join(dir, 'app/db.py'));
    assert.ok(readModule(join(dir, 'app/db.py')));
  } finally {
    next();
  }
});

test('a unit whose build config maps a package to its root folder: `from <package>.x import` finds the root\'s x', () => {
  clearProjectCache();
  const dir = mkdtempSync(join(tmpdir(), 'pgq-py-package-dir-'));
  mkdirSync(join(dir, 'models'));
  writeFileSync(join(dir, 'pyproject.toml'), '[tool.setuptools]\npackages = ["courier"]\npackage-dir = {"courier" = "."}\n');
  writeFileSync(join(dir, '__init__.py'), '');
  writeFileSync(join(dir, 'models/__init__.py'), 'from courier.models.base import Parcel\n');
  writeFileSync(join(dir, 'models/base.py'), 'class Parcel: pass\n');
  writeFileSync(join(dir, 'queue.py'), 'from courier.models import Parcel\n');
  assert.equal(resolveModule(join(dir, 'queue.py'), 'courier.models', 0), join(dir, 'models/__init__.py'));
  assert.equal(resolveModule(join(dir, 'models/__init__.py'), 'courier.models.base', 0), join(dir, 'models/base.py'));
  assert.equal(resolveModule(join(dir, 'queue.py'), 'parcels.models', 0), undefined, 'a package the config does not name');
});

test('without such a declaration the root folder is no package of its own', () => {
  clearProjectCache();
  const dir = mkdtempSync(join(tmpdir(), 'pgq-py-no-package-dir-'));
  mkdirSync(join(dir, 'models'));
  writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "courier"\n');
  writeFileSync(join(dir, '__init__.py'), '');
  writeFileSync(join(dir, 'models/__init__.py'), '');
  writeFileSync(join(dir, 'queue.py'), 'from courier.models import Parcel\n');
  assert.equal(resolveModule(join(dir, 'queue.py'), 'courier.models', 0), undefined);
});
