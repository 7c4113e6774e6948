// Runs one proof of test/proofs/python/psycopg_proofs.py with Debian's Python
// (or PGQ_PYTHON) and returns what it measured. A missing interpreter or a
// missing psycopg is a failure with the install line, never a skip.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PYTHON = process.env.PGQ_PYTHON ?? '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./psycopg_proofs.py', import.meta.url));
const INSTALL = 'run the tests with `npm test` (it fetches Debian\'s packages into node_modules/.cache), or apt-get install python3-psycopg python3-psycopg-pool';

export interface ProofOutput<T> {
  python: string;
  psycopg: string;
  psycopg_pool: string;
  result: T;
}

function run(args: string[]): Promise<{ stdout: string; stderr: string; code: number | null; spawnError?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const spawnError = error && typeof (error as NodeJS.ErrnoException).code === 'string' ? (error as NodeJS.ErrnoException) : undefined;
      resolve({ stdout, stderr, code: error ? ((error as { code?: number }).code ?? 1) : 0, spawnError });
    });
  });
}

/** Throws with a message that says what to install when psycopg 3 or psycopg_pool cannot be imported. */
export async function requirePsycopg(): Promise<{ psycopg: string; pool: string }> {
  const probe = await run(['-c', 'import psycopg, psycopg_pool; print(psycopg.__version__, psycopg_pool.__version__)']);
  if (probe.spawnError) {
    throw new Error(`The Python proofs need ${PYTHON} (${probe.spawnError.code}). Install Debian's packages: ${INSTALL}`);
  }
  if (probe.code !== 0) {
    throw new Error(`The Python proofs need psycopg 3 and psycopg_pool importable by ${PYTHON}: ${INSTALL}\n${probe.stderr.trim()}`);
  }
  const [psycopg, pool] = probe.stdout.trim().split(/\s+/);
  return { psycopg, pool };
}

export async function runProof<T>(name: string, workerUrl: string): Promise<ProofOutput<T>> {
  await requirePsycopg();
  const result = await run([SCRIPT, name, workerUrl]);
  if (result.code !== 0) throw new Error(`proof ${name} failed (exit ${result.code}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as ProofOutput<T>;
}

/** The front end's version comparison: the proof and the rule read versions alike. */
export { compareVersions } from '../../../src/languages/python/versions.ts';
