// `pgq-audit scan [paths...]`: config, file selection, suppressions (in the
// scan), baseline, report, exit code.
import { resolve } from 'node:path';
import { compareWithBaseline, readBaseline, writeBaseline } from '../baseline/index.ts';
import { loadConfig, ruleSettings, searchStart } from '../config/index.ts';
import { countSeverities, type FileResult } from '../engine/findings.ts';
import { parseRuleFlag, type RuleSettings } from '../engine/rule-config.ts';
import { FORMAT_NAMES, formats } from '../report/index.ts';
import { UsageError } from '../scan/discover.ts';
import { PERFORMANCE_HELP, PERFORMANCE_OPTIONS, performanceOptions } from '../scan/flags.ts';
import { scan } from '../scan/scan.ts';
import { parseShard, type FileSelection } from '../scan/select-files.ts';
import { parseCommandArgs, type OptionsConfig } from './args.ts';
import type { Io } from './io.ts';
import { exitCodeOf, parseMaxWarnings, REPORT_OPTIONS, reportContext, writeReport } from './output.ts';
import { createProgress, progressDelay } from './progress.ts';

export const SCAN_HELP = `Usage: pgq-audit scan [paths...] [options]

Scans files and folders (default: .) for multi-tenant worker bugs.

Options:
  -f, --format <name>        Output format: ${FORMAT_NAMES.join(', ')} (default: stylish)
  -o, --output-file <path>   Write the report to a file instead of stdout
  -c, --config <path>        Use this config file (pgq-audit.config.json, or a package.json with "pgqAudit")
                             instead of the nearest one at or above the scanned paths
  --rule <id>:<severity>     Set a rule's severity: off, warn or error (repeatable; wins over the config)
  --max-warnings <n>         Exit 1 when there are more than n warnings
  --quiet                    Report errors only
  --no-code-frame            stylish: no code frame under each finding (frames are drawn only on a terminal)
  --write-baseline <file>    Record today's findings in <file>, report none of them, exit 0
  --baseline <file>          Report only findings that are not in <file>; say how many known ones remain
                             and which were fixed
  --changed-since <git-ref>  Report only files changed since the merge base of <git-ref> and HEAD,
                             plus uncommitted and untracked ones
  --shard <i>/<n>            Report only shard i of n (files picked by a hash of their path)
  --project-facts            Report only the files named, reading cross-file facts from every file of
                             their project units, as a scan of the project would (pre-commit's hook)
${PERFORMANCE_HELP}  -h, --help                 Show this help

Exit codes: 0 no errors, 1 errors found (or too many warnings), 2 usage, config or internal error.
`;

const OPTIONS: OptionsConfig = {
  ...REPORT_OPTIONS,
  'write-baseline': { type: 'string' },
  baseline: { type: 'string' },
  'changed-since': { type: 'string' },
  shard: { type: 'string' },
  'project-facts': { type: 'boolean', default: false },
  ...PERFORMANCE_OPTIONS,
  help: { type: 'boolean', short: 'h', default: false },
};

