// The scan at scale: worker threads give the same results in the same order
// as the in-process path, a file over its time budget or memory limit is
// reported as skipped and the scan goes on, discovery honours nested
// .gitignore files.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { discoverFiles, mayIgnoreFiles } from '../../src/scan/discover.ts';
import { scan } from '../../src/scan/scan.ts';
import { runEachWithin, runWithin } from '../../src/scan/budget.ts';
import type { FrontEnd } from '../../src/languages/index.ts';
import { loadedFrontEnds, loadFrontEnds } from '../../src/languages/registry.ts';
import { AnalysisPool } from '../../src/scan/pool.ts';
import { analysisConfig } from '../../src/scan/analysis.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';

const session = "select set_config('app.tenant', $1, false);\n";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-scan-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test('workers and in-process give the same results in sorted file order', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`q/${String(59 - i).padStart(2, '0')}.sql`] = i % 3 === 0 ? session : i % 3 === 1 ? 'BEGIN;\nDISCARD ALL;\nCOMMIT;\n' : 'select 1;\n';
  const dir = tree(files);
  const inProcess = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  const pooled = await scan({ paths: [dir], cwd: dir, concurrency: 2 });
  assert.equal(inProcess.stats.threads, 0);
  assert.equal(pooled.stats.threads, 2, '60 files to parse is past the in-process limit');
  const shape = (r: typeof inProcess) => r.results.map((f) => [f.filePath, f.messages.map((m) => `${m.line}:${m.column} ${m.ruleId}`)]);
  assert.deepEqual(shape(pooled), shape(inProcess));
  const paths = pooled.results.map((r) => r.filePath);
  assert.deepEqual(paths, [...paths].sort());
  assert.equal(pooled.errorCount, 40);
});

test('a small scan runs in-process whatever the concurrency', async () => {
  const dir = tree({ 'a.sql': session });
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 4 });
  assert.equal(result.stats.threads, 0);
  assert.equal(result.errorCount, 1);
});

