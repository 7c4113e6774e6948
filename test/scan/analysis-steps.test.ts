// The deterministic bound of a file's analysis (src/work.ts): steps of work
// are counted in the loops that can blow up, and a file over the bound is
// skipped with a message naming it and the option. The count depends on the
// input and the config only: the same report on a machine under load, and the
// same count for a file whichever file read a shared imported module first.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { runCli } from '../helpers/cli.ts';
import { formatJson } from '../../src/report/json.ts';
import { analysisConfig } from '../../src/scan/analysis.ts';
import { scanFileText } from '../../src/scan/analyze-file.ts';
import { scan, type ScanOptions } from '../../src/scan/scan.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules } from '../../rules/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { DEFAULT_MAX_ANALYSIS_STEPS, endWork, isolatedWork, startWork, work, WorkLimitExceeded } from '../../src/work.ts';

const tsLeak = "await pool.query(\"select set_config('app.tenant', $1, false)\", [tenant]);\n";
const sqlLeak = "select set_config('app.tenant', $1, false);\n";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-steps-'));
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
    utimesSync(join(dir, name), hourAgo, hourAgo);
  }
  return dir;
}

/** A worker module whose job is `count` statements long: its walk takes some steps per statement. */
function longJob(count: number): string {
  let out = "import { Pool } from 'pg';\nconst pool = new Pool();\nexport async function job(tenant: string) {\n  let n = 0;\n";
  for (let i = 0; i < count; i++) out += `  n = n + ${i};\n`;
  return `${out}  ${tsLeak}}\n`;
}

const kinds = (stdout: string) => (JSON.parse(stdout) as { messages: { ruleId: string | null; messageId?: string }[] }[]).map((r) => r.messages.map((m) => m.ruleId ?? m.messageId));

function burnCpu(threads: number): () => Promise<void> {
  const workers = Array.from({ length: threads }, () => new Worker('for (;;) {}', { eval: true }));
  return async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
}

test('the counter: work() throws once past the bound, no bound outside an analysis or at 0; isolated work counts apart and throws on its own bound', () => {
  startWork(3);
  work(3);
  assert.throws(() => work(), (error: unknown) => error instanceof WorkLimitExceeded && /analysis exceeded 3 steps/.test((error as Error).message));
  endWork();
  for (let i = 0; i < 10; i++) work(1_000_000);
  startWork(0);
  work(10 * DEFAULT_MAX_ANALYSIS_STEPS);
  endWork();
  startWork(5);
  work(4);
  // The shared work's own steps do not add to the file's, and the file's do not count against it.
  assert.equal(
    isolatedWork(() => {
      work(5);
      return 'done';
    }),
    'done',
  );
  work(1);
  assert.throws(() => isolatedWork(() => work(6)), WorkLimitExceeded);
  // Caught inside the task, the bound passed still counts.
  assert.throws(
    () =>
      isolatedWork(() => {
        try {
          work(6);
        } catch {
          // swallowed
        }
      }),
    WorkLimitExceeded,
  );
  assert.throws(() => work(), WorkLimitExceeded);
  endWork();
});

test('a file over the step bound is skipped with a message naming the bound and the option; the same report on a machine under load; the wall clock is not what decides', { timeout: 120_000 }, async () => {
  const dir = tree({ 'long.ts': longJob(400), 'short.ts': longJob(2), 'job.sql': sqlLeak });
  const options: ScanOptions = { paths: [dir], cwd: dir, concurrency: 'off', maxAnalysisSteps: 500 };
  const idle = await scan(options);
  assert.deepEqual(
    idle.results.map((r) => r.messages.map((m) => m.ruleId ?? m.messageId)),
    [['no-session-tenant-setting'], ['skipped'], ['no-session-tenant-setting']],
  );
  const [skip] = idle.results[1].messages;
  assert.equal(skip.severity, 1);
  assert.equal(skip.fatal, undefined);
  assert.match(skip.message, /^File skipped: its analysis exceeded 500 steps \(the --max-analysis-steps bound: steps of work counted, so the same on every run whatever the machine's load\)/);
  assert.match(skip.message, /maxAnalysisSteps in the config/);
  assert.equal(idle.stats.skipped, 1);
  // The default bound analyses it.
  const unbounded = await scan({ ...options, maxAnalysisSteps: undefined });
  assert.deepEqual(unbounded.results[1].messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
  assert.deepEqual((await scan({ ...options, maxAnalysisSteps: 0 })).results[1].messages.map((m) => m.ruleId), ['no-session-tenant-setting'], '0 is no bound');

  const stop = burnCpu(3);
  let loaded;
  try {
    loaded = await scan(options);
    // On worker threads too.
    const pooled = await scan({ ...options, concurrency: 2, inProcessFiles: 0 });
    assert.equal(formatJson(pooled.results), formatJson(idle.results));
  } finally {
    await stop();
  }
  assert.equal(formatJson(loaded.results), formatJson(idle.results));
});

test('an imported module walked once per process counts apart: a file gets the same count, and the same report, whether or not another file read the module first', async () => {
  await loadSqlParser();
  // The module's walk (a pool and a long setup) takes far more steps than the file's own.
  let db = "import { Pool } from 'pg';\nexport const pool = new Pool();\nlet n = 0;\n";
  for (let i = 0; i < 300; i++) db += `n = n + ${i};\n`;
  const worker = `import { pool } from './db';\nexport async function job(tenant: string) {\n  ${tsLeak}}\n`;
  const dir = tree({ 'db.ts': db, 'a.ts': worker, 'b.ts': worker.replace('job', 'other') });
  const config = { ...analysisConfig(activeRules(), rules), maxAnalysisSteps: 300 };
  const a = join(dir, 'a.ts');
  const b = join(dir, 'b.ts');
  // b first: it walks db.ts; then a reads the walk b left. Both under the bound, whatever the order.
  const first = scanFileText(b, readFileSync(b, 'utf8'), config);
  const second = scanFileText(a, readFileSync(a, 'utf8'), config);
  assert.deepEqual(first.messages.map((m) => m.ruleId ?? m.messageId), ['no-session-tenant-setting']);
  assert.deepEqual(second.messages.map((m) => m.ruleId ?? m.messageId), ['no-session-tenant-setting']);
  // db.ts scanned as a file of its own is over the bound.
  assert.deepEqual(
    scanFileText(join(dir, 'db.ts'), db, config).messages.map((m) => m.messageId),
    ['skipped'],
  );
});

test('the config\'s "maxAnalysisSteps" sets the bound; --max-analysis-steps wins; a bad value is a config or usage error naming it (exit 2)', () => {
  const dir = tree({ 'long.ts': longJob(400), 'pgq-audit.config.json': JSON.stringify({ maxAnalysisSteps: 500 }) });
  const bounded = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.deepEqual(kinds(bounded.stdout), [['skipped']], bounded.stderr);
  const option = runCli(['scan', '.', '--format', 'json', '--max-analysis-steps', '0'], { cwd: dir });
  assert.deepEqual(kinds(option.stdout), [['pgq/no-session-tenant-setting']], option.stderr);
  const usage = runCli(['scan', '.', '--max-analysis-steps', 'many'], { cwd: dir });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--max-analysis-steps many: expected a whole number of steps/);
  writeFileSync(join(dir, 'pgq-audit.config.json'), JSON.stringify({ maxAnalysisSteps: -1 }));
  const bad = runCli(['scan', '.'], { cwd: dir });
  assert.equal(bad.code, 2, bad.stdout);
  assert.match(bad.stderr, /pgq-audit\.config\.json: maxAnalysisSteps: expected a whole number of steps/);
});
