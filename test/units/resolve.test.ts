// Which project unit a file is in (src/config/units.ts): the nearest
// package.json / pyproject.toml / pgq-audit config, or what a config's
// `units` declares; and what the config validation says about `units`.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../src/config/validate.ts';
import { UNIT_MARKERS, UnitResolver } from '../../src/config/units.ts';
import { discoverFiles } from '../../src/scan/discover.ts';
import { ConfigError } from '../../src/engine/rule-config.ts';
import { project } from '../cli/project.ts';

const unitsOf = (dir: string, files: string[], resolver = new UnitResolver()) =>
  Object.fromEntries(files.map((f) => {
    const unit = resolver.unitOf(join(dir, f));
    return [f, `${unit.root === dir ? '.' : unit.root.startsWith(dir) ? unit.root.slice(dir.length + 1) : '(outside)'} ${unit.defaultSchema}`];
  }));

test('the nearest package.json, pyproject.toml or pgq-audit config is the unit', { timeout: 10_000 }, () => {
  const dir = project({
    'package.json': JSON.stringify({ name: 'root', workspaces: ['apps/*'] }),
    'apps/web/package.json': JSON.stringify({ name: 'web' }),
    'apps/web/src/esm/package.json': JSON.stringify({ type: 'module' }),
    'apps/web/src/esm/a.ts': '',
    'apps/web/src/b.ts': '',
    'apps/worker/pyproject.toml': '[project]\nname = "worker"\n',
    'apps/worker/worker/c.py': '',
    'apps/db/pgq-audit.config.json': JSON.stringify({ defaultSchema: 'app' }),
    'apps/db/migrations/d.sql': '',
    'apps/broken/package.json': '{ not json',
    'apps/broken/e.sql': '',
    'scripts/f.sql': '',
  });
  assert.deepEqual(
    unitsOf(dir, ['apps/web/src/esm/a.ts', 'apps/web/src/b.ts', 'apps/worker/worker/c.py', 'apps/db/migrations/d.sql', 'apps/broken/e.sql', 'scripts/f.sql']),
    {
      // A package.json that only sets "type" marks the module format, not a project.
      'apps/web/src/esm/a.ts': 'apps/web public',
      'apps/web/src/b.ts': 'apps/web public',
      'apps/worker/worker/c.py': 'apps/worker public',
      'apps/db/migrations/d.sql': 'apps/db app',
      // One that does not parse is still a project's package.json.
      'apps/broken/e.sql': 'apps/broken public',
      'scripts/f.sql': '. public',
    },
  );
});

test("the walk's listing of each folder finds the same units without a stat per folder, and is what the resolver reads", { timeout: 10_000 }, async () => {
  const dir = project({
    'package.json': JSON.stringify({ name: 'root' }),
    'apps/web/PACKAGE.JSON': JSON.stringify({ name: 'web' }),
    'apps/web/src/a.ts': '',
    'apps/worker/pyproject.toml/readme.md': 'a folder of that name is no marker',
    'apps/worker/b.py': '',
    'apps/db/pgq-audit.config.json': JSON.stringify({ defaultSchema: 'app' }),
    'apps/db/migrations/c.sql': '',
  });
  const listing = { names: UNIT_MARKERS, folders: new Map<string, string[]>() };
  await discoverFiles([dir], { extensions: ['.ts', '.py', '.sql'], listing });
  assert.deepEqual(listing.folders.get(join(dir, 'apps/web')), ['package.json']);
  assert.deepEqual(listing.folders.get(join(dir, 'apps/web/src')), []);
  assert.deepEqual(listing.folders.get(join(dir, 'apps/worker')), ['pyproject.toml']);
  const files = ['apps/web/src/a.ts', 'apps/worker/b.py', 'apps/db/migrations/c.sql'];
  // PACKAGE.JSON is a marker only where the file system ignores case: the stat the listing leads to says which.
  assert.deepEqual(unitsOf(dir, files, new UnitResolver({ listed: listing.folders })), unitsOf(dir, files));
  // A folder listed without markers is not looked into again: the listing is what the resolver reads.
  const unlisted = new Map(listing.folders);
  unlisted.set(join(dir, 'apps/db'), []);
  assert.equal(unitsOf(dir, ['apps/db/migrations/c.sql'], new UnitResolver({ listed: unlisted }))['apps/db/migrations/c.sql'], '. public');
});

test("a config's units: the first matching entry, at the outermost matching folder; files as units; nested configs govern below them", { timeout: 10_000 }, () => {
  const dir = project({
    'pgq-audit.config.json': JSON.stringify({
      defaultSchema: 'app',
      units: [{ path: 'services/billing', defaultSchema: 'billing' }, 'services/*', 'packages/**', { path: 'samples/**/*.sql', each: 'file' }],
    }),
    'services/billing/src/deep/a.ts': '',
    'services/billing/package.json': JSON.stringify({ name: 'billing' }),
    'services/mailer/sub/package.json': JSON.stringify({ name: 'nested' }),
    'services/mailer/sub/b.py': '',
    'packages/db/migrations/c.sql': '',
    'packages/worker/d.ts': '',
    'samples/x/e.sql': '',
    'samples/x/f.sql': '',
    'samples/x/g.ts': '',
    'other/package.json': JSON.stringify({ name: 'other' }),
    'other/h.sql': '',
    'own/pgq-audit.config.json': JSON.stringify({}),
    'own/pkg/package.json': JSON.stringify({ name: 'own-pkg' }),
    'own/pkg/i.sql': '',
  });
  assert.deepEqual(
    unitsOf(dir, ['services/billing/src/deep/a.ts', 'services/mailer/sub/b.py', 'packages/db/migrations/c.sql', 'packages/worker/d.ts', 'samples/x/e.sql', 'samples/x/f.sql', 'samples/x/g.ts', 'other/h.sql', 'own/pkg/i.sql']),
    {
      'services/billing/src/deep/a.ts': 'services/billing billing',
      // A declared unit is not split by a package.json inside it.
      'services/mailer/sub/b.py': 'services/mailer app',
      // "packages/**" matches packages itself first: one unit for everything below.
      'packages/db/migrations/c.sql': 'packages app',
      'packages/worker/d.ts': 'packages app',
      'samples/x/e.sql': 'samples/x/e.sql app',
      'samples/x/f.sql': 'samples/x/f.sql app',
      // No entry matches: the nearest project root, up to the config's folder.
      'samples/x/g.ts': '. app',
      'other/h.sql': 'other app',
      // A config of its own governs below it: no units there, so the nearest package.json.
      'own/pkg/i.sql': 'own/pkg public',
    },
  );
});

