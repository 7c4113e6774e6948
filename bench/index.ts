// `npm run bench`: the scan benchmark, then the guard's (bench/guard.ts) and the Python guard's
// (bench/python-guard.ts) when they exist.
// Arguments go to the scan benchmark: npm run bench -- --files 4000 --runs 1.
// With --shapes, the real-repository shapes instead (bench/shapes.ts): npm run bench -- --shapes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runScanBench } from './scan-bench.ts';
import { runShapesBench } from './shapes.ts';

const argv = process.argv.slice(2);
if (argv.includes('--shapes')) {
  const { ok } = await runShapesBench(argv);
  process.exit(ok ? 0 : 1);
}
const { ok } = await runScanBench(argv);
let code = ok ? 0 : 1;
const guard = join(import.meta.dirname, 'guard.ts');
if (existsSync(guard)) {
  console.log('\n== bench/guard.ts ==');
  const run = spawnSync(process.execPath, ['--import', 'tsx', guard], { stdio: 'inherit' });
  if (run.status !== 0) code = 1;
}
const pythonGuard = join(import.meta.dirname, 'python-guard.ts');
if (existsSync(pythonGuard)) {
  console.log('\n== bench/python-guard.ts ==');
  const run = spawnSync(process.execPath, ['--import', 'tsx', pythonGuard], { stdio: 'inherit' });
  if (run.status !== 0) code = 1;
}
process.exitCode = code;
