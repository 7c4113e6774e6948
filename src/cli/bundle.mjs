// Builds the CLI's bundles, dist/cli, from tsc's output in dist/src (npm run
// build runs it):
//
// - pgq-audit.cjs: the whole CLI in one CommonJS file, which launch.js runs
//   through V8's code cache (src/cli/code-cache.ts: Node 20 has no compile
//   cache for ES modules). Modules imported dynamically are still evaluated
//   only when first imported (esbuild wraps them).
// - launch.js: what bin/pgq-audit.js imports, with the bundle's content hash
//   (the code cache's key) written in.
// - worker.js and its chunks: the analysis pool's worker thread, an ES module
//   next to the code that starts it (new URL('./worker.js', ...)), its
//   dynamic imports chunks of their own.
//
// Dependencies stay outside the bundles (native and wasm packages need their
// own files; peers may be absent), except the plain-JS CommonJS ones every
// scan loads: loading any CommonJS from an ES module starts Node's CommonJS
// loader, about 10 ms of a cached 5,320-file scan.
import { createHash } from 'node:crypto';
import { rmSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

const BUNDLED = new Set(['ignore', 'picomatch']);

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies })
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

const outdir = join(root, 'dist/cli');
rmSync(outdir, { recursive: true, force: true });
const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', external, logLevel: 'warning' };
buildSync({
  ...common,
  entryPoints: ['dist/src/scan/worker.js'],
  splitting: true,
  format: 'esm',
  outdir,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
});
const cjs = join(outdir, 'pgq-audit.cjs');
buildSync({
  ...common,
  entryPoints: ['dist/src/cli/start.js'],
  format: 'cjs',
  outfile: cjs,
  // import.meta has no CommonJS form: the file's own URL, and resolution from it.
  define: { 'import.meta.url': '__pgq_import_meta_url', 'import.meta.resolve': '__pgq_import_meta_resolve' },
  banner: {
    js: 'var __pgq_import_meta_url = require("node:url").pathToFileURL(__filename).href;\nvar __pgq_import_meta_resolve = (specifier) => require("node:url").pathToFileURL(require.resolve(specifier)).href;',
  },
});
buildSync({
  ...common,
  entryPoints: ['dist/src/cli/launch.js'],
  format: 'esm',
  outfile: join(outdir, 'launch.js'),
  define: { PGQ_BUNDLE_HASH: JSON.stringify(createHash('sha256').update(readFileSync(cjs)).digest('hex').slice(0, 16)) },
});