export async function scanCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandArgs('scan', argv, OPTIONS) as { values: Record<string, any>; positionals: string[] };
  if (values.help) {
    io.stdout(SCAN_HELP);
    return 0;
  }
  const formatName: string = values.format;
  const format = formats[formatName];
  if (!format) throw new UsageError(`--format ${formatName}: valid formats are ${FORMAT_NAMES.join(', ')}`);
  const maxWarnings = parseMaxWarnings(values['max-warnings'] as string | undefined);
  const writeTo: string | undefined = values['write-baseline'];
  const baselineFrom: string | undefined = values.baseline;
  if (writeTo !== undefined && baselineFrom !== undefined) throw new UsageError('--write-baseline and --baseline: use one of them (--write-baseline rewrites the whole baseline)');
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  const changedSince: string | undefined = values['changed-since'];
  if (changedSince === '') throw new UsageError('--changed-since: expected a git ref, e.g. --changed-since origin/main');
  if (writeTo !== undefined && (shard || changedSince !== undefined)) {
    throw new UsageError('--write-baseline records the findings of the whole project: drop --changed-since and --shard');
  }
  if (writeTo !== undefined && values['project-facts']) {
    throw new UsageError('--write-baseline records the findings of the whole project: drop --project-facts');
  }

  const flags: RuleSettings = {};
  for (const flag of values.rule as string[]) {
    const [id, severity] = parseRuleFlag(flag);
    flags[id] = severity;
  }
  const paths = positionals.length ? positionals : ['.'];
  const speed = performanceOptions(values);
  const loaded = loadConfig({ explicit: values.config, start: searchStart(paths, io.cwd), cwd: io.cwd });
  const { config } = loaded;
  const selection: FileSelection = { changedSince, shard, ignores: { base: loaded.base, globs: config.ignores } };

  const progress =
    formatName === 'stylish' && io.stderrIsTTY
      ? createProgress({ write: io.stderr, cwd: io.cwd, columns: io.columns, delayMs: progressDelay(io.env ?? {}) })
      : undefined;
  let result;
  try {
    result = await scan({
      paths,
      cwd: io.cwd,
      rules: ruleSettings(config, flags),
      queryFunctions: config.settings.queryFunctions,
      ...(config.sql ? { sql: config.sql } : {}),
      ...(config.maxFileSize ? { maxFileSize: config.maxFileSize } : {}),
      ...(config.maxAnalysisSteps !== undefined ? { maxAnalysisSteps: config.maxAnalysisSteps } : {}),
      selection,
      projectFacts: values['project-facts'],
      unitConfig: values.config ? loaded : undefined,
      reportUnusedSuppressions: config.reportUnusedSuppressions,
      onProgress: progress?.update,
      ...speed,
    });
  } finally {
    progress?.finish();
  }

  let results: FileResult[] = result.results;
  const notes: string[] = [];
  if (writeTo !== undefined) {
    const path = resolve(io.cwd, writeTo);
    const entries = writeBaseline(results, path, writeTo);
    notes.push(`pgq-audit: wrote ${plural(entries.length, 'finding')} to ${writeTo}. Scan with --baseline ${writeTo} to report only new ones.`);
    results = compareWithBaseline(results, readBaseline(path, writeTo), path, new Set(results.map((r) => r.filePath))).results;
  }
  if (baselineFrom !== undefined) {
    const path = resolve(io.cwd, baselineFrom);
    const comparison = compareWithBaseline(results, readBaseline(path, baselineFrom), path, new Set(results.map((r) => r.filePath)));
    results = comparison.results;
    const lines = [`pgq-audit: baseline ${baselineFrom}: ${plural(comparison.known, 'known finding')} remain${comparison.known === 1 ? 's' : ''}, ${comparison.fixed.length} fixed.`];
    for (const entry of comparison.fixed) lines.push(`  fixed: ${entry.file}:${entry.line}  pgq/${entry.rule}  ${entry.message}`);
    if (comparison.notScanned > 0) lines.push(`  ${plural(comparison.notScanned, 'more known finding')} in files this scan did not read.`);
    if (comparison.fixed.length > 0) lines.push(`  Drop the fixed ones from the baseline: pgq-audit scan --write-baseline ${baselineFrom}`);
    notes.push(lines.join('\n'));
  }
  if (values.quiet) results = results.map((r) => countSeverities({ ...r, messages: r.messages.filter((m) => m.severity === 2) }));
  if (result.results.length === 0 && (changedSince !== undefined || shard)) {
    notes.push(`pgq-audit: no files to scan${changedSince !== undefined ? ` changed since ${changedSince}` : ''}${shard ? ` in shard ${shard.index}/${shard.count}` : ''}.`);
  }

  writeReport(format(results, reportContext(values, io)), values['output-file'], io);
  const cache = result.stats.cache;
  if (cache?.unsaved) io.stderr(`pgq-audit: warning: could not write the cache ${cache.file} (${cache.unsaved}); the scan ran without it. Choose another --cache-location.\n`);
  for (const note of notes) io.stderr(`${note}\n`);

  return exitCodeOf(results, maxWarnings, io);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