test('a file over the time budget is reported as skipped, and the rest of the scan goes on', async () => {
  // ~250,000 statements: seconds of analysis, far over a 300 ms budget.
  const big = 'select a, b from t where id = 1;\n'.repeat(250_000) + session;
  const dir = tree({ 'big.sql': big, 'small.sql': session });
  const result = await scan({ paths: [dir], cwd: dir, timeBudget: 300, concurrency: 2, maxFileSize: { sql: 0 } });
  const [bigResult, small] = result.results;
  assert.equal(bigResult.messages.length, 1);
  const [skipped] = bigResult.messages;
  assert.equal(skipped.ruleId, null);
  assert.equal(skipped.severity, 1);
  assert.equal(skipped.messageId, 'skipped');
  assert.match(skipped.message, /^File skipped: analysing it took longer than 300 ms/);
  assert.deepEqual(small.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
  assert.equal(result.stats.skipped, 1);
});

test('a worker batch: the file over its budget alone is skipped; the files before and after it in the batch are analysed', async () => {
  const big = 'select a, b from t where id = 1;\n'.repeat(250_000) + session;
  const pool = new AnalysisPool({ threads: 1, timeBudget: 300, memoryLimit: 512 });
  try {
    const files = [
      { file: 'before.sql', text: session },
      { file: 'big.sql', text: big },
      { file: 'after.sql', text: session },
    ];
    const outcomes = await pool.analyzeBatch(files, analysisConfig(activeRules(), allRules));
    assert.deepEqual(outcomes.map((o) => o.kind), ['done', 'timeout', 'done']);
    for (const outcome of [outcomes[0], outcomes[2]]) {
      assert.ok(outcome.kind === 'done');
      assert.deepEqual(outcome.analysis.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
    }
  } finally {
    await pool.destroy();
  }
});

test('a file that needs more memory than the per-worker limit is skipped', async () => {
  // One statement of 600,000 select-list items: its parse tree alone is far over 96 MB of heap.
  const big = `select ${'1, '.repeat(600_000)}1;\n${session}`;
  const dir = tree({ 'big.sql': big, 'small.sql': session });
  const result = await scan({ paths: [dir], cwd: dir, timeBudget: 0, memoryLimit: 96, concurrency: 1 });
  const [bigResult, small] = result.results;
  assert.equal(bigResult.messages[0]?.messageId, 'skipped', JSON.stringify(bigResult.messages));
  assert.match(bigResult.messages[0].message, /needed more than 96 MB of memory/);
  assert.deepEqual(small.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
});

test('by default a large file goes to a worker with the memory limit, also where the rest is analysed in-process', async () => {
  const big = `select ${'1, '.repeat(600_000)}1;\n${session}`;
  const dir = tree({ 'big.sql': big, 'small.sql': session });
  const result = await scan({ paths: [dir], cwd: dir, timeBudget: 0, memoryLimit: 96 });
  const [bigResult, small] = result.results;
  assert.match(bigResult.messages[0]?.message ?? '', /needed more than 96 MB of memory/, JSON.stringify(bigResult.messages));
  assert.deepEqual(small.messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
  assert.ok(result.stats.threads >= 1, 'a worker took the large file');
});

test('discovery: a .gitignore rules only its own folder and below; a repository root ignores the ones above it', async () => {
  const dir = tree({
    '.gitignore': 'ignored-everywhere.sql\n',
    'a/.gitignore': 'local.sql\n',
    'a/local.sql': session,
    'b/local.sql': session,
    'b/ignored-everywhere.sql': session,
    'repo/.git/HEAD': 'ref: refs/heads/main\n',
    'repo/ignored-everywhere.sql': session,
    'node_modules/x/y.sql': session,
    ...Object.fromEntries(['dist', 'build', 'out', 'coverage'].map((folder) => [`${folder}/generated.sql`, session])),
  });
  const files = (await discoverFiles([dir], { extensions: ['.sql'] })).map((f) => f.slice(dir.length + 1));
  assert.deepEqual(files, ['b/local.sql']);
  const inRepo = (await discoverFiles([join(dir, 'repo')], { extensions: ['.sql'] })).map((f) => f.slice(dir.length + 1));
  assert.deepEqual(inRepo, ['repo/ignored-everywhere.sql']);
});

test('discovery tests files only against a .gitignore whose rules may match them; a folder rule above the scan still ignores its files', async () => {
  const exts = new Set(['.ts', '.py', '.sql']);
  for (const text of ['dist/\n*.log\n.env\ncoverage\n# *.ts\n!keep.ts\n', 'docs/**/*.md\n*.tsbuildinfo\n']) assert.equal(mayIgnoreFiles(text, exts), false, text);
  for (const text of ['*.ts\n', 'generated.py\n', 'src/*\n', '*s\n', 'x.[tj]s\n', '**\n', '*.d.ts\n', 'schema.SQL\n']) assert.equal(mayIgnoreFiles(text, exts), true, text);
  const dir = tree({
    '.gitignore': 'dist/\n*.log\nlegacy\n',
    'a/.gitignore': '*.gen.ts\n',
    'a/x.gen.ts': session,
    'a/y.ts': session,
    'legacy/z.sql': session,
    'b/legacy/w.sql': session,
    'b/v.sql': session,
  });
  const found = (await discoverFiles([dir], { extensions: ['.ts', '.sql'] })).map((f) => f.slice(dir.length + 1));
  assert.deepEqual(found, ['a/y.ts', 'b/v.sql']);
  // Scanning inside a folder the .gitignore above names: its files stay ignored.
  assert.deepEqual(await discoverFiles([join(dir, 'legacy')], { extensions: ['.sql'] }), []);
  // Also when that .gitignore has only folder rules (`old/`), and when the named folder is further up.
  const folders = tree({ '.gitignore': 'old/\n', 'old/deep/q.sql': session, 'new/deep/r.sql': session });
  assert.deepEqual(await discoverFiles([join(folders, 'old', 'deep')], { extensions: ['.sql'] }), []);
  assert.deepEqual(await discoverFiles([join(folders, 'old')], { extensions: ['.sql'] }), []);
  assert.deepEqual(await discoverFiles([join(folders, 'new', 'deep')], { extensions: ['.sql'] }), [join(folders, 'new', 'deep', 'r.sql')]);
});

test('CLI: --concurrency, --time-budget and --cache-location are checked', () => {
  const bad = runCli(['scan', 'fixtures/sql', '--concurrency', 'lots']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--concurrency lots: expected a number of threads \(1 or more\), auto or off/);
  const budget = runCli(['scan', 'fixtures/sql', '--time-budget', '-5']);
  assert.equal(budget.code, 2);
  const ok = runCli(['scan', 'fixtures/sql', '--concurrency', '2', '--time-budget', '0', '--format', 'json']);
  assert.equal(ok.code, 1, ok.stderr);
  const off = runCli(['scan', 'fixtures/sql', '--concurrency', 'off', '--format', 'json']);
  assert.equal(off.stdout, ok.stdout);
});

test('workers that cannot start (a heap too small to load the parsers) fall back to in-process analysis', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 40; i++) files[`${i}.sql`] = session;
  const dir = tree(files);
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 2, memoryLimit: 4 });
  assert.equal(result.errorCount, 40);
  assert.ok(result.results.every((r) => r.messages.length === 1 && r.messages[0].ruleId === 'no-session-tenant-setting'));
});

