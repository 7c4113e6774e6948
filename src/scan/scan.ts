// The programmatic entry point: `scan({ paths })` is what the CLI runs and
// what tests call directly.
import { readFile } from 'node:fs/promises';
import { countSeverities, type FileResult, type Finding } from '../engine/findings.ts';
import { activeRules, type RuleSettings } from '../engine/rule-config.ts';
import { collectProjectFacts, runProjectRules, type ProjectFacts } from '../engine/project-pass.ts';
import { runRules } from '../engine/run-rules.ts';
import { frontEndFor, supportedExtensions } from '../languages/index.ts';
import { loadSqlParser } from '../sql/index.ts';
import { discoverFiles } from './discover.ts';

export interface ScanOptions {
  paths: readonly string[];
  cwd?: string;
  rules?: RuleSettings;
  ignores?: readonly string[];
  queryFunctions?: readonly string[];
}

export interface ScanResult {
  results: FileResult[];
  errorCount: number;
  warningCount: number;
}

export async function scan(options: ScanOptions): Promise<ScanResult> {
  await loadSqlParser();
  const active = activeRules(options.rules);
  const files = await discoverFiles(options.paths, { extensions: supportedExtensions(), ignores: options.ignores, cwd: options.cwd });
  const results: FileResult[] = [];
  const projectFacts = new Map<string, ProjectFacts>();
  for (const file of files) {
    const { result, facts } = await scanFile(file, active, options);
    results.push(result);
    if (facts) projectFacts.set(file, facts);
  }
  runProjectRules(active, projectFacts, results);
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
  try {
    const model = frontEnd.parse(text, file, { queryFunctions: options.queryFunctions });
    messages = runRules(model, active);
    facts = collectProjectFacts(model, active);
  } catch (error) {
    // A bug of ours on one file must not cost the user the rest of the scan.
    messages = [fatalMessage(`pgq-audit failed on this file: ${(error as Error).stack ?? error}`)];
  }
  return { result: countSeverities({ filePath: file, messages, errorCount: 0, warningCount: 0, source: text }), facts };
}

function fatalMessage(message: string): Finding {
  return { ruleId: null, severity: 2, fatal: true, message, span: { start: 0, end: 0 }, line: 1, column: 1, endLine: 1, endColumn: 1 };
}
