// The scan benchmark: generates a synthetic monorepo (bench/generate.ts),
// then in one run measures, each in a fresh process, the floor (a plain
// walk reading every file), pgq-audit scan cold and cached, and ESLint with
// typescript-eslint and only pgq.configs.recommended; at 5k, 10k and 20k
// files. Prints times, ratios, files/s and peak memory, checks that the
// planted bugs were found, and ends with a longer fuzz run.
//
//   npm run bench                      20,000 files
//   npm run bench -- --files 4000      a smaller tree (sizes scale with it)
//   npm run bench -- --runs 1 --no-eslint --fuzz 0
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { expectationsOf } from '../test/helpers/expectations.ts';
import { generateTree, type TreeManifest } from './generate.ts';
import { best, buildDist, lpad, machineLine, mb, measure, pad, root, seconds, type Measurement } from './measure.ts';

export async function runScanBench(argv: string[]): Promise<{ ok: boolean }> {
  const { values } = parseArgs({
    args: argv,
    options: {
      files: { type: 'string', default: '20000' },
      runs: { type: 'string', default: '3' },
      'no-eslint': { type: 'boolean', default: false },
      'eslint-concurrency': { type: 'string', default: 'auto' },
      fuzz: { type: 'string', default: '3000' },
      'fuzz-seed': { type: 'string' },
      seed: { type: 'string', default: '8' },
    },
    allowPositionals: false,
    strict: true,
  });
  const files = Number(values.files);
  const runs = Number(values.runs);

  buildDist();

  const treeRoot = join(root, '.pgq-bench', `tree-${files}`);
  const generated = performance.now();
  const manifest: TreeManifest = generateTree({ root: treeRoot, files, seed: Number(values.seed), meanSize: 7500, fixtures: join(root, 'fixtures') });
  console.log(`Tree: ${treeRoot} (${manifest.files.toLocaleString()} TS files + ${manifest.planted.length} planted fixtures, ${mb(manifest.bytes)}, ${manifest.sqlFiles} TS files with SQL; ready in ${seconds(performance.now() - generated)})`);

  const languages = await registeredLanguages();
  const rules = await ruleInfo();
  const hasEslint = existsSync(join(root, 'dist/src/eslint/index.js'));
  console.log(`Front ends: ${languages.map((l) => `${l.language} (${l.extensions.join(' ')})`).join(', ')}`);
  if (!languages.some((l) => l.extensions.includes('.ts'))) {
    console.log('  Note: no TS/JS front end is registered yet, so pgq-audit reads only the .sql/.py files; the 20,000 TS files are the floor\'s and ESLint\'s alone.');
  }

  const loadStart = loadavg().map((l) => l.toFixed(1)).join(' ');
  // Warm the page cache and the directory caches once, so the first measurement is not the only cold one.
  measure('floor.mjs', [treeRoot]);

  const sizes = [
    { label: `${manifest.sliceFiles[0].toLocaleString()}`, paths: ['s1'] },
    { label: `${(manifest.sliceFiles[0] + manifest.sliceFiles[1]).toLocaleString()}`, paths: ['s1', 's2'] },
    { label: `${manifest.sliceFiles.reduce((a, b) => a + b, 0).toLocaleString()}`, paths: ['s1', 's2', 's3'] },
  ];
  const rows: { size: string; name: string; m: Measurement; files: number; bytes: number }[] = [];
  let full: { floor: Measurement; cold: Measurement; cached: Measurement; eslint?: Measurement; output: string } | undefined;
  const bySize: { label: string; floor: Measurement; cold: Measurement; cached: Measurement }[] = [];
  for (const [index, size] of sizes.entries()) {
    const paths = size.paths.map((p) => join(treeRoot, p));
    const floor = best(runs, () => measure('floor.mjs', paths));
    const outDir = mkdtempSync(join(tmpdir(), 'pgq-bench-out-'));
    const output = join(outDir, 'report.json');
    const cli = (extra: string[]) => measure('cli.mjs', [root, 'scan', ...paths, '--format', 'json', '-o', output, ...extra]);
    const cold = best(runs, () => cli([]));
    const cacheDir = join(outDir, 'cache');
    const write = cli(['--cache', '--cache-location', cacheDir]);
    const cached = best(runs, () => cli(['--cache', '--cache-location', cacheDir]));
    rows.push({ size: size.label, name: 'plain read (floor)', m: floor, files: floor.files!, bytes: floor.bytes! });
    rows.push({ size: size.label, name: 'pgq-audit scan', m: cold, files: floor.files!, bytes: floor.bytes! });
    rows.push({ size: size.label, name: 'pgq-audit scan --cache (1st)', m: write, files: floor.files!, bytes: floor.bytes! });
    rows.push({ size: size.label, name: 'pgq-audit scan --cache', m: cached, files: floor.files!, bytes: floor.bytes! });
    bySize.push({ label: size.label, floor, cold, cached });
    if (index === sizes.length - 1) {
      let eslint: Measurement | undefined;
      if (hasEslint && !values['no-eslint']) {
        console.log('Running ESLint on the full tree (this is the slow one) ...');
        eslint = measure('eslint.mjs', [root, treeRoot, values['eslint-concurrency']!, ...paths]);
        rows.push({ size: size.label, name: `eslint + typescript-eslint (concurrency ${values['eslint-concurrency']})`, m: eslint, files: floor.files!, bytes: floor.bytes! });
      }
      full = { floor, cold, cached, eslint, output };
      // Keep the report of the cold run for the planted-bug check.
      cli([]);
    } else {
      rmSync(outDir, { recursive: true, force: true });
    }
  }

  // Phase timings of one cold scan of the full tree, from the programmatic API; and one with the
  // rules' triggers replaced by statement-shaped ones (bench/child/shaped-triggers.mjs).
  const fullPaths = sizes[2].paths.map((p) => join(treeRoot, p));
  const phases = measure('scan-api.mjs', [root, JSON.stringify({ paths: fullPaths, cwd: treeRoot })]);
  const shaped = best(runs, () => measure('scan-api.mjs', [root, JSON.stringify({ paths: fullPaths, cwd: treeRoot, shaped: true })]));
  const last = rows.find((r) => r.name === 'pgq-audit scan' && r.size === sizes[2].label)!;
  rows.push({ size: sizes[2].label, name: 'pgq-audit scan, statement-shaped triggers *', m: shaped, files: last.files, bytes: last.bytes });

  // The README's fixture scan and --version, each in a fresh process.
  const fixturesOut = join(mkdtempSync(join(tmpdir(), 'pgq-bench-fixtures-')), 'report.json');
  const fixturesScan = best(runs, () => measure('cli.mjs', [root, 'scan', join(root, 'fixtures'), '--format', 'json', '-o', fixturesOut]));
  const version = best(runs, () => measure('cli.mjs', [root, '--version']));
  const bare = best(runs, () => measure('floor.mjs', []));
  rmSync(join(fixturesOut, '..'), { recursive: true, force: true });

  const machine = machineLine();
  console.log(`\nMachine: ${machine}; load average ${loadStart} at the start, ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end (other work on the machine slows every row alike)`);
  console.log(`Best of ${runs} runs for the floor and pgq-audit (one for ESLint); each in a fresh process, page cache warm; times are wall clock including process start.\n`);
  console.log(`${pad('files', 8)}${pad('run', 48)}${lpad('time', 10)}${lpad('x floor', 9)}${lpad('files/s', 10)}${lpad('MB/s', 8)}${lpad('peak RSS', 10)}`);
  const floorOf = new Map(rows.filter((r) => r.name.startsWith('plain')).map((r) => [r.size, r.m.wallMs]));
  for (const row of rows) {
    const ratio = row.m.wallMs / floorOf.get(row.size)!;
    console.log(
      `${pad(row.size, 8)}${pad(row.name, 48)}${lpad(seconds(row.m.wallMs), 10)}${lpad(ratio.toFixed(2), 9)}${lpad(Math.round(row.files / (row.m.wallMs / 1000)).toLocaleString(), 10)}${lpad((row.bytes / 1e6 / (row.m.wallMs / 1000)).toFixed(0), 8)}${lpad(`${row.m.maxRssMb.toFixed(0)} MB`, 10)}`,
    );
  }

  console.log('* a proposal, not the rules\' triggers: bench/child/shaped-triggers.mjs, run through the API');
  console.log(
    `\npgq-audit scan fixtures/: ${seconds(fixturesScan.wallMs)}, ${fixturesScan.maxRssMb.toFixed(0)} MB; pgq-audit --version: ${seconds(version.wallMs)} (node starting and exiting with nothing to do: ${seconds(bare.wallMs)})`,
  );
  const stats = phases.stats!;
  const t = stats.timings;
  console.log(
    `\nOne cold scan of ${stats.files.toLocaleString()} files (${mb(stats.bytes)} read by pgq-audit): ${stats.parsed} passed the prefilter (${((100 * stats.parsed) / Math.max(1, stats.files)).toFixed(1)}%), ` +
      `${stats.threads ? `${stats.threads} worker threads` : 'in-process'}, ${stats.skipped} skipped.\n` +
      `  phases: discover ${t.discover.toFixed(0)} ms, read + prefilter ${t.read.toFixed(0)} ms, analyse ${t.analyse.toFixed(0)} ms${stats.threads ? ' (after reading)' : ' (on this thread, while reading too)'}, project + suppressions ${t.project.toFixed(0)} ms; total ${t.total.toFixed(0)} ms in the scan, ${phases.wallMs.toFixed(0)} ms wall`,
  );

  console.log(`  prefilter: ${await triggerShares(treeRoot, sizes[2].paths, rules)}`);
  const { shapedTriggers } = (await import('./child/shaped-triggers.mjs' as string)) as { shapedTriggers: Record<string, (string | RegExp)[]> };
  const proposal = rules.map((r) => ({ ...r, triggers: shapedTriggers[r.id] ?? r.triggers }));
  console.log(`  with statement-shaped triggers: ${await triggerShares(treeRoot, sizes[2].paths, proposal)}; parsed ${shaped.stats!.parsed} files, ${shaped.findings} findings (rules' own triggers: ${phases.stats!.parsed} files, ${phases.findings} findings)`);

  let ok = true;
  if (full) {
    const checks: [string, boolean, string][] = [];
    for (const size of [bySize[0]!, bySize[bySize.length - 1]!]) {
      const ratio = size.cold.wallMs / size.floor.wallMs;
      checks.push([`${size.label} files: cold <= 3x the read`, ratio <= 3, `${ratio.toFixed(2)}x (${seconds(size.cold.wallMs)} / ${seconds(size.floor.wallMs)})`]);
      const cachedRatio = size.cached.wallMs / size.floor.wallMs;
      checks.push([`${size.label} files: cached <= 1.5x the read`, cachedRatio <= 1.5, `${cachedRatio.toFixed(2)}x (${seconds(size.cached.wallMs)})`]);
    }
    checks.push(['fixtures scan < 1.5 s', fixturesScan.wallMs < 1500, seconds(fixturesScan.wallMs)]);
    checks.push(['--version < 0.3 s', version.wallMs < 300, seconds(version.wallMs)]);
    if (full.eslint) {
      const faster = full.eslint.wallMs / full.cold.wallMs;
      checks.push(['>= 10x faster than ESLint', faster >= 10, `${faster.toFixed(1)}x`]);
    } else {
      checks.push(['>= 10x faster than ESLint', true, hasEslint ? 'not run (--no-eslint)' : 'not run: src/eslint is not built yet']);
    }
    const peak = Math.max(...bySize.flatMap((s) => [s.cold.maxRssMb, s.cached.maxRssMb]));
    checks.push(['peak memory < 400 MB', peak < 400, `${peak.toFixed(0)} MB`]);
    if (full.eslint?.pgq) {
      const parity = eslintParity(full.output, full.eslint.pgq, rules);
      checks.push(['ESLint parity (per-file rules, TS)', parity.missing.length === 0 && parity.extra.length === 0, parity.summary]);
    }
    const cold = rows.filter((r) => r.name === 'pgq-audit scan');
    const perFile = cold.map((r) => r.m.wallMs / r.files);
    const growth = (cold[2].m.wallMs - cold[0].m.wallMs) / (cold[2].files - cold[0].files);
    const linear = perFile[2] <= perFile[0] * 1.25;
    checks.push([
      'time grows linearly with size',
      linear,
      `${cold.map((r) => `${r.size}: ${((1000 * r.m.wallMs) / r.files).toFixed(1)} ms/1k files`).join(', ')}; marginal ${(1000 * growth).toFixed(1)} ms/1k`,
    ]);
    const planted = checkPlanted(treeRoot, manifest, full.output, languages, rules);
    checks.push(['planted bugs found', planted.missing.length === 0, planted.summary]);
    console.log('\nTargets:');
    for (const [name, pass, detail] of checks) {
      console.log(`  ${pass ? 'ok  ' : 'MISS'} ${pad(name, 34)} ${detail}`);
      if (!pass) ok = false;
    }
    for (const line of planted.missing.slice(0, 20)) console.log(`       missing: ${line}`);
    rmSync(join(full.output, '..'), { recursive: true, force: true });
  }

  const fuzzIterations = Number(values.fuzz);
  if (fuzzIterations > 0) {
    const seed = values['fuzz-seed'] !== undefined ? Number(values['fuzz-seed']) : Math.floor(Math.random() * 2 ** 31);
    console.log(`\nFuzz: ${fuzzIterations} mutations of the fixtures, seed ${seed} (repeat with --fuzz-seed ${seed}) ...`);
    const { runFuzz } = await import('../test/fuzz/fuzz.ts');
    const report = await runFuzz({ seed, iterations: fuzzIterations, fixtures: join(root, 'fixtures') });
    console.log(`  ${report.cases} cases (${report.byLanguage}), ${report.failures.length} failures, ${seconds(report.ms)}`);
    for (const failure of report.failures.slice(0, 10)) console.log(`  FAIL ${failure}`);
    if (report.failures.length > 0) ok = false;
  }
  return { ok };
}

