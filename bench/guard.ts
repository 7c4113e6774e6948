// Cost of the checkout guard per job, one pool of 1 each, in one run:
// unguarded; guarded (the default: a job whose texts provably left no
// setting costs its next checkout no check); guarded with elide: false
// (every checkout checked, the guard before proofs); and that with
// sampleRate 0.1. The README's job: a checkout, BEGIN,
// set_config('app.tenant', $1, true), one query, COMMIT, release. A last
// pair runs a job the guard cannot prove clean (it calls a routine): its
// every checkout needs the check, one round trip.
// The three pools take turns job by job so drift in the machine or the
// server hits all three alike, and are rebuilt every 100 rounds. Figures
// are printed, never asserted. "checks" counts check queries, including the
// first read of each new connection.
//
//   npx tsx bench/guard.ts [jobs=2000] [warmup=200]
//
// Uses PGQ_TEST_DATABASE_URL when set, else an embedded PostgreSQL 17.10.
import pg from 'pg';
import { startTestDatabase } from '../test/helpers/db.ts';
// The compiled guard, as users run it (tsx would add its own cost per call): npm run bench builds first.
import { guardPool, guardStats } from '../dist/src/guard/index.js';
import { makePlan } from '../dist/src/guard/check.js';

const JOBS = Number(process.argv[2] ?? 2000);
const WARMUP = Number(process.argv[3] ?? 200);

interface Variant {
  name: string;
  build: () => pg.Pool;
  job: typeof readmeJob;
  samples: number[];
  checks: number;
  /** Jobs run, warm-ups included (what the checks are counted over). */
  runs: number;
  /** The variant the ratio is taken against. */
  base: number;
}

const EPOCH = 100;

async function readmeJob(pool: pg.Pool, tenant: number, invoiceId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    await client.query('select amount_cents from invoices where id = $1', [invoiceId]);
    await client.query('commit');
  } finally {
    client.release();
  }
}

