// Shared by the bench's child processes: on exit, write peak memory, the
// time the work took (from the first line of the child's own code) and the
// CPU time the process used to the file named by BENCH_REPORT.
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
    // CPU time of the whole process (worker threads included): on a loaded machine, far steadier than the wall clock.
    JSON.stringify({ code, ms: performance.now() - started, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssMb: usage.maxRSS / 1024, ...extra }),
  );
});