const spinForever = (): never => {
  for (;;);
};

test('in-process analysis has the time budget too: a file that never finishes is skipped, the scan goes on', { timeout: 60_000 }, async () => {
  // A front end that never returns on one file, registered ahead of the SQL one for this test only
  // (in-process: workers load their own).
  await loadFrontEnds(['sql']);
  const sql = loadedFrontEnds.find((f) => f.language === 'sql')!;
  const stuck: FrontEnd = { ...sql, parse: (text, file, options) => (file.endsWith('a-stuck.sql') ? spinForever() : sql.parse(text, file, options)) };
  loadedFrontEnds.unshift(stuck);
  try {
    const dir = tree({ 'a-stuck.sql': 'x', 'b.sql': session });
    for (const concurrency of ['off', 'auto'] as const) {
      const result = await scan({ paths: [dir], cwd: dir, timeBudget: 300, concurrency });
      const [a, b] = result.results;
      assert.equal(a.messages[0]?.messageId, 'skipped', JSON.stringify(a.messages));
      assert.match(a.messages[0].message, /longer than 300 ms/);
      assert.deepEqual(b.messages.map((m) => m.ruleId), ['no-session-tenant-setting'], `${concurrency}: the next file is analysed`);
      assert.equal(result.stats.skipped, 1);
    }
  } finally {
    loadedFrontEnds.splice(loadedFrontEnds.indexOf(stuck), 1);
  }
});

test('runWithin stops synchronous work at its budget and passes values and errors through', () => {
  assert.deepEqual(runWithin(5000, () => 42), { done: true, value: 42 });
  assert.deepEqual(runWithin(0, () => 'no budget'), { done: true, value: 'no budget' });
  assert.deepEqual(runWithin(50, () => { for (;;); }), { done: false });
  assert.throws(() => runWithin(5000, () => { throw new TypeError('mine'); }), /mine/);
});

test('runEachWithin: one stuck task is not done, every other one is, and none runs past its own budget', () => {
  const spin = (ms: number) => () => {
    const end = performance.now() + ms;
    while (performance.now() < end);
    return ms;
  };
  const stuck = () => {
    for (;;);
  };
  const started: number[] = [];
  const tasks = [spin(1), stuck, spin(1), spin(120), spin(120), spin(1)].map((task, i) => () => {
    started.push(i);
    return task();
  });
  // 300 ms each: the two 120 ms tasks cross the half-way hand-over of a batch, the stuck one uses its budget up.
  const { results, interrupted } = runEachWithin(300, tasks);
  assert.equal(interrupted, true);
  assert.deepEqual(results.map((r) => r.done), [true, false, true, true, true, true]);
  assert.deepEqual(results.filter((r) => r.done).map((r) => (r as { value: number }).value), [1, 1, 120, 120, 1]);
  // Caught under a watchdog it did not start under, it is run once more with what is left of its budget.
  assert.ok(started.filter((i) => i === 1).length <= 2, 'the stuck task ran at most twice');
  assert.deepEqual(runEachWithin(0, [() => 'a', () => 'b']), { results: [{ done: true, value: 'a' }, { done: true, value: 'b' }], interrupted: false });
});