/** The same job, but its query calls a routine (which could write a setting): unproven. */
async function routineJob(pool: pg.Pool, tenant: number, invoiceId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    await client.query('select pgq_bench_amount($1)', [invoiceId]);
    await client.query('commit');
  } finally {
    client.release();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const db = await startTestDatabase();
  try {
    const owner = new pg.Client({ connectionString: db.ownerUrl });
    await owner.connect();
    const { rows: firsts } = await owner.query<{ tenant_id: number; id: string }>(
      'select tenant_id, min(id)::text as id from invoices group by tenant_id order by tenant_id',
    );
    const { rows: version } = await owner.query<{ v: string }>("select current_setting('server_version') as v");
    await owner.query('create or replace function pgq_bench_amount(id bigint) returns bigint language sql stable as $$ select amount_cents from invoices where invoices.id = $1 $$');
    await owner.query('grant execute on function pgq_bench_amount(bigint) to public');
    await owner.end();

    const make = () => {
      const pool = new pg.Pool({ connectionString: db.workerUrl, max: 1 });
      pool.on('error', () => {}); // stopping the server must not crash the report
      return pool;
    };
    const settings = ['app.tenant'];
    const variants: Variant[] = [
      { name: 'unguarded', build: () => make(), job: readmeJob, samples: [], checks: 0, runs: 0, base: 0 },
      { name: 'guarded', build: () => guardPool(make(), { settings }), job: readmeJob, samples: [], checks: 0, runs: 0, base: 0 },
      { name: 'elide: false', build: () => guardPool(make(), { settings, elide: false }), job: readmeJob, samples: [], checks: 0, runs: 0, base: 0 },
      { name: 'elide: false, sampled 0.1', build: () => guardPool(make(), { settings, elide: false, sampleRate: 0.1 }), job: readmeJob, samples: [], checks: 0, runs: 0, base: 0 },
      { name: 'routine job, unguarded', build: () => make(), job: routineJob, samples: [], checks: 0, runs: 0, base: 4 },
      { name: 'routine job, guarded', build: () => guardPool(make(), { settings }), job: routineJob, samples: [], checks: 0, runs: 0, base: 4 },
    ];

    // Fresh pools (fresh backends) every EPOCH rounds: how fast one backend
    // answers depends on where the OS put it, and that must not stick to
    // one variant for the whole run.
    for (let round = 0; round < JOBS; round += EPOCH) {
      const pools = variants.map((v) => v.build());
      for (const [k, pool] of pools.entries()) {
        for (let w = 0; w < 5; w++) await variants[k]!.job(pool, 1, firsts[0]!.id);
        variants[k]!.runs += 5;
      }
      for (let i = round; i < Math.min(JOBS, round + EPOCH); i++) {
        const { tenant_id: tenant, id } = firsts[i % firsts.length]!;
        // Rotate who goes first, so no variant always runs right after another.
        for (let k = 0; k < variants.length; k++) {
          const v = (i + k) % variants.length;
          const start = process.hrtime.bigint();
          await variants[v]!.job(pools[v]!, tenant, id);
          variants[v]!.runs++;
          const micros = Number(process.hrtime.bigint() - start) / 1000;
          if (i >= WARMUP) variants[v]!.samples.push(micros);
        }
      }
      variants.forEach((v, k) => (v.checks += guardStats(pools[k]!)?.checks ?? 0));
      await Promise.all(pools.map((p) => p.end()));
    }


    console.log(
      `guard bench: ${JOBS} jobs per variant (first ${WARMUP} left out), pool of 1, PostgreSQL ${version[0]!.v}, Node ${process.version}`,
    );
    // p10 is printed next to the median: on a shared machine the latency of
    // a round trip is bimodal, and the median can land in either mode.
    console.log(`${'variant'.padEnd(27)} median µs/job   ratio   p10 µs/job   ratio   p90 µs/job   checks`);
    for (const variant of variants) {
      const m = median(variant.samples);
      const p10 = quantile(variant.samples, 0.1);
      const base = median(variants[variant.base]!.samples);
      const baseP10 = quantile(variants[variant.base]!.samples, 0.1);
      console.log(
        [
          variant.name.padEnd(27),
          m.toFixed(1).padStart(13),
          `${(m / base).toFixed(3)}x`.padStart(7),
          p10.toFixed(1).padStart(12),
          `${(p10 / baseP10).toFixed(3)}x`.padStart(7),
          quantile(variant.samples, 0.9).toFixed(1).padStart(12),
          String(variant.name.endsWith('unguarded') ? '-' : variant.checks).padStart(8),
        ].join(' '),
      );
    }
    const guarded = median(variants[1]!.samples) / median(variants[0]!.samples);
    const jobs = variants[1]!.runs;
    const perCheck = variants[5]!.checks / variants[5]!.runs;
    console.log(
      `targets (median): README job guarded <= 1.05x (${guarded <= 1.05 ? 'met' : 'missed'}: ${guarded.toFixed(3)}x, ${variants[1]!.checks} checks in ${jobs} jobs: ` +
        `one per new connection, and one per catalog re-read); an unproven job: one check (one round trip) per checkout (${perCheck.toFixed(2)} per job)`,
    );
    await checkQueryCost(db.workerUrl);
  } finally {
    await db.stop();
  }
}

/**
 * What each form of the check costs on its own, one client, the forms taking
 * turns: the settings only (elide: false), with standard_conforming_strings
 * (every check with proofs on), and with the catalog facts (a connection's
 * first check, and when the facts are stale).
 */
async function checkQueryCost(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const plan = makePlan(['app.tenant']);
  const forms = [
    { name: 'settings only', text: plan.sql(false, 'none').text, samples: [] as number[] },
    { name: '+ standard_conforming_strings', text: plan.sql(false, 'strings').text, samples: [] as number[] },
    { name: '+ catalog facts', text: plan.sql(false, 'all').text, samples: [] as number[] },
  ];
  for (let i = 0; i < 300; i++) {
    for (const form of forms) {
      const start = process.hrtime.bigint();
      await client.query(form.text);
      if (i >= 30) form.samples.push(Number(process.hrtime.bigint() - start) / 1000);
    }
  }
  await client.end();
  console.log('check query alone (300 each, first 30 left out):');
  for (const form of forms) {
    console.log(`  ${form.name.padEnd(31)} median ${median(form.samples).toFixed(1).padStart(8)} µs   p10 ${quantile(form.samples, 0.1).toFixed(1).padStart(8)} µs`);
  }
}

await main();
