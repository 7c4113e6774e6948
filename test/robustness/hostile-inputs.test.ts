// Bad input and hostile trees (issue #23): each costs at most one message for
// the file, never the report, a hang or gigabytes. Every case runs the real
// CLI (or the scan API) on a generated temp tree; a hang is caught by the
// child's bound (test/helpers/cli.ts), not by a timing assertion.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import ignore from 'ignore';
import { globProblem } from '../../src/config/globs.ts';
import { LineIndex } from '../../src/model/lines.ts';
import plugin from '../../src/eslint/index.ts';
import { plainLine } from '../../src/report/stylish.ts';
import { UsageError } from '../../src/scan/discover.ts';
import { indexFileRules } from '../../src/scan/gitignore-index.ts';
import { CONFIG_MAX_BYTES, decodeText, FileReadError, readConfigText, readRegularFile, SOURCE_MAX_BYTES } from '../../src/read-file.ts';
import { scan } from '../../src/scan/scan.ts';
import { CHILD_TIMEOUT_MS, repoRoot, runCli } from '../helpers/cli.ts';
import { prng } from '../helpers/prng.ts';
import { git, project } from '../cli/project.ts';

const TS_JOB = [
  "import { Pool } from 'pg';",
  'const pool = new Pool();',
  'export async function job(t: string) {',
  '  const c = await pool.connect();',
  '  await c.query("select set_config(\'app.tenant\', $1, false)", [t]);',
  '  c.release();',
  '}',
  '',
].join('\n');
const PY_JOB = ['import psycopg', 'def job(conn, t):', '    conn.execute("select set_config(\'app.tenant\', %s, false)", [t])', ''].join('\n');
const SQL_JOB = "select set_config('app.tenant', '1', false);\n";

interface Message {
  ruleId: string | null;
  line: number;
  column: number;
  message: string;
  fatal?: boolean;
}

function json(stdout: string): { filePath: string; messages: Message[] }[] {
  return JSON.parse(stdout) as { filePath: string; messages: Message[] }[];
}

/** rule@line of every finding, by file name. */
function findings(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of json(stdout)) if (r.messages.length) out[r.filePath.split('/').pop()!] = r.messages.map((m) => `${m.ruleId?.replace(/^pgq\//, '') ?? 'file'}@${m.line}`);
  return out;
}

/** One line on stderr, exit 2, no stack. */
function oneLineUsageError(run: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
  assert.doesNotMatch(run.stderr, /\n\s+at |internal error/);
  assert.match(run.stderr, pattern);
}

function mkfifo(path: string): void {
  const made = spawnSync('mkfifo', [path]);
  assert.equal(made.status, 0, 'mkfifo');
}

test('read-file: a FIFO, a device behind a link and a folder are refused at once; config files are capped', () => {
  const dir = project({ 'big.json': 'x'.repeat(CONFIG_MAX_BYTES + 1), 'ok.json': '\uFEFF{"a":1}' });
  mkfifo(join(dir, 'fifo'));
  symlinkSync('/dev/zero', join(dir, 'zero'));
  for (const [name, reason] of [
    ['fifo', /not a regular file \(a FIFO\)/],
    ['zero', /not a regular file \(a device\)/],
    ['.', /not a regular file \(a folder\)/],
  ] as const) {
    assert.throws(
      () => readRegularFile(join(dir, name)),
      (error: unknown) => error instanceof FileReadError && error.code === 'ENOTFILE' && reason.test(error.message),
    );
  }
  assert.throws(() => readConfigText(join(dir, 'big.json')), (error: unknown) => error instanceof FileReadError && error.code === 'EFBIG');
  assert.equal(readConfigText(join(dir, 'ok.json')), '{"a":1}', 'the BOM is dropped');
});

