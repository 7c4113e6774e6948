// Runs every test/**/*.test.ts with node's test runner (Node 20's --test does
// not expand globs). `npm test -- test/sql` runs the tests under test/sql only.
//
// Nothing may hang: every test and hook has a timeout (test/setup/test-timeout.mjs,
// loaded into every test process; PGQ_TEST_TIMEOUT_MS changes the default), and
// every test file as a whole has one (`--test-timeout`, which Node 20 applies per
// file; PGQ_TEST_FILE_TIMEOUT_MS changes it): a file that something keeps alive
// after its tests fails at that bound. No `--test-force-exit`: with concurrent
// files it can end a file's process before the parent has read its last results,
// which are then lost without a failure (seen here: a run reported 1266 of 1280
// tests, exit 0; nodejs/node#64833). The bounds are for a loaded 2-core machine,
// not measurements: a bug fails its test within minutes, not at CI's limit.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fg from 'fast-glob';
import { pythonPath } from './setup/python-deps.mjs';

const FILE_TIMEOUT_MS = Number(process.env.PGQ_TEST_FILE_TIMEOUT_MS) || 900_000;

const roots = process.argv.slice(2);
const patterns = roots.length ? roots.map((r) => (r.endsWith('.ts') ? r : `${r.replace(/\/$/, '')}/**/*.test.ts`)) : ['test/**/*.test.ts'];
const files = (await fg(patterns, { ignore: ['**/node_modules/**'] })).sort();
if (files.length === 0) {
  console.error(`No test files match ${patterns.join(' ')}`);
  process.exit(2);
}
// The Python proofs' packages: Debian's, fetched into a cache without root when not installed.
const PYTHONPATH = pythonPath({ log: (m) => console.error(m) });
const defaultTimeouts = pathToFileURL(join(import.meta.dirname, 'setup/test-timeout.mjs')).href;
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--import', defaultTimeouts, '--test', '--test-concurrency=2', `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, PYTHONPATH } },
);
process.exit(result.status ?? 2);
