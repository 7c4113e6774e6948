// Shared by the bench's child processes: on exit, write peak memory and the
// time the work took (from the first line of the child's own code) to the
// file named by BENCH_REPORT.
import { writeFileSync } from 'node:fs';

const started = performance.now();
const extra = {};

export function note(values) {
  Object.assign(extra, values);
}

process.on('exit', (code) => {
  if (!process.env.BENCH_REPORT) return;
  const usage = process.resourceUsage();
  writeFileSync(
    process.env.BENCH_REPORT,
    JSON.stringify({ code, ms: performance.now() - started, maxRssMb: usage.maxRSS / 1024, ...extra }),
  );
});