test('package.json, .gitignore, tsconfig.json and requirements.txt as links to /dev/zero or FIFOs: the findings, at once', () => {
  for (const kind of ['zero', 'fifo']) {
    const dir = project({ 'a.ts': TS_JOB, 'a.py': PY_JOB, 'lib/b.ts': TS_JOB });
    git(dir, 'init', '-q');
    for (const name of ['package.json', '.gitignore', 'tsconfig.json', 'requirements.txt', 'lib/.gitignore', 'lib/package.json']) {
      if (kind === 'zero') symlinkSync('/dev/zero', join(dir, name));
      else mkfifo(join(dir, name));
    }
    // A FIFO with a source extension, named on the command line.
    mkfifo(join(dir, 'named.sql'));
    for (const args of [['.'], ['.', '--cache'], ['lib'], ['named.sql', 'a.ts']]) {
      const run = runCli(['scan', ...args, '--format', 'json'], { cwd: dir });
      const where = `${kind}: scan ${args.join(' ')}`;
      assert.equal(run.code, 1, `${where}: ${run.stderr}`);
      const found = findings(run.stdout);
      if (args[0] === 'lib') assert.deepEqual(found, { 'b.ts': ['no-session-tenant-setting@5'] }, where);
      else if (args[0] === 'named.sql') assert.deepEqual(found, { 'a.ts': ['no-session-tenant-setting@5'] }, where);
      else assert.deepEqual(found, { 'a.py': ['no-session-tenant-setting@3'], 'a.ts': ['no-session-tenant-setting@5'], 'b.ts': ['no-session-tenant-setting@5'] }, where);
    }
  }
});

test('a sparse source file of 8 GB: one skipped warning, nothing read', async () => {
  const dir = project({ 'a.sql': SQL_JOB });
  const huge = join(dir, 'dump.sql');
  writeFileSync(huge, '');
  truncateSync(huge, 8 * 1024 ** 3);
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  const dump = results.find((r) => r.filePath === huge);
  assert.deepEqual(
    dump?.messages.map((m) => `${m.messageId}: ${m.severity}: ${m.message}`),
    [`skipped: 1: File skipped: it is larger than ${SOURCE_MAX_BYTES / 1024 / 1024} MB (8192 MB), too large to analyse, so nothing is reported for it. Leave the file out with ignores.`],
  );
  assert.ok(process.memoryUsage().rss < 2 * 1024 ** 3, 'nothing like 8 GB was read');
  assert.equal(results.find((r) => r.filePath.endsWith('a.sql'))?.messages.length, 1);
});

test('a backtracking glob or one over 65,536 characters in ignores: one line naming the key, exit 2', () => {
  for (const [glob, pattern] of [
    ['**/*a*a*a*a*b', /ignores\[0\]: .* has 6 wildcards \(\* or \*\*\); at most 3/],
    ['+(a|aa)b', /ignores\[0\]: .* repeats a group/],
    ['x'.repeat(70_000), /ignores\[0\]: a glob of 70000 characters/],
  ] as const) {
    const dir = project({ 'a.sql': SQL_JOB, 'pgq-audit.config.json': JSON.stringify({ ignores: [glob] }) });
    oneLineUsageError(runCli(['scan', '.'], { cwd: dir }), pattern);
  }
  // Through the API (no config file): the same refusal, as a UsageError.
  const dir = project({ 'a.sql': SQL_JOB });
  return assert.rejects(scan({ paths: [dir], ignores: ['*a*a*a*a*b'] }), UsageError);
});

test('globs: the usual shapes pass; a wildcard count or an exponential group fails', () => {
  for (const ok of ['**/*.ts', 'src/**/__tests__/**/*.ts', '**/*.{ts,tsx}', '!(foo)*.ts', '[a-z]*.sql', '**/migrations/**/*.sql', 'a\\*b\\*c\\*d*']) assert.equal(globProblem(ok), undefined, ok);
  for (const bad of ['*a*a*a*b', '**/x/**/y/**/z/**', '*(a|b)c', '+(+(a))']) assert.ok(globProblem(bad), bad);
});