test('runEachWithin with stopAtInterrupt: the run ends at the stopped task, and the tasks after it are left to the caller', () => {
  const stuck = () => {
    for (;;);
  };
  const ran: string[] = [];
  const tasks = [() => ran.push('a'), stuck, () => ran.push('c')];
  // Stopped under the watchdog 'a' started: the stuck task is the caller's to run again, from its start.
  const first = runEachWithin(200, tasks, { stopAtInterrupt: true });
  assert.equal(first.interrupted, true);
  assert.deepEqual(first.results.map((r) => r.done), [true]);
  // Run again under its own watchdog: its budget used up, it is not done, and c is still not run.
  const second = runEachWithin(200, tasks.slice(1), { stopAtInterrupt: true });
  assert.deepEqual([second.interrupted, second.results.map((r) => r.done)], [true, [false]]);
  assert.deepEqual(ran, ['a']);
});

test('in-process only, the files after a stopped one are analysed on a fresh SQL parser, in order, each with its findings', async () => {
  const config = analysisConfig(activeRules({}), allRules);
  const huge = `select 1;\n${"select count(*) from pg_class where relname = 'x';\n".repeat(200_000)}`;
  const files = [
    { file: 'a.sql', text: session },
    { file: 'huge.sql', text: huge },
    { file: 'b.sql', text: session },
    { file: 'c.sql', text: 'selec 1;\n' },
  ];
  const { analyseInProcess } = await import('../../src/scan/analyze-file.ts');
  const { loadSqlParser } = await import('../../src/sql/index.ts');
  await loadSqlParser();
  const outcomes = await analyseInProcess(50, files, config);
  assert.deepEqual(outcomes.map((o) => o.kind), ['done', 'timeout', 'done', 'done']);
  const ruleIds = (i: number) => (outcomes[i].kind === 'done' ? (outcomes[i] as { analysis: { messages: { ruleId: string | null }[] } }).analysis.messages.map((m) => m.ruleId) : []);
  assert.deepEqual(ruleIds(0), ['no-session-tenant-setting']);
  assert.deepEqual(ruleIds(2), ['no-session-tenant-setting'], 'the file after the stopped one is read whole');
  const parseError = outcomes[3].kind === 'done' ? (outcomes[3] as { analysis: { messages: { ruleId: string | null; message: string }[] } }).analysis.messages[0] : undefined;
  assert.match(parseError?.message ?? '', /syntax error at or near "selec"/, 'and the parser still gives its own messages');
});

test('a file whose facts are all empty lists lends none to the project pass; one with a claim does', async () => {
  const dir = tree({ 'plain.sql': 'select 1;\n', 'claim.sql': "update jobs set status = 'running' where id = (select id from jobs where status = 'queued' for update skip locked limit 1) returning id;\n" });
  const result = await scan({ paths: [dir], cwd: dir, keepFacts: true, concurrency: 'off' });
  assert.equal(result.facts?.has(join(dir, 'plain.sql')), false);
  assert.ok(result.facts?.get(join(dir, 'claim.sql'))?.['require-lease-heartbeat'], 'the claim is a fact of the queue rules');
});

test('discovery lists files in the order a sort of their paths gives, once each, whatever the inputs', async () => {
  const names = ['a.ts', 'a/x.ts', 'a-b/y.ts', 'a.b/z.ts', 'A.ts', 'ab.ts', 'a b.ts', 'é.ts', 'z/a.ts', 'a/b/c.ts', 'a/b.ts', 'a/b-c.ts', 'x.sql', 'x/y.sql', 'x-/y.sql'];
  const dir = tree(Object.fromEntries(names.map((name) => [name, '-- x\n'])));
  const expected = names.map((name) => join(dir, name)).sort();
  assert.deepEqual(await discoverFiles([dir], { extensions: ['.ts', '.sql'] }), expected);
  // Overlapping inputs, out of order: still sorted, each file once.
  assert.deepEqual(await discoverFiles([join(dir, 'z'), dir, join(dir, 'a/x.ts'), join(dir, 'a')], { extensions: ['.ts', '.sql'] }), expected);
});
