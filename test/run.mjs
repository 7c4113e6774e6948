// Runs every test/**/*.test.ts with node's test runner (Node 20's --test does
// not expand globs). `npm test -- test/sql` runs the tests under test/sql only.
import { spawnSync } from 'node:child_process';
import fg from 'fast-glob';

const roots = process.argv.slice(2);
const patterns = roots.length ? roots.map((r) => (r.endsWith('.ts') ? r : `${r.replace(/\/$/, '')}/**/*.test.ts`)) : ['test/**/*.test.ts'];
const files = (await fg(patterns, { ignore: ['**/node_modules/**'] })).sort();
if (files.length === 0) {
  console.error(`No test files match ${patterns.join(' ')}`);
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 2);