test('a large .gitignore: the file index ignores exactly what the ignore package ignores', () => {
  const random = prng(23);
  const patterns = ['*.log', 'generated-*.ts', '**/tmp/*.ts', 'src/**/gen.ts', '/root.ts', 'a?c.ts', '*.{ts,js}', 'foo', 'Bar.TS', 'x/*', '*gen*', '[ab].ts', '\\#x.ts', 'docs/**', '**/fix/**/*.sql', 'cache*', 'dir/', 'lib/*.js', '*.d.ts', 'deep/a/b/*.ts', 'src/*/x.ts', '**/*.sql', 'a*b*c.ts'];
  const names = ['a.ts', 'abc.ts', 'generated-1.ts', 'gen.ts', 'root.ts', 'foo', 'bar.ts', 'x.sql', 'ab.ts', '#x.ts', 'cache1.py', 'q.d.ts', 'xgenx.py', 'b.ts', 'z.log', 'x.ts', 'aXbYc.ts'];
  const folders = ['', 'src/', 'tmp/', 'src/tmp/', 'x/', 'docs/', 'fix/', 'a/fix/b/', 'lib/', 'deep/a/b/', 'foo/', 'src/x/', 'src/q/'];
  let checked = 0;
  for (let trial = 0; trial < 200; trial++) {
    const chosen = patterns.filter(() => random() < 0.3);
    const text = [...chosen, ...Array.from({ length: 200 }, (_, i) => `filler-${i}.zz`)].join('\n');
    const rules = ignore().add(text);
    const index = indexFileRules(text);
    assert.ok(index, 'indexed');
    for (const folder of folders) {
      // A file below an ignored folder is the walk's to leave out: the folder is not entered.
      const parts = folder.split('/').filter(Boolean);
      if (parts.some((_, i) => rules.ignores(`${parts.slice(0, i + 1).join('/')}/`))) continue;
      for (const name of names) {
        checked++;
        assert.equal(index.ignores(folder + name, name), rules.ignores(folder + name), `${JSON.stringify(chosen)}: ${folder}${name}`);
      }
    }
  }
  assert.ok(checked > 20_000, `${checked} checks`);
  assert.equal(indexFileRules('a\n!b\n' + 'c\n'.repeat(300)), undefined, 'negations: the order of all rules decides');
});

test('a 10,000-rule .gitignore: the scan leaves out what it names and keeps the rest', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) files[`src/d${i % 10}/f${i}.sql`] = SQL_JOB;
  const rules: string[] = [];
  for (let i = 0; i < 10_000; i++) rules.push(i % 4 === 0 ? `f${i}.sql` : i % 4 === 1 ? `build-${i}/` : i % 4 === 2 ? `**/d${i % 7}x/*.sql` : `cache${i}.*`);
  files['.gitignore'] = `${rules.join('\n')}\n`;
  const dir = project(files);
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  const scanned = results.map((r) => r.filePath.slice(dir.length + 1)).sort();
  const expected = Object.keys(files)
    .filter((f) => f.endsWith('.sql') && Number(/f(\d+)/.exec(f)![1]) % 4 !== 0)
    .sort();
  assert.deepEqual(scanned, expected);
});

