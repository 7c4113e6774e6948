// Cross-file rules in two steps: each file's facts are collected while the
// file is analysed (in a worker, or read from the cache), then every
// project rule decides once per project unit over the facts of that unit's
// files (src/config/units.ts says which unit a file is in). Rules never see
// two units at once, so they need not know units exist.
import { displayPath } from '../model/cross-file.ts';
import { formatMessage, type FileModel } from '../model/index.ts';
import type { FileResult, Finding } from './findings.ts';
import { lineIndexOf } from './lines.ts';
import type { ActiveRule } from './rule-config.ts';
import { countSeverities, internalError } from './findings.ts';
import { sortFindings } from './run-rules.ts';

/** Per file: rule id -> the facts that rule collected. JSON-serializable. */
export type ProjectFacts = Record<string, unknown>;

/** The unit a file belongs to: files with the same root are judged together. */
export interface UnitOf {
  (file: string): { root: string; defaultSchema?: string };
}

/** Every file in one unit: what callers without units (tests, one project) get. */
const oneUnit: UnitOf = () => ({ root: '' });

/**
 * The facts of one file for every cross-file rule. A rule whose `collect`
 * throws lends no facts from this file; when `messages` (the file's findings)
 * is given, it gets one internal-error message for it, unless that rule's
 * per-file check already failed there.
 */
export function collectProjectFacts(model: FileModel, active: readonly ActiveRule[], messages?: Finding[]): ProjectFacts | undefined {
  if (model.fatal) return undefined;
  const locate = (span: { start: number; end: number }) => lineIndexOf(model.text).location(span);
  let facts: ProjectFacts | undefined;
  for (const { rule, options } of active) {
    if (!rule.collect || !rule.languages.includes(model.language)) continue;
    let collected: unknown;
    try {
      collected = rule.collect({ file: model, options, locate });
    } catch (error) {
      if (messages && !messages.some((m) => m.failedRule === rule.id)) messages.push(internalError(rule.id, 'reading this file for the cross-file pass', error));
      continue;
    }
    if (collected !== undefined) (facts ??= {})[rule.id] = collected;
  }
  return facts;
}

/**
 * Runs every project rule once per unit and adds its findings to the results
 * (in place). A rule that throws on a unit loses its findings for that unit
 * and leaves one internal-error message on the unit's first reported file;
 * every other rule and unit is still decided.
 */
export function runProjectRules(
  active: readonly ActiveRule[],
  factsByFile: ReadonlyMap<string, ProjectFacts>,
  results: FileResult[],
  unitOf: UnitOf = oneUnit,
): void {
  // A rule reports on the files it has facts of: most results (files without facts) are not looked at.
  const byPath = new Map<string, FileResult>();
  for (const result of results) if (factsByFile.has(result.filePath)) byPath.set(result.filePath, result);
  const touched = new Set<FileResult>();
  const units = new Map<string, { file: string; facts: ProjectFacts; defaultSchema?: string }[]>();
  for (const [file, facts] of factsByFile) {
    const unit = unitOf(file);
    let files = units.get(unit.root);
    if (!files) units.set(unit.root, (files = []));
    files.push(unit.defaultSchema === undefined ? { file, facts } : { file, facts, defaultSchema: unit.defaultSchema });
  }
  const ordered = [...units.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const [, unitFiles] of ordered) unitFiles.sort((a, b) => a.file.localeCompare(b.file));

  for (const { rule, severity, options } of active) {
    if (!rule.checkProject) continue;
    for (const [root, unitFiles] of ordered) {
      const files = unitFiles.filter((f) => rule.id in f.facts).map((f) => ({ ...f, facts: f.facts[rule.id] }));
      if (files.length === 0) continue;
      const found: { result: FileResult; finding: Finding }[] = [];
      try {
        rule.checkProject({
          files,
          options,
          report(report) {
            const result = byPath.get(report.file);
            if (!result) return; // a file outside the scanned selection: it only lent facts
            found.push({
              result,
              finding: {
                ruleId: rule.id,
                severity,
                message: formatMessage(rule.messages[report.messageId] ?? report.messageId, report.data),
                messageId: report.messageId,
                span: { start: 0, end: 0 },
                ...report.location,
              },
            });
          },
        });
      } catch (error) {
        const first = files.map((f) => byPath.get(f.file)).find((r) => r !== undefined);
        if (first) {
          first.messages.push(internalError(rule.id, `in the cross-file pass over ${root ? `the project unit ${displayPath(root)}` : 'the project'}`, error));
          touched.add(first);
        }
        continue;
      }
      for (const { result, finding } of found) {
        result.messages.push(finding);
        touched.add(result);
      }
    }
  }
  for (const result of touched) {
    sortFindings(result.messages);
    countSeverities(result);
  }
}
