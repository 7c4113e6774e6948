// Measurement helpers the benches share (bench/scan-bench.ts, bench/shapes.ts):
// a child script of bench/child/ run in a fresh node process, the best of a
// few runs, the machine's load, and the number formats of the tables.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, freemem, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..');
export const child = (name: string) => join(import.meta.dirname, 'child', name);

export interface ScanStats {
  files: number;
  bytes: number;
  parsed: number;
  cached: number;
  skipped: number;
  threads: number;
  timings: Record<string, number>;
}

export interface Measurement {
  wallMs: number;
  ms: number;
  /** CPU time of the child (user + system, worker threads included). */
  cpuMs?: number;
  maxRssMb: number;
  code: number | null;
  bytes?: number;
  files?: number;
  findings?: number;
  fatal?: number;
  stats?: ScanStats;
  /** ESLint's pgq findings, `path:line:column rule`. */
  pgq?: string[];
  /** Project modules parsed for what they export (bench/child/scan-api.mjs). */
  importParses?: number;
  /** Files analysed on the parse of an import, not parsed again. */
  reusedParses?: number;
  /** Readings of imported modules walked (a reading asked only what its syntax says is not). */
  importWalks?: number;
  /** The 1-minute load average when the run ended. */
  load?: number;
}

/** Runs a child script in a fresh node process; wall time around it, peak memory from the child. */
export function measure(script: string, args: string[]): Measurement {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-bench-'));
  const report = join(dir, 'report.json');
  const started = performance.now();
  const run = spawnSync(process.execPath, [child(script), ...args], {
    env: { ...process.env, BENCH_REPORT: report, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1024 * 1024 * 1024,
  });
  const wallMs = performance.now() - started;
  if (!existsSync(report)) {
    throw new Error(`${script} ${args.join(' ')} failed (${run.status}):\n${run.stderr.toString().slice(-4000)}`);
  }
  const measured = { wallMs, load: loadavg()[0], ...JSON.parse(readFileSync(report, 'utf8')) } as Measurement;
  rmSync(dir, { recursive: true, force: true });
  if (measured.code !== 0 && measured.code !== 1) throw new Error(`${script} exited ${measured.code}:\n${run.stderr.toString().slice(-4000)}`);
  return measured;
}

/** The best of `runs` runs (by wall time): the least disturbed by the machine. */
export function best(runs: number, run: () => Measurement): Measurement {
  let winner: Measurement | undefined;
  for (let i = 0; i < runs; i++) {
    const m = run();
    if (!winner || m.wallMs < winner.wallMs) winner = m;
  }
  return winner!;
}

/** The load averages (1, 5, 15 minutes), as `cat /proc/loadavg` prints them. */
export const loadNow = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export const machineLine = () =>
  `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM (${(freemem() / 2 ** 30).toFixed(0)} free), ${platform()} ${release()}, Node ${process.version}`;

export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
export const pad = (s: string, n: number) => s.padEnd(n);
export const lpad = (s: string, n: number) => s.padStart(n);

/** Builds dist/ (the CLI the children run). */
export function buildDist(): void {
  console.log('Building dist/ ...');
  const build = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');
}

/** A fresh temporary folder for a report or a cache. */
export const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
