// The programmatic entry point: `scan({ paths })` is what the CLI runs and
// what tests call directly.
import { readFile } from 'node:fs/promises';
import { countSeverities, type FileResult, type Finding } from '../engine/findings.ts';
import { activeRules, type RuleSettings } from '../engine/rule-config.ts';
import { collectProjectFacts, runProjectRules, type ProjectFacts } from '../engine/project-pass.ts';
import { runRules } from '../engine/run-rules.ts';
import { frontEndFor, supportedExtensions } from '../languages/index.ts';
import type { Severity } from '../model/index.ts';
import { loadSqlParser } from '../sql/index.ts';
import { applySuppressions, readDirectives, type FileDirectives } from '../suppressions/index.ts';
import { discoverFiles } from './discover.ts';
import { selectFiles, type FileSelection } from './select-files.ts';

export interface ScanOptions {
  paths: readonly string[];
  cwd?: string;
  rules?: RuleSettings;
  ignores?: readonly string[];
  queryFunctions?: readonly string[];
  /** --changed-since, --shard and config ignores (src/scan/select-files.ts). */
  selection?: FileSelection;
  /** Severity of pgq/unused-suppression (default warn). */
  reportUnusedSuppressions?: Severity;
  /** Called after each file is analysed. */
  onProgress?: (progress: { done: number; total: number; file: string }) => void;
}

export interface ScanResult {
  results: FileResult[];
  errorCount: number;
  warningCount: number;
}

export async function scan(options: ScanOptions): Promise<ScanResult> {
  await loadSqlParser();
  const active = activeRules(options.rules);
  const discovered = await discoverFiles(options.paths, { extensions: supportedExtensions(), ignores: options.ignores, cwd: options.cwd });
  const { files, all } = selectFiles(discovered, options.selection, options.cwd);
  // Files outside the selection are read only when a cross-file rule needs their facts.
  const reported = new Set(files);
  const read = active.some((a) => a.rule.collect) ? all : files;
  const results: FileResult[] = [];
  const projectFacts = new Map<string, ProjectFacts>();
  const directives = new Map<string, FileDirectives>();
  for (const [index, file] of read.entries()) {
    const outcome = await scanFile(file, active, options);
    if (reported.has(file)) results.push(outcome.result);
    if (outcome.facts) projectFacts.set(file, outcome.facts);
    if (outcome.directives) directives.set(file, outcome.directives);
    options.onProgress?.({ done: index + 1, total: read.length, file });
  }
  runProjectRules(active, projectFacts, results);
  const unused = { off: 0, warn: 1, error: 2 }[options.reportUnusedSuppressions ?? 'warn'] as 0 | 1 | 2;
  for (const result of results) applySuppressions(result, directives.get(result.filePath), active, { unused });
  return {
    results,
    errorCount: results.reduce((n, r) => n + r.errorCount, 0),
    warningCount: results.reduce((n, r) => n + r.warningCount, 0),
  };
}

interface FileOutcome {
  result: FileResult;
  /** Facts of this file for the cross-file rules. */
  facts?: ProjectFacts;
  /** Its pgq-audit-ignore-next-line comments, applied after the project pass. */
  directives?: FileDirectives;
}

async function scanFile(file: string, active: ReturnType<typeof activeRules>, options: ScanOptions): Promise<FileOutcome> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const message = fatalMessage(`Could not read the file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    return { result: countSeverities({ filePath: file, messages: [message], errorCount: 0, warningCount: 0 }) };
  }
  const frontEnd = frontEndFor(file);
  if (!frontEnd) return { result: { filePath: file, messages: [], errorCount: 0, warningCount: 0, source: text } };
  let messages: Finding[];
  let facts: ProjectFacts | undefined;
  let directives: FileDirectives | undefined;
  try {
    const model = frontEnd.parse(text, file, { queryFunctions: options.queryFunctions });
    messages = runRules(model, active);
    facts = collectProjectFacts(model, active);
    directives = readDirectives(model);
  } catch (error) {
    // A bug of ours on one file must not cost the user the rest of the scan.
    messages = [fatalMessage(`pgq-audit failed on this file: ${(error as Error).stack ?? error}`)];
  }
  return { result: countSeverities({ filePath: file, messages, errorCount: 0, warningCount: 0, source: text }), facts, directives };
}

function fatalMessage(message: string): Finding {
  return { ruleId: null, severity: 2, fatal: true, message, span: { start: 0, end: 0 }, line: 1, column: 1, endLine: 1, endColumn: 1 };
}
