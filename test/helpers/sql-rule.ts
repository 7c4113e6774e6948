// Runs one rule on a snippet of SQL, RuleTester-style, for precise position checks.
import type { Finding } from '../../src/engine/findings.ts';
import { activeRules, type RuleSettings } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

export interface ExpectedError {
  messageId: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
}

export function runSqlRule(ruleId: string, code: string, options?: Record<string, unknown>): Finding[] {
  const settings: RuleSettings = {};
  const all = activeRules();
  for (const { rule } of all) settings[rule.id] = rule.id === ruleId ? { severity: 'error', options } : 'off';
  return runRules(sqlFrontEnd.parse(code, 'snippet.sql', {}), activeRules(settings, allRules)).filter((f) => f.ruleId === ruleId);
}

export function summarize(findings: Finding[]): ExpectedError[] {
  return findings.map((f) => ({ messageId: f.messageId ?? '', line: f.line, column: f.column, endLine: f.endLine, endColumn: f.endColumn }));
}