test('"." makes the whole folder of the config one unit; --config governs every file', { timeout: 10_000 }, () => {
  const dir = project({
    'pgq-audit.config.json': JSON.stringify({ units: ['.'] }),
    'a/package.json': JSON.stringify({ name: 'a' }),
    'a/x.sql': '',
    'b/pyproject.toml': '',
    'b/y.py': '',
  });
  assert.deepEqual(unitsOf(dir, ['a/x.sql', 'b/y.py']), { 'a/x.sql': '. public', 'b/y.py': '. public' });
  const explicit = new UnitResolver({ config: { base: dir, config: { rules: {}, settings: {}, ignores: [], units: [{ path: 'a', each: 'folder' }], defaultSchema: 'x' } } });
  assert.deepEqual(unitsOf(dir, ['a/x.sql', 'b/y.py'], explicit), { 'a/x.sql': 'a x', 'b/y.py': 'b x' });
});

test('a unit does not depend on what was scanned: the same answer from any resolver', { timeout: 10_000 }, () => {
  const dir = project({ 'svc/package.json': JSON.stringify({ name: 'svc' }), 'svc/q.sql': '' });
  const first = new UnitResolver().unitOf(join(dir, 'svc/q.sql'));
  new UnitResolver().unitOf(join(dir, 'svc/q.sql'));
  assert.deepEqual(new UnitResolver({ cwd: join(dir, 'svc') }).unitOf(join(dir, 'svc/q.sql')), first);
  assert.equal(first.root, join(dir, 'svc'));
});

test('one resolver answers per folder once: files of a folder, asked in any order and again, get what a fresh resolver gives, each its own copy', { timeout: 10_000 }, () => {
  const dir = project({
    'pgq-audit.config.json': JSON.stringify({ units: [{ path: 'samples/*.sql', each: 'file' }] }),
    'samples/a.sql': '',
    'samples/b.ts': '',
    'samples/c.sql': '',
    'svc/package.json': JSON.stringify({ name: 'svc' }),
    'svc/q.sql': '',
    'svc/r.sql': '',
  });
  const files = ['samples/a.sql', 'samples/b.ts', 'samples/c.sql', 'svc/q.sql', 'svc/r.sql'];
  const fresh = Object.fromEntries(files.map((f) => [f, unitsOf(dir, [f])[f]]));
  const resolver = new UnitResolver();
  assert.deepEqual(unitsOf(dir, [...files].reverse(), resolver), fresh);
  assert.deepEqual(unitsOf(dir, files, resolver), fresh);
  assert.equal(fresh['samples/a.sql'], 'samples/a.sql public');
  assert.equal(fresh['samples/b.ts'], '. public');
  const unit = resolver.unitOf(join(dir, 'svc/q.sql'));
  unit.root = 'changed';
  assert.equal(resolver.unitOf(join(dir, 'svc/r.sql')).root, join(dir, 'svc'));
});

test('config validation: units and defaultSchema', { timeout: 10_000 }, () => {
  assert.deepEqual(validateConfig({ units: ['services/*', { path: '**', each: 'file', defaultSchema: 'app' }], defaultSchema: 'public' }, 'c.json'), {
    rules: {},
    settings: {},
    ignores: [],
    units: [
      { path: 'services/*', each: 'folder' },
      { path: '**', each: 'file', defaultSchema: 'app' },
    ],
    defaultSchema: 'public',
  });
  const fails = (value: unknown, message: RegExp) => assert.throws(() => validateConfig(value, 'c.json'), (e: unknown) => e instanceof ConfigError && message.test(e.message));
  fails({ units: 'services/*' }, /^c\.json: units: expected an array of globs/);
  fails({ units: [3] }, /^c\.json: units\[0\]: expected a glob/);
  fails({ units: [''] }, /units\[0\]: expected a non-empty glob/);
  fails({ units: ['../elsewhere'] }, /units\[0\]: '\.\.\/elsewhere': a unit glob is relative to the folder of this config/);
  fails({ units: [{ each: 'file' }] }, /units\[0\]: needs a "path"/);
  fails({ units: [{ path: 'a', each: 'files' }] }, /units\[0\]\.each: "files" is not allowed\. Valid values: "folder", "file"/);
  fails({ units: [{ path: 'a', schema: 'x' }] }, /units\[0\]: unknown key 'schema'\. Valid keys: path, each, defaultSchema/);
  fails({ defaultSchema: 1 }, /defaultSchema: expected a schema name/);
});
