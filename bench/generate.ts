// A synthetic TypeScript monorepo for the scan benchmark, generated from a
// fixed seed: packages of ordinary service code (comments, setters, offsets:
// the words real code has), about 1% of files with SQL done right, a few
// very large generated files, and copies of every fixture (the planted bugs,
// with their `expect:` comments) in TS, Python and SQL as they exist.
//
// Three slices let one tree serve three sizes: s1 holds a quarter of the
// files, s2 another quarter, s3 the rest, so scanning s1, s1+s2 and all three
// measures 5k, 10k and 20k files.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { prng } from '../test/helpers/prng.ts';

export const GENERATOR_VERSION = 7;

export interface GenerateOptions {
  root: string;
  /** TypeScript files in all (default 20,000). */
  files: number;
  seed: number;
  /** Mean file size in bytes (default 7,500: 150 MB for 20,000 files). */
  meanSize: number;
  /** The repository's fixtures/ folder: its files are planted in the tree. */
  fixtures: string;
}

export interface TreeManifest {
  version: number;
  files: number;
  seed: number;
  meanSize: number;
  slices: string[];
  /** Files per slice (all kinds). */
  sliceFiles: number[];
  bytes: number;
  sqlFiles: number;
  planted: string[];
}


const WORDS = (
  'account order invoice customer payment report user session token cache queue job worker tenant batch export import ' +
  'record entry item line total amount price status state event message notice audit log metric timer retry limit ' +
  'window page cursor filter sort field column value result error reason detail config option setting flag feature ' +
  'profile address region currency rate tax discount coupon cart product stock supplier shipment label document file'
).split(' ');
const VERBS = 'load save find fetch build parse format render create remove apply check compute resolve collect'.split(' ');
/**
 * Words that the rules' triggers contain, with the share of files that hold them in real
 * TypeScript/JavaScript (measured on the 2,300 source files of this repository's node_modules):
 * each generated file gets each line with that probability, so the prefilter sees what it would.
 */
const REAL_WORDS: [number, string][] = [
  [0.06, '  // Update the totals once the batch is written.\n'],
  [0.1, '  // Entries are removed with delete so the key goes too.\n'],
  [0.06, '  // insert keeps the order of the input.\n'],
  [0.05, '  // Options merge left to right: later ones win.\n'],
  [0.03, '  // Release the handle when the caller is done.\n'],
  [0.01, '  // Discard results that arrive after the timeout.\n'],
];
const COMMENTS = [
  'Keep the order stable: callers rely on it.',
  'The value comes from the request and is validated above.',
  'Falls back to the default when nothing is configured.',
  'This runs once per request; keep it cheap.',
  'Errors here are reported to the caller, not swallowed.',
  'Returns a copy so callers cannot change our state.',
  'Cached for the lifetime of the process.',
  'TODO: move this to the shared helpers once the API settles.',
  'Numbers are in minor units (cents) throughout.',
  'The list is usually short, a linear search is fine.',
];
/** Comment lines with "set " (as in "set up", "offset ", "reset "): 14% of real files have one. */
const WORDY = [
  'We set the flag only after the write succeeded.',
  'Reset the counters when the window rolls over.',
  'The offset is counted from the first visible row.',
  'Set up the listeners before the first event arrives.',
];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)];
}

function name(random: () => number, capital = false): string {
  const a = pick(random, WORDS);
  const b = pick(random, WORDS);
  const joined = a + b[0].toUpperCase() + b.slice(1);
  return capital ? joined[0].toUpperCase() + joined.slice(1) : joined;
}

