// Runs the guard's Python proofs (python/*.py here) with Debian's interpreter
// and PYTHONPATH=<repo>/python:<Debian's packages>, the way a worker imports
// pgq_audit with `PYTHONPATH=python`. test/run.mjs puts Debian's packages on
// PYTHONPATH (fetched into node_modules/.cache when not installed). A missing
// interpreter or package is a failure with the install line, never a skip.
import { spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PYTHON = process.env.PGQ_PYTHON ?? '/usr/bin/python3';
export const PACKAGE_DIR = fileURLToPath(new URL('../../python', import.meta.url));
const HERE = fileURLToPath(new URL('./python', import.meta.url));
const INSTALL =
  "run the tests with `npm test` (it fetches Debian's packages into node_modules/.cache), or apt-get install python3-psycopg python3-psycopg-pool python3-sqlalchemy python3-asyncpg python3-psycopg2";

export function pythonEnv(extra: string[] = [PACKAGE_DIR]): NodeJS.ProcessEnv {
  const path = [...extra, ...(process.env.PYTHONPATH ? [process.env.PYTHONPATH] : [])].join(delimiter);
  return { ...process.env, PYTHONPATH: path, PYTHONDONTWRITEBYTECODE: '1' };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `python3 args...`, bounded by `timeoutMs` (the process is killed and the
 * run fails with what it printed). `onLine` sees each stdout line as it comes and
 * may answer on the child's stdin.
 */
export function runPython(
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string, answer: (text: string) => void) => void } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { env: options.env ?? pythonEnv(), cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        options.onLine?.(line, (text) => child.stdin.write(text));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`The Python guard's tests need ${PYTHON} (${error.message}). Install Debian's packages: ${INSTALL}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code: signal ? null : code, stdout, stderr });
    });
  });
}

export interface ProofOutput<T> {
  [pkg: string]: unknown;
  result: T;
}

/** Runs one proof of a script in python/ and parses the JSON it prints last. */
export async function runProof<T>(
  script: 'psycopg_pool_proofs.py' | 'sqlalchemy_asyncpg_proofs.py',
  proof: string,
  args: string[],
  options: { timeoutMs?: number; onLine?: (line: string, answer: (text: string) => void) => void } = {},
): Promise<ProofOutput<T>> {
  const run = await runPython([join(HERE, script), proof, ...args], options);
  if (run.code !== 0) {
    const hint = /ModuleNotFoundError/.test(run.stderr) ? `\nThe proofs need the drivers importable: ${INSTALL}` : '';
    throw new Error(`proof ${proof} failed (exit ${run.code ?? 'killed'}):\n${run.stderr}${hint}`);
  }
  const last = run.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as ProofOutput<T>;
}
