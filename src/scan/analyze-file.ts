// One file's analysis: front end, per-file rules, facts for the cross-file
// rules, suppression comments. The one code path for it: the scan runs it
// in-process for small scans and in worker threads (worker.ts) for large
// ones, and the cache stores its result.
import type { Finding } from '../engine/findings.ts';
import { collectProjectFacts, type ProjectFacts } from '../engine/project-pass.ts';
import { activeRules, type ActiveRule, type RuleSetting } from '../engine/rule-config.ts';
import { runRules } from '../engine/run-rules.ts';
import { frontEndFor } from '../languages/index.ts';
import { readDirectives, type FileDirectives } from '../suppressions/index.ts';
import { runEachWithin } from './budget.ts';
import type { PoolFile, PoolOutcome } from './pool.ts';

/** Everything that decides a file's analysis besides its text. JSON, so it crosses threads and keys the cache. */
export interface AnalysisConfig {
  /** Every rule id, with its resolved severity and options ('off' for rules that do not run). */
  rules: Record<string, RuleSetting>;
  queryFunctions?: readonly string[];
  sql?: { dialectDetection?: 'warn' | 'quiet' | 'off' };
}

/** A file's analysis. JSON-serializable: it crosses worker threads and lives in the cache. */
export interface FileAnalysis {
  messages: Finding[];
  /** Facts of this file for the cross-file rules. */
  facts?: ProjectFacts;
  /** Its pgq-audit-ignore-next-line comments, applied after the project pass. */
  directives?: FileDirectives;
  /** Other files the analysis read (a TS/JS file's imported pool module): the cache checks them too. */
  dependencies?: string[];
}

/** The config that runs exactly `active` (rules left out of it are off). */
export function analysisConfig(
  active: readonly ActiveRule[],
  all: readonly { id: string }[],
  queryFunctions?: readonly string[],
  sql?: AnalysisConfig['sql'],
): AnalysisConfig {
  const rules: Record<string, RuleSetting> = {};
  for (const { id } of all) rules[id] = { severity: 'off' };
  for (const { rule, severity, options } of active) rules[rule.id] = { severity: severity === 2 ? 'error' : 'warn', options };
  const config: AnalysisConfig = queryFunctions && queryFunctions.length > 0 ? { rules, queryFunctions } : { rules };
  if (sql?.dialectDetection) config.sql = sql;
  return config;
}

const activeByConfig = new WeakMap<AnalysisConfig, ActiveRule[]>();

function activeOf(config: AnalysisConfig): ActiveRule[] {
  let active = activeByConfig.get(config);
  if (!active) {
    active = activeRules(config.rules);
    activeByConfig.set(config, active);
  }
  return active;
}

/** Analyses one file's text. Never throws: a bug of ours on one file is one fatal message for that file. */
export function scanFileText(file: string, text: string, config: AnalysisConfig): FileAnalysis {
  const frontEnd = frontEndFor(file);
  if (!frontEnd) return { messages: [] };
  try {
    const active = activeOf(config);
    const model = frontEnd.parse(text, file, { queryFunctions: config.queryFunctions, sql: config.sql });
    const messages = runRules(model, active);
    const analysis: FileAnalysis = { messages };
    const facts = collectProjectFacts(model, active, messages);
    if (facts) analysis.facts = facts;
    const directives = readDirectives(model);
    if (directives) analysis.directives = directives;
    if (model.dependencies && model.dependencies.length > 0) analysis.dependencies = model.dependencies;
    return analysis;
  } catch (error) {
    // A bug of ours on one file must not cost the user the rest of the scan.
    return { messages: [fileMessage(`pgq-audit failed on this file: ${(error as Error)?.stack ?? error}`, 2, true)] };
  }
}

/** A message about the file as a whole (ruleId null), at line 1. */
export function fileMessage(message: string, severity: 1 | 2, fatal: boolean, messageId?: string): Finding {
  const finding: Finding = { ruleId: null, severity, message, span: { start: 0, end: 0 }, line: 1, column: 1, endLine: 1, endColumn: 1 };
  if (fatal) finding.fatal = true;
  if (messageId) finding.messageId = messageId;
  return finding;
}

/**
 * Analyses files on this thread, one after another, each within `timeBudget` ms (budget.ts): the
 * outcomes a worker would give, but for memory. `interrupted`: one was stopped mid-way.
 */
export function analyseWithin(timeBudget: number, files: readonly PoolFile[], config: AnalysisConfig): { outcomes: PoolOutcome[]; interrupted: boolean } {
  const { results, interrupted } = runEachWithin(
    timeBudget,
    files.map(({ file, text }) => () => scanFileText(file, text, config)),
  );
  return { outcomes: results.map((result) => (result.done ? { kind: 'done', analysis: result.value } : { kind: 'timeout' })), interrupted };
}