test('--concurrency 1000 starts no more workers than there are cores', async () => {
  const dir = project(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.sql`, SQL_JOB])));
  const { stats, results } = await scan({ paths: [dir], concurrency: 1000, inProcessFiles: 0 });
  assert.equal(stats.threads, Math.min(1000, availableParallelism()));
  assert.equal(results.filter((r) => r.messages.length === 1).length, 8);
});

test('an unwritable --cache-location or a cache.json that is a folder: one warning, the report stands', () => {
  const dir = project({ 'a.sql': SQL_JOB, 'file.txt': 'x' });
  mkdirSync(join(dir, 'cache', 'cache.json'), { recursive: true });
  for (const location of ['file.txt/cache', 'cache/']) {
    const run = runCli(['scan', 'a.sql', '--cache', '--cache-location', location, '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(findings(run.stdout), { 'a.sql': ['no-session-tenant-setting@1'] });
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, /^pgq-audit: warning: could not write the cache .*; the scan ran without it/);
  }
});

test('a cache entry of the wrong shape is read again, not trusted', async () => {
  const dir = project({ 'a.sql': SQL_JOB });
  const cacheLocation = join(dir, 'cache.json');
  const first = await scan({ paths: [dir], cache: true, cacheLocation, concurrency: 'off' });
  assert.equal(first.errorCount, 1);
  const stored = JSON.parse(readFileSync(cacheLocation, 'utf8'));
  const file = join(dir, 'a.sql');
  for (const broken of [{ ...stored.entries[file], analysis: { messages: 'x' } }, { ...stored.entries[file], analysis: { messages: [{ ruleId: 1 }] } }, 7, null]) {
    writeFileSync(cacheLocation, JSON.stringify({ ...stored, entries: { [file]: broken } }));
    const again = await scan({ paths: [dir], cache: true, cacheLocation, concurrency: 'off' });
    assert.equal(again.stats.cached, 0, JSON.stringify(broken));
    assert.deepEqual(
      again.results[0].messages.map((m) => `${m.ruleId}@${m.line}`),
      ['no-session-tenant-setting@1'],
    );
  }
  const rewritten = JSON.parse(readFileSync(cacheLocation, 'utf8'));
  assert.ok(Array.isArray(rewritten.entries[file].analysis.messages), 'the entry is written anew');
});

test("lone CR, CRLF, U+2028 and U+2029: the scan's lines are ESLint's", async () => {
  const breaks = ['\r', '\u2028', '\r\n', '\r', '\u2029', '\n'];
  const head = ["import { Pool } from 'pg';", '// a', '// b', 'const pool = new Pool();', '// c', 'export async function job(t: string) {'];
  const text = head.map((line, i) => line + breaks[i]).join('') + '  await pool.query("select set_config(\'app.tenant\', $1, false)", [t]);\n}\n';
  const dir = project({ 'lines.ts': text });
  const eslint = new ESLint({ cwd: dir, overrideConfigFile: true, overrideConfig: [...plugin.configs.recommended] as never, ignore: false });
  const [linted] = await eslint.lintFiles([join(dir, 'lines.ts')]);
  const fromEslint = linted.messages.filter((m) => m.ruleId?.startsWith('pgq/')).map((m) => `${m.line}:${m.column}-${m.endLine}:${m.endColumn}`);
  assert.deepEqual(fromEslint, ['7:28-7:38']);
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  assert.deepEqual(
    results[0].messages.map((m) => `${m.line}:${m.column}-${m.endLine}:${m.endColumn}`),
    fromEslint,
  );
  // SQL and Python files are counted the same way.
  // (U+2028 is no whitespace to PostgreSQL: it stands in a comment.)
  const sql = project({ 'a.sql': `select 1;\rselect 2;\r\n/* \u2028 */\n${SQL_JOB}`, 'a.py': PY_JOB.replace(/\n/g, '\r') });
  const scanned = await scan({ paths: [sql], concurrency: 'off' });
  assert.deepEqual(
    scanned.results.map((r) => r.messages.map((m) => `${r.filePath.split('/').pop()}:${m.line}`)).flat(),
    ['a.py:3', 'a.sql:5'],
  );
  const index = new LineIndex('a\rb\r\nc\u2028d\u2029e\nf');
  assert.deepEqual([0, 2, 5, 7, 9, 11].map((offset) => index.position(offset).line), [1, 2, 3, 4, 5, 6]);
});

test('a UTF-8 BOM and UTF-16 files: the findings, at the lines and columns of the text', async () => {
  const dir = project({});
  writeFileSync(join(dir, 'bom.py'), `\uFEFF${PY_JOB}`);
  writeFileSync(join(dir, 'bom.sql'), `\uFEFF${SQL_JOB}`);
  writeFileSync(join(dir, 'utf16le.sql'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`select 1;\n${SQL_JOB}`, 'utf16le')]));
  const be = Buffer.from(`select 1;\n${SQL_JOB}`, 'utf16le');
  be.swap16();
  writeFileSync(join(dir, 'utf16be.sql'), Buffer.concat([Buffer.from([0xfe, 0xff]), be]));
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  assert.deepEqual(
    Object.fromEntries(results.map((r) => [r.filePath.split('/').pop(), r.messages.map((m) => `${m.ruleId}@${m.line}:${m.column}`)])),
    {
      'bom.py': ['no-session-tenant-setting@3:26'],
      'bom.sql': ['no-session-tenant-setting@1:8'],
      'utf16be.sql': ['no-session-tenant-setting@2:8'],
      'utf16le.sql': ['no-session-tenant-setting@2:8'],
    },
  );
  assert.equal(decodeText(Buffer.from([0xef, 0xbb, 0xbf, 0x61])), 'a');
});

test('nesting past the stack (1,000 nested CASE, 1,500 nested arrow functions): the other findings survive', async () => {
  const cases = `${'case when x then '.repeat(1000)}1${' end'.repeat(1000)}`;
  const dir = project({
    'case.sql': `${SQL_JOB}select ${cases};\nset app.tenant = '2';\n`,
    'arrows.ts': `${TS_JOB}export const f = ${'() => '.repeat(1500)}1;\n`,
  });
  const { results } = await scan({ paths: [dir], concurrency: 'off' });
  assert.deepEqual(
    Object.fromEntries(results.map((r) => [r.filePath.split('/').pop(), r.messages.map((m) => `${m.ruleId}@${m.line}`)])),
    { 'arrows.ts': ['no-session-tenant-setting@5'], 'case.sql': ['no-session-tenant-setting@1', 'no-session-tenant-setting@3'] },
  );
});

test('a folder named on the command line that cannot be read: one line, exit 2', () => {
  const dir = project({ 'locked/a.sql': SQL_JOB });
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'locked'), 0o000);
  try {
    // root reads any folder: the CLI runs as nobody there.
    const asRoot = process.getuid?.() === 0;
    const run = spawnSync(process.execPath, [join(repoRoot, 'bin/pgq-audit.js'), 'scan', 'locked'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: CHILD_TIMEOUT_MS,
      env: { ...process.env, NO_COLOR: '1' },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    oneLineUsageError({ code: run.status, stderr: run.stderr }, /^pgq-audit: locked: cannot read the folder \(EACCES\)/);
  } finally {
    chmodSync(join(dir, 'locked'), 0o755);
  }
});

test('rule option keys constructor, toString and __proto__ are unknown options', () => {
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const config = `{"rules": {"no-session-tenant-setting": {"severity": "error", "options": {"${key}": 1}}}}`;
    const dir = project({ 'a.sql': SQL_JOB, 'pgq-audit.config.json': config });
    oneLineUsageError(runCli(['scan', '.'], { cwd: dir }), new RegExp(`unknown option '${key}'`));
  }
});

test('a baseline of the wrong shape, or --write-baseline to a folder: one line, exit 2', () => {
  const dir = project({ 'a.sql': SQL_JOB, 'folder/x': '' });
  for (const [body, pattern] of [
    ['{"version":1,"findings":[1]}', /findings\[0\] is not a finding/],
    ['{"version":1,"findings":[{"rule":"x","file":null,"fingerprint":"f","line":1,"message":""}]}', /findings\[0\] is not a finding/],
    ['[]', /not a pgq-audit baseline/],
  ] as const) {
    writeFileSync(join(dir, 'baseline.json'), body);
    oneLineUsageError(runCli(['scan', 'a.sql', '--baseline', 'baseline.json'], { cwd: dir }), pattern);
  }
  oneLineUsageError(runCli(['scan', 'a.sql', '--baseline', 'folder'], { cwd: dir }), /--baseline folder: cannot read it: not a regular file/);
  oneLineUsageError(runCli(['scan', 'a.sql', '--write-baseline', 'folder'], { cwd: dir }), /--write-baseline folder: cannot write it: EISDIR/);
});

test('stylish: a file name or message cannot start a GitHub Actions workflow command', () => {
  const dir = project({ '::error title=x::owned.sql': SQL_JOB, 'line\n::warning ::two.sql': SQL_JOB });
  const run = runCli(['scan', '.'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  const lines = run.stdout.split('\n');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('::')),
    [],
    run.stdout,
  );
  assert.ok(lines.includes('%3A:error title=x::owned.sql'), run.stdout);
  assert.ok(lines.includes('line%0A::warning ::two.sql'), run.stdout);
  assert.equal(plainLine('src/a.sql'), 'src/a.sql', 'ordinary names are left as they are');
  assert.equal(plainLine('100%.sql'), '100%.sql');
});
