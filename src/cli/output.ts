import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../scan/discover.ts';
import type { FileResult } from '../engine/findings.ts';
import type { ReportContext } from '../report/index.ts';
import { repositoryRoot } from '../scan/select-files.ts';
import type { OptionsConfig } from './args.ts';
import type { Io } from './io.ts';

/** The options of a report, the same for scan and db. */
export const REPORT_OPTIONS: OptionsConfig = {
  format: { type: 'string', short: 'f', default: 'stylish' },
  'output-file': { type: 'string', short: 'o' },
  config: { type: 'string', short: 'c' },
  rule: { type: 'string', multiple: true, default: [] },
  'max-warnings': { type: 'string' },
  quiet: { type: 'boolean', default: false },
  'no-code-frame': { type: 'boolean', default: false },
};

/**
 * How a report is drawn, from the report options: colour and code frames only on a terminal. The
 * repository root costs a git process, so it is asked for only by the formats that use it (SARIF,
 * github).
 */
export function reportContext(values: Record<string, unknown>, io: Io): ReportContext {
  // --output-file first: asking whether stdout is a terminal makes its stream (run.ts).
  const terminal = values['output-file'] === undefined && io.isTTY;
  let root: string | undefined;
  return {
    cwd: io.cwd,
    get root() {
      return (root ??= repositoryRoot(io.cwd) ?? io.cwd);
    },
    color: terminal && !(io.env ?? {}).NO_COLOR,
    codeFrames: terminal && !values['no-code-frame'],
  };
}

/** Writes a report to --output-file (creating its folder) or to stdout. */
export function writeReport(text: string, outputFile: string | undefined, io: Io): void {
  if (outputFile === undefined) {
    if (text) io.stdout(text.endsWith('\n') ? text : `${text}\n`);
    return;
  }
  const path = resolve(io.cwd, outputFile);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text && !text.endsWith('\n') ? `${text}\n` : text);
  } catch (error) {
    throw new UsageError(`--output-file ${outputFile}: cannot write it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** --max-warnings: a whole number, -1 (the default) for no limit. */
export function parseMaxWarnings(value: string | undefined): number {
  if (value === undefined) return -1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < -1) throw new UsageError(`--max-warnings ${value}: expected a whole number (-1 for no limit)`);
  return n;
}

/** ESLint's exit code for a report: 1 when it has errors or more warnings than allowed, else 0. */
export function exitCodeOf(results: readonly FileResult[], maxWarnings: number, io: Io): 0 | 1 {
  const errors = results.reduce((n, r) => n + r.errorCount, 0);
  const warnings = results.reduce((n, r) => n + r.warningCount, 0);
  if (errors > 0) return 1;
  if (maxWarnings >= 0 && warnings > maxWarnings) {
    io.stderr(`pgq-audit found too many warnings (maximum: ${maxWarnings}).\n`);
    return 1;
  }
  return 0;
}
