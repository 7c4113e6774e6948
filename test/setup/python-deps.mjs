// The Python proofs drive Debian's own packages (psycopg 3, psycopg_pool,
// psycopg2, SQLAlchemy, asyncpg, Django, aiopg, databases, Flask-SQLAlchemy; pip and flit_core to install
// python/) with Debian's /usr/bin/python3. On a
// fresh machine they are not installed, and the test command must not need
// root: the .deb files are fetched with `apt-get download` and unpacked with
// `dpkg -x` into a cache under node_modules/.cache, which PYTHONPATH points
// at. When the interpreter already imports everything (the packages are
// installed system-wide), nothing is fetched.
//
// `node test/setup/python-deps.mjs` prints the PYTHONPATH to use (empty when
// none is needed); test/run.mjs imports `pythonPath()`.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PYTHON = process.env.PGQ_PYTHON ?? '/usr/bin/python3';

/** Debian package -> the module it provides (checked after unpacking). */
export const PACKAGES = {
  'python3-psycopg': 'psycopg',
  'python3-psycopg-pool': 'psycopg_pool',
  'python3-typing-extensions': 'typing_extensions',
  'python3-psycopg2': 'psycopg2',
  'python3-sqlalchemy': 'sqlalchemy',
  'python3-greenlet': 'greenlet',
  'python3-asyncpg': 'asyncpg',
  'python3-django': 'django',
  'python3-asgiref': 'asgiref',
  'python3-sqlparse': 'sqlparse',
  'python3-tz': 'pytz',
  // aiopg 1.4.0 (psycopg2 in asynchronous mode) and what it imports.
  'python3-aiopg': 'aiopg',
  'python3-async-timeout': 'async_timeout',
  // databases (encode) 0.7.0, over SQLAlchemy 1.4 and the asyncpg or aiopg backend.
  'python3-databases': 'databases',
  // Flask-SQLAlchemy 3.0 on Flask 2.2 (db.session, a scoped_session over SQLAlchemy 1.4) and what Flask imports.
  'python3-flask-sqlalchemy': 'flask_sqlalchemy',
  'python3-flask': 'flask',
  'python3-werkzeug': 'werkzeug',
  'python3-jinja2': 'jinja2',
  'python3-markupsafe': 'markupsafe',
  'python3-itsdangerous': 'itsdangerous',
  'python3-click': 'click',
  // `pip install ./python` offline (test/python-guard/package.test.ts): pip, and flit_core, python/'s build backend.
  'python3-pip': 'pip',
  flit: 'flit_core',
};

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modules = Object.values(PACKAGES);
const key = createHash('sha256').update(Object.keys(PACKAGES).join(' ')).digest('hex').slice(0, 12);
const CACHE = join(ROOT, 'node_modules', '.cache', 'pgq-audit-python', key);
const SITE = join(CACHE, 'root', 'usr', 'lib', 'python3', 'dist-packages');

/** Bounds on the child processes: the network fetch may be slow, never endless. */
const PROBE_TIMEOUT_MS = 60_000;
const APT_TIMEOUT_MS = 10 * 60_000;

function imports(pythonPath) {
  const env = { ...process.env, PYTHONPATH: pythonPath ?? '' };
  const probe = spawnSync(PYTHON, ['-c', `import ${modules.join(', ')}`], { env, encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  if (probe.error) throw new Error(`The Python proofs need ${PYTHON}: ${probe.error.message}`);
  return probe.status === 0 ? undefined : probe.stderr.trim().split('\n').pop();
}

function apt(args, options, cwd) {
  const result = spawnSync('apt-get', [...options, ...args], { cwd, encoding: 'utf8', timeout: APT_TIMEOUT_MS });
  if (result.error) throw new Error(`apt-get ${args[0]}: ${result.error.message}`);
  return result;
}

/** `apt-get download` into `dir`; where the machine has no package lists, fetch them into a private state dir first (no root needed). */
function download(dir) {
  const names = Object.keys(PACKAGES);
  let result = apt(['download', ...names], [], dir);
  if (result.status === 0) return;
  const state = join(CACHE, 'apt');
  mkdirSync(join(state, 'lists', 'partial'), { recursive: true });
  mkdirSync(join(state, 'archives', 'partial'), { recursive: true });
  const own = ['-o', `Dir::State::Lists=${join(state, 'lists')}`, '-o', `Dir::Cache=${state}`, '-o', 'Debug::NoLocking=1'];
  const update = apt(['update', '-qq'], own, dir);
  if (update.status !== 0) throw new Error(`apt-get update failed:\n${update.stderr}`);
  result = apt(['download', ...names], own, dir);
  if (result.status !== 0) throw new Error(`apt-get download ${names.join(' ')} failed:\n${result.stderr}`);
}

/** The PYTHONPATH the proofs need: '' when the interpreter has every package already. */
export function pythonPath({ log = () => {} } = {}) {
  if (imports('') === undefined) return '';
  if (existsSync(join(CACHE, 'done')) && imports(SITE) === undefined) return SITE;
  log(`Fetching Debian's Python packages for the proofs into ${CACHE} ...`);
  rmSync(CACHE, { recursive: true, force: true });
  const debs = join(CACHE, 'debs');
  const staging = join(CACHE, 'staging');
  mkdirSync(debs, { recursive: true });
  download(debs);
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) execFileSync('dpkg', ['-x', join(debs, deb), staging], { timeout: PROBE_TIMEOUT_MS });
  renameSync(staging, join(CACHE, 'root'));
  const missing = imports(SITE);
  if (missing !== undefined) throw new Error(`Unpacked ${Object.keys(PACKAGES).join(', ')}, but ${PYTHON} still cannot import them: ${missing}`);
  writeFileSync(join(CACHE, 'done'), new Date().toISOString() + '\n');
  return SITE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(pythonPath({ log: (m) => process.stderr.write(m + '\n') }) + '\n');
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}
