// Runs scans in a process of their own and prints what the robustness test
// checks, with the process's peak memory (worker threads included).
import { scan, type ScanOptions } from '../../src/scan/scan.ts';

const runs = JSON.parse(process.argv[2]) as ScanOptions[];
const summaries = [];
for (const options of runs) {
  const started = performance.now();
  const result = await scan(options);
  summaries.push({
    ms: performance.now() - started,
    stats: result.stats,
    results: result.results.map((r) => ({
      filePath: r.filePath,
      messages: r.messages.map((m) => ({ ruleId: m.ruleId, messageId: m.messageId, fatal: m.fatal ?? false, severity: m.severity, line: m.line, message: m.message.slice(0, 300) })),
    })),
  });
}
process.stdout.write(JSON.stringify({ runs: summaries, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
