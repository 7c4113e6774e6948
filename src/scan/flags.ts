// The scan's speed flags, kept here so `pgq-audit scan` adds them with three
// small lines: the option table, the help text and the ScanOptions they make.
import { UsageError } from './discover.ts';
import type { ScanOptions } from './scan.ts';
import { parseMaxFileSize } from '../config/file-size.ts';

export const PERFORMANCE_OPTIONS = {
  concurrency: { type: 'string' },
  cache: { type: 'boolean', default: false },
  'cache-location': { type: 'string' },
  'time-budget': { type: 'string' },
  'max-file-size': { type: 'string' },
  'max-analysis-steps': { type: 'string' },
  'include-generated': { type: 'boolean', default: false },
} as const;

export const PERFORMANCE_HELP = `  --concurrency <n|auto|off> Worker threads for the analysis (default auto: one core less than the
                             machine has, at most 4, and none on 2 cores or fewer; off: all in this thread;
                             n is capped at the number of cores)
  --cache                    Reuse the analysis of files whose content, config and pgq-audit did not change
  --cache-location <path>    The cache file or folder (default node_modules/.cache/pgq-audit/)
  --max-file-size <size>     Skip a file larger than this, decided by its size before any parse, the same
                             on every run: one size for all (512KB, 8MB, bytes; 0 for no cap) or per
                             language, sql=1MB,python=8MB,ts=8MB (default sql=2MB,python=4MB,ts=4MB)
  --max-analysis-steps <n>   Skip a file whose analysis takes more than n steps of work, counted, the same
                             on every run (default 1000000, some 100 times the largest real file; 0: none)
  --time-budget <ms>         Last resort: stop analysing a file after this much wall-clock time and report
                             it as skipped (default 60000; 0 for no limit). Which file it stops depends on
                             the machine's load: the size cap is what keeps reports the same every run
  --include-generated        Scan TS/JS bundles and generated files too (by default left out by their
                             shape: over 2 MB, minified, or a generated-code header)
`;

type Speed = Pick<ScanOptions, 'concurrency' | 'cache' | 'cacheLocation' | 'timeBudget' | 'maxFileSize' | 'maxAnalysisSteps' | 'includeGenerated'>;

export function performanceOptions(values: Record<string, unknown>): Speed {
  const options: Speed = {};
  if (values['include-generated']) options.includeGenerated = true;
  const concurrency = values.concurrency as string | undefined;
  if (concurrency !== undefined) {
    if (concurrency === 'auto' || concurrency === 'off') options.concurrency = concurrency;
    else if (/^[1-9]\d*$/.test(concurrency)) options.concurrency = Number(concurrency);
    else throw new UsageError(`--concurrency ${concurrency}: expected a number of threads (1 or more), auto or off`);
  }
  if (values.cache) options.cache = true;
  const location = values['cache-location'] as string | undefined;
  if (location !== undefined) {
    if (location === '') throw new UsageError('--cache-location: expected a file or folder');
    options.cacheLocation = location;
  }
  const budget = values['time-budget'] as string | undefined;
  if (budget !== undefined) {
    if (!/^\d+$/.test(budget)) throw new UsageError(`--time-budget ${budget}: expected milliseconds (0 for no limit)`);
    options.timeBudget = Number(budget);
  }
  const maxFileSize = values['max-file-size'] as string | undefined;
  if (maxFileSize !== undefined) options.maxFileSize = parseMaxFileSize(maxFileSize, '--max-file-size', (message) => new UsageError(message));
  const steps = values['max-analysis-steps'] as string | undefined;
  if (steps !== undefined) {
    if (!/^\d+$/.test(steps) || !Number.isSafeInteger(Number(steps))) throw new UsageError(`--max-analysis-steps ${steps}: expected a whole number of steps (0 for no bound)`);
    options.maxAnalysisSteps = Number(steps);
  }
  return options;
}
