// Cross-file rules in two steps: each file's facts are collected while the
// file is analysed (in a worker, or read from the cache), then every
// project rule decides once over the facts of all files.
import { formatMessage, type FileModel } from '../model/index.ts';
import type { FileResult, Finding } from './findings.ts';
import { LineIndex } from './lines.ts';
import type { ActiveRule } from './rule-config.ts';
import { countSeverities } from './findings.ts';
import { sortFindings } from './run-rules.ts';

/** Per file: rule id -> the facts that rule collected. JSON-serializable. */
export type ProjectFacts = Record<string, unknown>;

export function collectProjectFacts(model: FileModel, active: readonly ActiveRule[]): ProjectFacts | undefined {
  if (model.fatal) return undefined;
  let lines: LineIndex | undefined;
  const locate = (span: { start: number; end: number }) => (lines ??= new LineIndex(model.text)).location(span);
  let facts: ProjectFacts | undefined;
  for (const { rule, options } of active) {
    if (!rule.collect || !rule.languages.includes(model.language)) continue;
    const collected = rule.collect({ file: model, options, locate });
    if (collected !== undefined) (facts ??= {})[rule.id] = collected;
  }
  return facts;
}

/** Runs every project rule and adds its findings to the results (in place). */
export function runProjectRules(
  active: readonly ActiveRule[],
  factsByFile: ReadonlyMap<string, ProjectFacts>,
  results: FileResult[],
): void {
  const byPath = new Map(results.map((r) => [r.filePath, r]));
  for (const { rule, severity, options } of active) {
    if (!rule.checkProject) continue;
    const files: { file: string; facts: unknown }[] = [];
    for (const [file, facts] of factsByFile) if (rule.id in facts) files.push({ file, facts: facts[rule.id] });
    files.sort((a, b) => a.file.localeCompare(b.file));
    rule.checkProject({
      files,
      options,
      report(report) {
        const result = byPath.get(report.file);
        if (!result) return; // a file outside the scanned selection: it only lent facts
        const finding: Finding = {
          ruleId: rule.id,
          severity,
          message: formatMessage(rule.messages[report.messageId] ?? report.messageId, report.data),
          messageId: report.messageId,
          span: { start: 0, end: 0 },
          ...report.location,
        };
        result.messages.push(finding);
      },
    });
  }
  for (const result of results) {
    sortFindings(result.messages);
    countSeverities(result);
  }
}
