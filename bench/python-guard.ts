// Cost of the Python guard (python/pgq_audit) per job, on the seed's job: a
// psycopg_pool checkout, set_config('app.tenant', $1, true), one primary-key
// query, in psycopg's implicit transaction. Guarded against unguarded, as a
// ratio of medians (the seed measured 0.33 ms per job unguarded). Runs
// bench/python_guard_bench.py with Debian's python3 and psycopg 3.1 /
// psycopg_pool 3.1 (fetched into node_modules/.cache like the tests' own);
// figures are printed, never asserted.
//
//   node --import tsx bench/python-guard.ts [jobs=2000] [warmup=200]
//
// Uses PGQ_TEST_DATABASE_URL when set, else an embedded PostgreSQL 17.10.
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { startTestDatabase } from '../test/helpers/db.ts';

const JOBS = Number(process.argv[2] ?? 2000);
const WARMUP = Number(process.argv[3] ?? 200);
const ROOT = join(import.meta.dirname, '..');
const PYTHON = process.env.PGQ_PYTHON ?? '/usr/bin/python3';

interface Row {
  variant: string;
  median_us: number;
  ratio: number;
  p10_us: number;
  p10_ratio: number;
  p90_us: number;
  checks: number | null;
  runs: number;
}

// Debian's packages: test/setup/python-deps.mjs prints the PYTHONPATH they need ('' when installed).
const setup = spawnSync(process.execPath, [join(ROOT, 'test/setup/python-deps.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (setup.status !== 0) throw new Error('test/setup/python-deps.mjs could not provide the Python packages');
const deps = setup.stdout.trim();
const db = await startTestDatabase();
try {
  const run = spawnSync(PYTHON, [join(import.meta.dirname, 'python_guard_bench.py'), db.workerUrl, String(JOBS), String(WARMUP)], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: [join(ROOT, 'python'), ...(deps ? [deps] : [])].join(delimiter) },
    timeout: 30 * 60_000,
  });
  if (run.status !== 0) {
    console.error(`python guard bench failed (exit ${run.status ?? run.signal}):\n${run.stderr}`);
    process.exitCode = 1;
  } else {
    const out = JSON.parse(run.stdout) as { jobs: number; warmup: number; server: string; python: string; psycopg: string; psycopg_pool: string; rows: Row[] };
    console.log(
      `python guard bench: ${out.jobs} jobs per variant (first ${out.warmup} left out), psycopg_pool ConnectionPool of 1, ` +
        `PostgreSQL ${out.server}, Python ${out.python}, psycopg ${out.psycopg}, psycopg_pool ${out.psycopg_pool}`,
    );
    console.log(`${'variant'.padEnd(26)} median µs/job   ratio   p10 µs/job   ratio   p90 µs/job   checks`);
    for (const r of out.rows) {
      console.log(
        [
          r.variant.padEnd(26),
          r.median_us.toFixed(1).padStart(13),
          `${r.ratio.toFixed(3)}x`.padStart(7),
          r.p10_us.toFixed(1).padStart(12),
          `${r.p10_ratio.toFixed(3)}x`.padStart(7),
          r.p90_us.toFixed(1).padStart(12),
          String(r.checks ?? '-').padStart(8),
        ].join(' '),
      );
    }
    console.log(`the seed's job guarded: ${out.rows[1]!.ratio.toFixed(3)}x the unguarded median (one check, one round trip, per checkout)`);
  }
} finally {
  await db.stop();
}
