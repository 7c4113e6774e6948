// `npm run bench -- --shapes`: the scan on real-repository shapes (bench/shapes-generate.ts), each
// against a plain read of the same files (bench/child/floor.mjs): cold, cached, and on the TS
// monorepo ESLint with the same rules. The bundle shape is also scanned with its bundle named on
// the command line. Every figure is printed with the load average the machine was under.
//
//   npm run bench -- --shapes                     every shape, best of 3 runs
//   npm run bench -- --shapes --only monorepo --runs 1 --no-eslint
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { best, buildDist, loadNow, lpad, machineLine, mb, measure, pad, root, seconds, tempDir, type Measurement } from './measure.ts';
import { generateShape, SHAPE_NAMES, type Shape, type ShapeName } from './shapes-generate.ts';

interface ShapeRow {
  shape: Shape;
  label: string;
  floor: Measurement;
  cold: Measurement;
  cached?: Measurement;
  eslint?: Measurement;
  findings: number;
  fatal: number;
  skipped: number;
  importParses?: number;
  reusedParses?: number;
  importWalks?: number;
  parsed?: number;
}

/** Messages of a JSON report: findings, fatal ones, and files skipped. */
function reportCounts(path: string): { findings: number; fatal: number; skipped: number } {
  const results = JSON.parse(readFileSync(path, 'utf8')) as { messages: { fatal?: boolean; ruleId: string | null; message: string }[] }[];
  const messages = results.flatMap((r) => r.messages);
  return {
    findings: messages.filter((m) => m.ruleId).length,
    fatal: messages.filter((m) => m.fatal).length,
    skipped: messages.filter((m) => !m.ruleId && /skipped/i.test(m.message)).length,
  };
}

export async function runShapesBench(argv: string[]): Promise<{ ok: boolean }> {
  const { values } = parseArgs({
    args: argv,
    options: {
      shapes: { type: 'boolean', default: true },
      only: { type: 'string', multiple: true },
      runs: { type: 'string', default: '3' },
      'no-eslint': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
    },
    allowPositionals: false,
    strict: true,
  });
  const runs = Number(values.runs);
  const names = (values.only?.length ? values.only : SHAPE_NAMES) as ShapeName[];
  for (const n of names) if (!SHAPE_NAMES.includes(n)) throw new Error(`--only: no shape ${n} (${SHAPE_NAMES.join(', ')})`);
  if (!values['no-build']) buildDist();
  const base = join(root, '.pgq-bench', 'shapes');
  const rows: ShapeRow[] = [];
  const loadStart = loadNow();
  for (const name of names) {
    const shape = generateShape(base, name);
    console.log(`${name}: ${shape.summary}; ${shape.files.toLocaleString()} files, ${mb(shape.bytes)} (load ${loadNow()})`);
    // Warm the page cache.
    measure('floor.mjs', [shape.root]);
    const out = tempDir('pgq-bench-shape-');
    const report = join(out, 'report.json');
    const cli = (paths: string[], extra: string[] = []) => measure('cli.mjs', [root, 'scan', ...paths, '--format', 'json', '-o', report, ...extra]);
    const floor = best(runs, () => measure('floor.mjs', [shape.root]));
    const cold = best(runs, () => cli([shape.root]));
    const counts = reportCounts(report);
    const cache = ['--cache', '--cache-location', join(out, 'cache')];
    cli([shape.root], cache);
    const cached = best(runs, () => cli([shape.root], cache));
    const row: ShapeRow = { shape, label: name, floor, cold, cached, ...counts };
    if (name === 'monorepo') {
      const api = measure('scan-api.mjs', [root, JSON.stringify({ paths: [shape.root], cwd: shape.root, concurrency: 'off' })]);
      row.importParses = api.importParses;
      row.reusedParses = api.reusedParses;
      row.importWalks = api.importWalks;
      row.parsed = api.stats?.parsed;
      if (!values['no-eslint']) row.eslint = measure('eslint.mjs', [root, shape.root, 'auto', shape.root]);
    }
    rows.push(row);
    for (const file of shape.named ?? []) {
      // A bundle named on the command line: read alone, scanned cold (once: this was the slow one).
      const floorNamed = best(runs, () => measure('floor.mjs', [file]));
      const named = cli([file]);
      rows.push({ shape, label: `${name} (named)`, floor: floorNamed, cold: named, ...reportCounts(report) });
    }
    rmSync(out, { recursive: true, force: true });
  }

  console.log(`\nMachine: ${machineLine()}; load average ${loadStart} at the start, ${loadNow()} at the end`);
  console.log(`Best of ${runs} runs (by wall clock) for the read and pgq-audit (one for ESLint and a named bundle); each in a fresh process, page cache warm; times include process start. "load" is the highest 1-minute load average after the row's runs.\n`);
  console.log(
    `${pad('shape', 19)}${lpad('files', 7)}${lpad('MB', 6)}${lpad('read', 8)}${lpad('cold', 9)}${lpad('x read', 8)}${lpad('cached', 8)}${lpad('x read', 8)}${lpad('cpu cold', 10)}${lpad('cpu cached', 12)}${lpad('ESLint', 9)}${lpad('/cold', 7)}${lpad('cpu /cold', 11)}${lpad('load', 6)}  findings, fatal, skipped`,
  );
  const cpu = (m?: Measurement) => (m?.cpuMs !== undefined ? seconds(m.cpuMs) : '-');
  for (const r of rows) {
    const ratio = (m?: Measurement) => (m ? (m.wallMs / r.floor.wallMs).toFixed(2) : '-');
    const loads = [r.floor, r.cold, r.cached, r.eslint].filter((m): m is Measurement => !!m).map((m) => m.load ?? 0);
    const eslintCpu = r.eslint?.cpuMs !== undefined && r.cold.cpuMs ? (r.eslint.cpuMs / r.cold.cpuMs).toFixed(1) : '-';
    console.log(
      `${pad(r.label, 19)}${lpad(String(r.floor.files), 7)}${lpad((r.floor.bytes! / 1e6).toFixed(1), 6)}${lpad(seconds(r.floor.wallMs), 8)}${lpad(seconds(r.cold.wallMs), 9)}${lpad(ratio(r.cold), 8)}${lpad(r.cached ? seconds(r.cached.wallMs) : '-', 8)}${lpad(ratio(r.cached), 8)}` +
        `${lpad(cpu(r.cold), 10)}${lpad(cpu(r.cached), 12)}${lpad(r.eslint ? seconds(r.eslint.wallMs) : '-', 9)}${lpad(r.eslint ? (r.eslint.wallMs / r.cold.wallMs).toFixed(1) : '-', 7)}${lpad(eslintCpu, 11)}${lpad(Math.max(...loads).toFixed(1), 6)}  ${r.findings}, ${r.fatal}, ${r.skipped}`,
    );
  }
  console.log('read, cold, cached, ESLint: wall clock; cpu: user + system time of the process, worker threads included (steadier under load).');
  const parses = rows.find((r) => r.importParses !== undefined);
  if (parses) {
    const reused = parses.reusedParses ?? 0;
    console.log(
      `\nmonorepo, one scan in-process: ${parses.parsed} files analysed, ${parses.importParses} parses of imported project modules; ` +
        `${(parses.parsed ?? 0) - reused + (parses.importParses ?? 0)} TS parses in all (${reused} files analysed on the parse of an import); ` +
        `${parses.importWalks ?? '-'} walks of imported modules`,
    );
  }
  return { ok: rows.every((r) => r.fatal === 0) };
}
