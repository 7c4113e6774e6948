// Builds the CLI's bundle, dist/cli, from tsc's output in dist/src (npm run
// build runs it): one bundle loads in a fraction of the time of a hundred
// modules. The scan's dynamic imports stay chunks of their own, and the
// worker is an entry next to them, where the pool looks for it.
//
// Dependencies stay outside the bundle (native and wasm packages need their
// own files; peers may be absent), except the plain-JS CommonJS ones every
// scan loads: loading any CommonJS from an ES module starts Node's CommonJS
// loader, about 10 ms of a cached 5,320-file scan.
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
buildSync({
  absWorkingDir: root,
  entryPoints: ['dist/src/cli/run.js', 'dist/src/scan/worker.js'],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  outdir,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
});
