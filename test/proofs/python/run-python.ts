// Runs one proof of a script in test/proofs/python/ (psycopg_proofs.py by
// default; sqlalchemy_proofs.py, asyncpg_proofs.py, django_proofs.py,
// aiopg_proofs.py, databases_proofs.py, flask_sqlalchemy_proofs.py) with
// Debian's Python (or PGQ_PYTHON) and returns what it measured. The scripts
// import the fixtures and run their functions. A missing interpreter or a
// missing package is a failure with the install line, never a skip.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PYTHON = process.env.PGQ_PYTHON ?? '/usr/bin/python3';
const INSTALL = 'run the tests with `npm test` (it fetches Debian\'s packages into node_modules/.cache), or apt-get install python3-psycopg python3-psycopg-pool python3-sqlalchemy python3-asyncpg python3-django python3-aiopg python3-databases python3-flask-sqlalchemy';

/** What each proof script imports. */
const SCRIPTS = {
  psycopg: { file: 'psycopg_proofs.py', modules: ['psycopg', 'psycopg_pool'] },
  sqlalchemy: { file: 'sqlalchemy_proofs.py', modules: ['sqlalchemy', 'psycopg2'] },
  asyncpg: { file: 'asyncpg_proofs.py', modules: ['asyncpg'] },
  django: { file: 'django_proofs.py', modules: ['django', 'psycopg2'] },
  aiopg: { file: 'aiopg_proofs.py', modules: ['aiopg'] },
  databases: { file: 'databases_proofs.py', modules: ['databases', 'aiopg', 'asyncpg'] },
  flask: { file: 'flask_sqlalchemy_proofs.py', modules: ['flask_sqlalchemy', 'flask', 'sqlalchemy', 'psycopg2'] },
} as const;
export type ProofScript = keyof typeof SCRIPTS;

export interface ProofOutput<T> {
  python: string;
  /** The versions of the packages the script ran with (psycopg, psycopg_pool, sqlalchemy, asyncpg, django, ...). */
  [pkg: string]: unknown;
  result: T;
}

function run(args: string[]): Promise<{ stdout: string; stderr: string; code: number | null; spawnError?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    // A proof that hangs fails here, in bounded time, with what it printed.
    execFile(PYTHON, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 120_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
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

/** Throws with the install line when a module of the script cannot be imported. */
async function requireModules(modules: readonly string[]): Promise<void> {
  const probe = await run(['-c', `import ${modules.join(', ')}`]);
  if (probe.spawnError) throw new Error(`The Python proofs need ${PYTHON} (${probe.spawnError.code}). Install Debian's packages: ${INSTALL}`);
  if (probe.code !== 0) throw new Error(`The Python proofs need ${modules.join(', ')} importable by ${PYTHON}: ${INSTALL}\n${probe.stderr.trim()}`);
}

/** `extra`: more arguments for the script (the owner URL, for proofs that need a superuser session). */
export async function runProof<T>(name: string, workerUrl: string, script: ProofScript = 'psycopg', ...extra: string[]): Promise<ProofOutput<T>> {
  const { file, modules } = SCRIPTS[script];
  await requireModules(modules);
  const path = fileURLToPath(new URL(`./${file}`, import.meta.url));
  const result = await run([path, name, workerUrl, ...extra]);
  if (result.code !== 0) throw new Error(`proof ${name} failed (exit ${result.code}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as ProofOutput<T>;
}

/** The front end's version comparison: the proof and the rule read versions alike. */
export { compareVersions } from '../../../src/languages/python/versions.ts';
