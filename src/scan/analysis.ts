// What one file's analysis is: the config that decides it and the result it
// gives, which cross worker threads and live in the cache. Apart from
// analyze-file.ts, which runs it: a scan loads that only when some file is
// not served from the cache.
import type { Finding } from '../engine/findings.ts';
import type { ProjectFacts } from '../engine/project-pass.ts';
import type { ActiveRule, RuleBase, RuleSetting } from '../engine/rule-config.ts';
import type { FileDirectives } from '../suppressions/index.ts';

/** Everything that decides a file's analysis besides its text. JSON, so it crosses threads and keys the cache. */
export interface AnalysisConfig {
  /** Every rule id, with its resolved severity and options ('off' for rules that do not run). */
  rules: Record<string, RuleSetting>;
  queryFunctions?: readonly string[];
  sql?: { dialectDetection?: 'warn' | 'quiet' | 'off' };
  /** Steps of work above which a file's analysis is stopped and the file skipped (work.ts; 0: no bound). Default DEFAULT_MAX_ANALYSIS_STEPS. */
  maxAnalysisSteps?: number;
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
  /** Set when the analysis was stopped (a skipped file): the limits it was stopped under. */
  limits?: { timeBudget: number; memoryLimit: number };
  /** The analysis ran out of stack (nesting deeper than its recursion goes): the scan tries again on a deeper stack. */
  stackOverflow?: true;
}

/** The config that runs exactly `active` (rules left out of it are off). */
export function analysisConfig(
  active: readonly ActiveRule<RuleBase>[],
  all: readonly { id: string }[],
  queryFunctions?: readonly string[],
  sql?: AnalysisConfig['sql'],
  maxAnalysisSteps?: number,
): AnalysisConfig {
  const rules: Record<string, RuleSetting> = {};
  for (const { id } of all) rules[id] = { severity: 'off' };
  for (const { rule, severity, options } of active) rules[rule.id] = { severity: severity === 2 ? 'error' : 'warn', options };
  const config: AnalysisConfig = queryFunctions && queryFunctions.length > 0 ? { rules, queryFunctions } : { rules };
  if (sql?.dialectDetection) config.sql = sql;
  if (maxAnalysisSteps !== undefined) config.maxAnalysisSteps = maxAnalysisSteps;
  return config;
}

/** A message about the file as a whole (ruleId null), at line 1. */
export function fileMessage(message: string, severity: 1 | 2, fatal: boolean, messageId?: string): Finding {
  const finding: Finding = { ruleId: null, severity, message, span: { start: 0, end: 0 }, line: 1, column: 1, endLine: 1, endColumn: 1 };
  if (fatal) finding.fatal = true;
  if (messageId) finding.messageId = messageId;
  return finding;
}