interface LanguageInfo {
  language: string;
  extensions: string[];
}

interface RuleInfo {
  id: string;
  languages: string[];
  triggers: (string | RegExp | { byLanguage: Record<string, string | RegExp | undefined> })[];
  checkProject?: unknown;
}

async function registeredLanguages(): Promise<LanguageInfo[]> {
  const { frontEnds } = (await import(join(root, 'dist/src/languages/index.js'))) as { frontEnds: LanguageInfo[] };
  return frontEnds.map((f) => ({ language: f.language, extensions: [...f.extensions] }));
}

async function ruleInfo(): Promise<RuleInfo[]> {
  const { rules } = (await import(join(root, 'dist/rules/index.js'))) as { rules: RuleInfo[] };
  return rules;
}

/**
 * Which triggers let the tree's TS files through the prefilter: per trigger, the files it matches,
 * and the files only it matches (those the scan would skip without it).
 */
async function triggerShares(treeRoot: string, paths: string[], rules: RuleInfo[]): Promise<string> {
  const { triggerPattern } = (await import(join(root, 'dist/src/scan/prefilter.js'))) as { triggerPattern: (t: readonly (string | RegExp)[]) => RegExp };
  const byText = new Map<string, string | RegExp>();
  const { triggersFor } = (await import(join(root, 'dist/src/model/index.js'))) as { triggersFor: (t: RuleInfo['triggers'], language: string) => (string | RegExp)[] };
  for (const rule of rules) if (rule.languages.includes('typescript')) for (const t of triggersFor(rule.triggers, 'typescript')) byText.set(typeof t === 'string' ? t.toLowerCase() : String(t), typeof t === 'string' ? t.toLowerCase() : t);
  const triggers = [...byText.values()];
  const patterns = triggers.map((t) => triggerPattern([t]));
  const any = new Array(triggers.length).fill(0);
  const only = new Array(triggers.length).fill(0);
  let files = 0;
  let passed = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const text = readFileSync(path, 'latin1');
        files++;
        const hits = patterns.map((p, i) => (p.test(text) ? i : -1)).filter((i) => i >= 0);
        if (hits.length > 0) passed++;
        for (const i of hits) any[i]++;
        if (hits.length === 1) only[hits[0]]++;
      }
    }
  };
  for (const p of paths) walk(join(treeRoot, p));
  const rows = triggers
    .map((t, i) => ({ t, any: any[i], only: only[i] }))
    .filter((r) => r.any > 0)
    .sort((a, b) => b.only - a.only || b.any - a.any)
    .map((r) => `${typeof r.t === 'string' ? JSON.stringify(r.t) : String(r.t)} ${((100 * r.any) / files).toFixed(1)}% (only it: ${((100 * r.only) / files).toFixed(1)}%)`);
  return `${((100 * passed) / files).toFixed(1)}% of ${files.toLocaleString()} TS files pass the prefilter; by trigger: ${rows.join(', ')}`;
}

