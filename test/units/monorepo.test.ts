// A monorepo gives each service the findings it gets alone, whether scanned
// service by service or from the root: another service's heartbeat and dead
// sweep are facts about another queue. And within one unit, `ledger.jobs`
// and `public.jobs` are two tables.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { git, parseJson } from '../cli/project.ts';

const fixture = join(repoRoot, 'fixtures/projects/monorepo-services');
const services = ['services/billing', 'services/mailer', 'services/ledger'];

/** `file:line rule` of every finding of a scan of `paths` (relative to `root`), in order. */
async function findings(root: string, paths: string[]): Promise<string[]> {
  const { results } = await scan({ paths: paths.map((p) => join(root, p)), cwd: root, concurrency: 'off' });
  return results.flatMap((r) => r.messages.map((m) => `${relative(root, r.filePath)}:${m.line} ${m.ruleId} ${m.message}`));
}

const brief = (lines: string[]) => lines.map((l) => l.slice(0, l.indexOf(' ', l.indexOf(' ') + 1)));

/** A copy of the fixture to change: its real path (messages name files relative to it). */
function copy(edit: (dir: string) => void): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'pgq-monorepo-')));
  cpSync(fixture, dir, { recursive: true });
  edit(dir);
  return dir;
}

test('each service gets the same findings scanned alone and from the monorepo root', { timeout: 60_000 }, async () => {
  const fromRoot = await findings(fixture, ['.']);
  const alone = (await Promise.all(services.map((s) => findings(fixture, [s])))).flat();
  assert.deepEqual(fromRoot, alone);
  assert.deepEqual(brief(fromRoot), [
    'services/billing/src/queue.ts:12 require-lease-heartbeat',
    'services/billing/src/queue.ts:18 require-dead-sweep',
    'services/billing/src/worker.ts:11 require-fenced-finish',
    'services/ledger/queries/claim.sql:12 require-dead-sweep',
  ]);
});

test('the CLI: the same findings per service as from the root, in every format-relevant field', { timeout: 60_000 }, () => {
  const key = (dir: string) => (r: { filePath: string; messages: object[] }) => [relative(dir, r.filePath), r.messages] as const;
  const root = runCli(['scan', '.', '--format', 'json'], { cwd: fixture });
  assert.equal(root.code, 1, root.stderr);
  const perService = services.flatMap((s) => {
    const run = runCli(['scan', s, '--format', 'json'], { cwd: fixture });
    assert.ok(run.code === 0 || run.code === 1, run.stderr);
    return parseJson(run.stdout).map(key(fixture));
  });
  assert.deepEqual(new Map(parseJson(root.stdout).map(key(fixture))), new Map(perService));
});

test('units found by package.json and pyproject.toml alone, with no pgq-audit config anywhere', { timeout: 60_000 }, async () => {
  const dir = copy((d) => {
    rmSync(join(d, 'pgq-audit.config.json'));
    rmSync(join(d, 'services/ledger'), { recursive: true });
  });
  const fromRoot = await findings(dir, ['.']);
  assert.deepEqual(fromRoot, [...(await findings(dir, ['services/billing'])), ...(await findings(dir, ['services/mailer']))]);
  assert.deepEqual(brief(fromRoot), [
    'services/billing/src/queue.ts:12 require-lease-heartbeat',
    'services/billing/src/queue.ts:18 require-dead-sweep',
    'services/billing/src/worker.ts:11 require-fenced-finish',
  ]);
});

test('a config can make the whole monorepo one unit: then the mailer heartbeat and sweep count for billing', { timeout: 60_000 }, async () => {
  const dir = copy((d) => writeFileSync(join(d, 'pgq-audit.config.json'), JSON.stringify({ units: ['.'] })));
  assert.deepEqual(brief(await findings(dir, ['.'])), [
    'services/billing/src/worker.ts:11 require-fenced-finish',
    'services/ledger/queries/claim.sql:12 require-dead-sweep',
  ]);
});

test("schemas: the ledger's sweep of public.jobs counts for its `jobs` only where unqualified names are in public", { timeout: 60_000 }, async () => {
  // The fixture says search_path = ledger: `jobs` is ledger.jobs, and the sweep of public.jobs is for another table.
  assert.deepEqual(brief(await findings(fixture, ['services/ledger'])), ['services/ledger/queries/claim.sql:12 require-dead-sweep']);
  const inPublic = copy((d) => writeFileSync(join(d, 'services/ledger/pgq-audit.config.json'), JSON.stringify({ defaultSchema: 'public' })));
  assert.deepEqual(await findings(inPublic, ['services/ledger']), []);
  // The same in the config's `units` entry.
  const byEntry = copy((d) => {
    rmSync(join(d, 'services/ledger/pgq-audit.config.json'));
    writeFileSync(join(d, 'pgq-audit.config.json'), JSON.stringify({ units: [{ path: 'services/ledger', defaultSchema: 'ledger' }, 'services/*'] }));
  });
  assert.deepEqual(brief(await findings(byEntry, ['services/ledger'])), ['services/ledger/queries/claim.sql:12 require-dead-sweep']);
  // Both qualified: public.jobs is swept, ledger.jobs is not.
  const qualified = copy((d) => {
    writeFileSync(join(d, 'services/ledger/pgq-audit.config.json'), '{}');
    const claim = join(d, 'services/ledger/queries/claim.sql');
    writeFileSync(claim, readFileSync(claim, 'utf8').replace(/\bjobs\b/g, 'ledger.jobs'));
  });
  assert.deepEqual(brief(await findings(qualified, ['services/ledger'])), ['services/ledger/queries/claim.sql:12 require-dead-sweep']);
});

test('--shard and --changed-since still read facts from the whole unit', { timeout: 60_000 }, () => {
  const whole = parseJson(runCli(['scan', '.', '--format', 'json'], { cwd: fixture }).stdout);
  const shards = [1, 2, 3].map((i) => parseJson(runCli(['scan', '.', '--shard', `${i}/3`, '--format', 'json'], { cwd: fixture }).stdout));
  const sorted = (results: typeof whole) => [...results].sort((a, b) => a.filePath.localeCompare(b.filePath));
  assert.deepEqual(sorted(shards.flat()), sorted(whole));
  // The shards really split the files, so a shard's claim file is judged with facts it did not report on.
  for (const shard of shards) assert.ok(shard.length < whole.length, 'a shard reported every file');
});

test('--changed-since: a changed worker file is judged with the claim of its own unit', { timeout: 60_000 }, () => {
  const dir = copy(() => {});
  git(dir, 'init', '-q');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'monorepo');
  const worker = join(dir, 'services/billing/src/worker.ts');
  writeFileSync(worker, `${readFileSync(worker, 'utf8')}// touched\n`);
  const run = runCli(['scan', '.', '--changed-since', 'HEAD', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  const results = parseJson(run.stdout);
  assert.deepEqual(results.map((r) => relative(dir, r.filePath)), ['services/billing/src/worker.ts']);
  // The finish is unfenced because of billing's claim in queue.ts, a file this scan did not report on.
  assert.deepEqual(results[0].messages.map((m) => `${m.line} ${m.ruleId}`), ['11 pgq/require-fenced-finish']);
  assert.match(results[0].messages[0].message, /services\/billing\/src\/queue\.ts:\d+/);
});