/** One block of ordinary TypeScript (an interface, a class, or functions). */
function block(random: () => number, wordy: boolean): string {
  const kind = random();
  const comment = () => `  // ${wordy && random() < 0.3 ? pick(random, WORDY) : pick(random, COMMENTS)}\n`;
  if (kind < 0.25) {
    const fields = Array.from({ length: 3 + Math.floor(random() * 8) }, () => `  ${name(random)}${random() < 0.3 ? '?' : ''}: ${pick(random, ['string', 'number', 'boolean', 'Date', 'string[]', 'Record<string, number>'])};`);
    return `/** ${pick(random, COMMENTS)} */\nexport interface ${name(random, true)} {\n${fields.join('\n')}\n}\n\n`;
  }
  if (kind < 0.65) {
    const cls = name(random, true);
    const methods = Array.from({ length: 2 + Math.floor(random() * 4) }, () => {
      const verb = pick(random, VERBS);
      const arg = name(random);
      const body = [
        comment(),
        `    const ${arg}List = input.${name(random)}.filter((x) => x.${name(random)} > ${Math.floor(random() * 100)});\n`,
        `    if (${arg}List.length === 0) throw new Error('no ${pick(random, WORDS)} for ' + input.id);\n`,
        `    const total = ${arg}List.reduce((n, x) => n + x.${name(random)}, 0);\n`,
        `    this.cache.set(String(input.id), total);\n`,
        `    return { id: input.id, total, at: new Date(), items: ${arg}List.map((x) => x.id) };\n`,
      ].join('');
      return `  async ${verb}${name(random, true)}(input: { id: number; ${name(random)}: Array<{ id: number; ${name(random)}: number; ${name(random)}: number }> }): Promise<Result> {\n${body}  }\n`;
    });
    const setter = wordy && random() < 0.5 ? `  set ${name(random)}(value: number) {\n    this.cache.set('value', value);\n  }\n` : '';
    return `export class ${cls}Service {\n  private readonly cache = new Map<string, number>();\n\n  constructor(private readonly ${name(random)}: ${name(random, true)}Repository) {}\n\n${methods.join('\n')}${setter}}\n\n`;
  }
  const fn = `${pick(random, VERBS)}${name(random, true)}`;
  return (
    `export function ${fn}(items: readonly number[], limit = ${Math.floor(random() * 50) + 1}): number[] {\n` +
    comment().replace(/^ {2}/, '  ') +
    `  const out: number[] = [];\n  for (const item of items) {\n    if (out.length >= limit) break;\n    if (item % ${2 + Math.floor(random() * 7)} === 0) out.push(item * ${Math.floor(random() * 9) + 1});\n  }\n  return out;\n}\n\n` +
    `export const ${name(random)}Labels: Record<string, string> = {\n${Array.from({ length: 4 }, () => `  ${name(random)}: '${pick(random, COMMENTS)}',`).join('\n')}\n};\n\n`
  );
}

/** SQL done right through node-postgres: a transaction, a local tenant setting, a claim with SKIP LOCKED. */
function sqlBlock(random: () => number): string {
  const table = pick(random, ['invoices', 'orders', 'payments', 'accounts']);
  const variants = [
    `export async function ${pick(random, VERBS)}${name(random, true)}(pool: Pool, tenant: number, id: number) {\n  const client = await pool.connect();\n  try {\n    await client.query('BEGIN');\n    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);\n    const { rows } = await client.query('select id, total from ${table} where id = $1', [id]);\n    await client.query('COMMIT');\n    return rows;\n  } catch (error) {\n    await client.query('ROLLBACK');\n    throw error;\n  } finally {\n    client.release();\n  }\n}\n\n`,
    `export async function claim${name(random, true)}(pool: Pool) {\n  const { rows } = await pool.query(\n    \`update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '5 minutes'\n     where id = (select id from jobs where status = 'queued' and attempts < max_attempts order by id for update skip locked limit 1)\n     returning id, payload\`,\n  );\n  return rows[0];\n}\n\n`,
    `export async function count${name(random, true)}(pool: Pool, since: Date) {\n  const { rows } = await pool.query('select count(*)::int as n from ${table} where created_at > $1', [since]);\n  return rows[0].n as number;\n}\n\n`,
  ];
  return pick(random, variants);
}

function tsFile(random: () => number, size: number, options: { wordy: boolean; sql: boolean }): string {
  const parts = [`import type { Result } from '../types';\nimport { ${name(random)} } from './${name(random)}';\n${options.sql ? "import type { Pool } from 'pg';\n" : ''}\n`];
  let length = parts[0].length;
  let sqlDone = false;
  while (length < size) {
    const next = options.sql && !sqlDone && length > size / 3 ? sqlBlock(random) : block(random, options.wordy);
    if (options.sql && length > size / 3) sqlDone = true;
    parts.push(next);
    length += next.length;
  }
  if (options.sql && !sqlDone) parts.push(sqlBlock(random));
  const words = REAL_WORDS.filter(([share]) => random() < share).map(([, line]) => line);
  if (words.length > 0) parts.splice(1 + Math.floor(random() * (parts.length - 1)), 0, `function notes(): void {\n${words.join('')}}\n\n`);
  return parts.join('');
}