/** The CLI's findings of the per-file rules on TS files, against ESLint's on the same tree. */
function eslintParity(output: string, eslint: string[], rules: RuleInfo[]): { missing: string[]; extra: string[]; summary: string } {
  const projectWide = new Set(rules.filter((r) => r.checkProject).map((r) => r.id));
  const results = JSON.parse(readFileSync(output, 'utf8')) as { filePath: string; messages: { line: number; column: number; ruleId: string | null }[] }[];
  const cli = new Set(
    results
      .filter((r) => /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(r.filePath))
      .flatMap((r) => r.messages.filter((m) => m.ruleId && !projectWide.has(m.ruleId.replace(/^pgq\//, ''))).map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId!.replace(/^pgq\//, '')}`)),
  );
  const lint = new Set(eslint.filter((f) => !projectWide.has(f.slice(f.lastIndexOf(' ') + 1))));
  const missing = [...cli].filter((f) => !lint.has(f));
  const extra = [...lint].filter((f) => !cli.has(f));
  return { missing, extra, summary: `${cli.size} CLI findings, ${lint.size} ESLint findings; ${missing.length} only in the CLI, ${extra.length} only in ESLint${missing[0] ? ` (e.g. ${missing[0]})` : extra[0] ? ` (e.g. ${extra[0]})` : ''}` };
}

/** Every planted fixture with a registered front end: its `expect:` lines are exactly what was reported. */
function checkPlanted(treeRoot: string, manifest: TreeManifest, output: string, languages: LanguageInfo[], rules: RuleInfo[]): { missing: string[]; summary: string } {
  // Cross-file findings depend on every file of the project, and the planted fixtures share one
  // project here: they are checked per fixture project by the fixture tests, not here.
  const projectWide = new Set(rules.filter((r) => r.checkProject).map((r) => r.id));
  const languageOf = new Map(languages.flatMap((l) => l.extensions.map((e) => [e, l.language] as const)));
  const reads = (ruleId: string, ext: string) => rules.find((r) => r.id === ruleId)?.languages.includes(languageOf.get(ext) ?? '') ?? false;
  let crossFile = 0;
  const results = JSON.parse(readFileSync(output, 'utf8')) as { filePath: string; messages: { line: number; ruleId: string | null }[] }[];
  const byPath = new Map(results.map((r) => [r.filePath, r]));
  const extensions = new Set(languages.flatMap((l) => l.extensions));
  const missing: string[] = [];
  let expected = 0;
  let found = 0;
  let unscanned = 0;
  for (const rel of manifest.planted) {
    const path = join(treeRoot, rel);
    if (!extensions.has(extname(path))) {
      unscanned++;
      continue;
    }
    const all = expectationsOf(readFileSync(path, 'utf8')).filter((e) => e.ruleId !== 'fatal');
    // Fixtures may expect a rule on a language it does not list yet (its tests add the language).
    const want = all.filter((e) => !projectWide.has(e.ruleId) && reads(e.ruleId, extname(path)));
    crossFile += all.length - want.length;
    const got = new Set((byPath.get(path)?.messages ?? []).map((m) => `${m.line}:${(m.ruleId ?? 'fatal').replace(/^pgq\//, '')}`));
    for (const e of want) {
      expected++;
      if (got.has(`${e.line}:${e.ruleId}`)) found++;
      else missing.push(`${rel}:${e.line} ${e.ruleId}`);
    }
  }
  return {
    missing,
    summary: `${found} of ${expected} expected per-file findings in the planted fixtures${crossFile ? ` (${crossFile} cross-file ones left to the fixture tests)` : ''}${unscanned ? `; ${unscanned} planted files have no front end yet` : ''}`,
  };
}
