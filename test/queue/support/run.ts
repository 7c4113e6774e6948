// Runs rules over a few in-memory files the way `pgq-audit scan` does: the
// per-file pass, then the project pass over the facts of every file. The
// front end follows the file name (`.sql`, `.ts`, `.py`).
import { countSeverities, type FileResult, type Finding } from '../../../src/engine/findings.ts';
import { collectProjectFacts, runProjectRules, type ProjectFacts } from '../../../src/engine/project-pass.ts';
import { activeRules, type RuleSettings } from '../../../src/engine/rule-config.ts';
import { rules as allRules } from '../../../rules/index.ts';
import { runRules } from '../../../src/engine/run-rules.ts';
import { frontEndFor } from '../../../src/languages/index.ts';
import { sqlFrontEnd } from '../../../src/languages/sql/index.ts';
import { loadSqlParser } from '../../../src/sql/index.ts';

await loadSqlParser();

export interface FileFinding {
  file: string;
  messageId: string;
  line: number;
  column: number;
  message: string;
}

/** `files`: name -> source. Only `ruleId` is on (with `options`). */
export function runProject(ruleId: string, files: Record<string, string>, options?: Record<string, unknown>): FileFinding[] {
  const settings: RuleSettings = {};
  for (const { rule } of activeRules()) settings[rule.id] = rule.id === ruleId ? { severity: 'error', options } : 'off';
  const active = activeRules(settings, allRules);
  const results: FileResult[] = [];
  const facts = new Map<string, ProjectFacts>();
  for (const [file, text] of Object.entries(files)) {
    const model = (frontEndFor(file) ?? sqlFrontEnd).parse(text, file, {});
    results.push(countSeverities({ filePath: file, messages: runRules(model, active), errorCount: 0, warningCount: 0 }));
    const collected = collectProjectFacts(model, active);
    if (collected) facts.set(file, collected);
  }
  runProjectRules(active, facts, results);
  return results.flatMap((r) =>
    r.messages.map((m: Finding) => ({ file: r.filePath, messageId: m.messageId ?? String(m.ruleId), line: m.line, column: m.column, message: m.message })),
  );
}

/** The per-file pass alone, as ESLint runs it. */
export function runFileOnly(ruleId: string, file: string, text: string, options?: Record<string, unknown>): FileFinding[] {
  const settings: RuleSettings = {};
  for (const { rule } of activeRules()) settings[rule.id] = rule.id === ruleId ? { severity: 'error', options } : 'off';
  const model = (frontEndFor(file) ?? sqlFrontEnd).parse(text, file, {});
  return runRules(model, activeRules(settings, allRules)).map((m) => ({ file, messageId: m.messageId ?? '', line: m.line, column: m.column, message: m.message }));
}

export const brief = (findings: FileFinding[]) => findings.map((f) => `${f.file}:${f.line}:${f.column} ${f.messageId}`);