/** A generated client or bundle: one very long file of data and small functions. */
function largeFile(random: () => number, size: number): string {
  const parts = ['// Generated file. Do not edit.\n/* eslint-disable */\n'];
  let length = parts[0].length;
  let i = 0;
  while (length < size) {
    const line = `export const op${i++} = { path: '/v1/${pick(random, WORDS)}/${pick(random, WORDS)}', method: '${pick(random, ['GET', 'POST', 'PUT'])}', id: ${Math.floor(random() * 1e6)} } as const;\n`;
    parts.push(line);
    length += line.length;
  }
  return parts.join('');
}

function fixtureFiles(fixtures: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(sql|ts|tsx|js|mjs|cjs|py)$/.test(entry.name)) found.push(path);
    }
  };
  if (existsSync(fixtures)) walk(fixtures);
  return found.sort();
}

/** Generates the tree unless one with the same parameters is there already. */
export function generateTree(options: GenerateOptions): TreeManifest {
  const manifestPath = join(options.root, 'manifest.json');
  const planted = fixtureFiles(options.fixtures);
  if (existsSync(manifestPath)) {
    const old = JSON.parse(readFileSync(manifestPath, 'utf8')) as TreeManifest & { fixtures?: string[] };
    const same =
      old.version === GENERATOR_VERSION && old.files === options.files && old.seed === options.seed && old.meanSize === options.meanSize &&
      JSON.stringify(old.fixtures) === JSON.stringify(planted.map((f) => relative(options.fixtures, f) + ':' + readFileSync(f, 'utf8').length));
    if (same) return old;
  }
  rmSync(options.root, { recursive: true, force: true });
  mkdirSync(options.root, { recursive: true });
  const random = prng(options.seed);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  write(join(options.root, 'package.json'), JSON.stringify({ name: 'bench-monorepo', private: true, workspaces: ['s*/packages/*'] }, null, 2));
  write(join(options.root, '.gitignore'), 'node_modules/\ndist/\ncoverage/\n');
  // A repository of its own: the .gitignore of the folder it is generated in does not rule it.
  execFileSync('git', ['init', '-q', options.root], { stdio: 'ignore' });

  const perPackage = 100;
  const slices = ['s1', 's2', 's3'];
  const sliceOf = (index: number) => (index < options.files / 4 ? 0 : index < options.files / 2 ? 1 : 2);
  const sliceFiles = [0, 0, 0];
  let bytes = 0;
  let sqlFiles = 0;
  const plantedPaths: string[] = [];
  for (let index = 0; index < options.files; index++) {
    const slice = sliceOf(index);
    const pkg = `pkg-${String(Math.floor(index / perPackage)).padStart(3, '0')}`;
    const pkgRoot = join(options.root, slices[slice], 'packages', pkg);
    if (index % perPackage === 0) {
      write(join(pkgRoot, 'package.json'), JSON.stringify({ name: `@bench/${pkg}`, version: '1.0.0', type: 'module' }, null, 2));
      write(join(pkgRoot, '.gitignore'), 'dist/\n*.log\n');
    }
    const folder = pick(random, ['services', 'handlers', 'lib', 'models', 'jobs', 'util']);
    const path = join(pkgRoot, 'src', folder, `${name(random)}-${index}.ts`);
    let text: string;
    if (random() < 0.001) {
      text = largeFile(random, 200_000 + Math.floor(random() * 300_000));
    } else {
      // Log-normal sizes around the mean, as real files are.
      const gaussian = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      const size = Math.min(80_000, Math.max(400, Math.round(((options.meanSize - 1200) / Math.exp(0.18)) * Math.exp(0.6 * gaussian))));
      const sql = random() < 0.01;
      if (sql) sqlFiles++;
      text = tsFile(random, size, { sql, wordy: random() < 0.12 });
    }
    write(path, text);
    bytes += Buffer.byteLength(text);
    sliceFiles[slice]++;
  }
  // Three copies of every fixture, one per slice: the bugs a scan must find at any size.
  for (const fixture of planted) {
    for (const [slice, sliceName] of slices.entries()) {
      const path = join(options.root, sliceName, 'planted', relative(options.fixtures, fixture));
      const text = readFileSync(fixture, 'utf8');
      write(path, text);
      bytes += Buffer.byteLength(text);
      sliceFiles[slice]++;
      plantedPaths.push(relative(options.root, path));
    }
  }
  const manifest: TreeManifest & { fixtures: string[] } = {
    version: GENERATOR_VERSION,
    files: options.files,
    seed: options.seed,
    meanSize: options.meanSize,
    slices,
    sliceFiles,
    bytes,
    sqlFiles,
    planted: plantedPaths,
    fixtures: planted.map((f) => relative(options.fixtures, f) + ':' + readFileSync(f, 'utf8').length),
  };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return manifest;
}
