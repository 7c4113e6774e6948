// Runs the real, built CLI as a child process (npm test builds first).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '../..');
const bin = join(repoRoot, 'bin/pgq-audit.js');

/**
 * How long a child process of a test may run. A synchronous spawn blocks the
 * event loop, so the test's own timeout cannot fire while it runs: this bound
 * is what stops a hung CLI. Generous (a loaded 2-core machine), never a
 * measurement.
 */
export const CHILD_TIMEOUT_MS = Number(process.env.PGQ_TEST_CHILD_TIMEOUT_MS) || 90_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliRun {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: CHILD_TIMEOUT_MS,
  });
  if (result.error) throw new Error(`pgq-audit ${args.join(' ')}: ${result.error.message} (bound: ${CHILD_TIMEOUT_MS} ms)\n${result.stderr ?? ''}`);
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
