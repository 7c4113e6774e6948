// Runs every test/**/*.test.ts with node's test runner (Node 20's --test does
// not expand globs). `npm test -- test/sql` runs the tests under test/sql only.
import { spawnSync } from 'node:child_process';
import fg from 'fast-glob';
import { pythonPath } from './setup/python-deps.mjs';

const roots = process.argv.slice(2);
const patterns = roots.length ? roots.map((r) => (r.endsWith('.ts') ? r : `${r.replace(/\/$/, '')}/**/*.test.ts`)) : ['test/**/*.test.ts'];
const files = (await fg(patterns, { ignore: ['**/node_modules/**'] })).sort();
if (files.length === 0) {
  console.error(`No test files match ${patterns.join(' ')}`);
  process.exit(2);
}
// The Python proofs' packages: Debian's, fetched into a cache without root when not installed.
const PYTHONPATH = pythonPath({ log: (m) => console.error(m) });
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, PYTHONPATH } },
);
process.exit(result.status ?? 2);
