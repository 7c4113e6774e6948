// Cross-file rules in two steps: each file's facts are collected while the
// file is analysed (in a worker, or read from the cache), then every
// project rule decides once per project unit over the facts of that unit's
// files (src/config/units.ts says which unit a file is in). Rules never see
// two units at once, so they need not know units exist.
import { displayPath } from '../model/cross-file.ts';
import { formatMessage, type FileModel } from '../model/index.ts';
import type { FileResult, Finding } from './findings.ts';
import { lineIndexOf } from '../model/lines.ts';
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

/** The findings the project pass adds, by file. JSON-serializable (the cache keeps them). */
export type ProjectFindings = Record<string, Finding[]>;

/**
 * Runs every project rule once per unit and adds its findings to the results
 * (in place); returns what it added. A rule that throws on a unit loses its
 * findings for that unit and leaves one internal-error message on the unit's
 * first reported file; every other rule and unit is still decided.
 */
export function runProjectRules(
  active: readonly ActiveRule[],
  factsByFile: ReadonlyMap<string, ProjectFacts>,
  results: FileResult[],
  unitOf: UnitOf = oneUnit,
): ProjectFindings {
  // A rule reports on the files it has facts of: most results (files without facts) are not looked at.
  const reported = new Set<string>();
  for (const result of results) if (factsByFile.has(result.filePath)) reported.add(result.filePath);
  const added: ProjectFindings = {};
  const add = (file: string, finding: Finding) => (added[file] ??= []).push(finding);
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
      const found: { file: string; finding: Finding }[] = [];
      try {
        rule.checkProject({
          files,
          options,
          report(report) {
            if (!reported.has(report.file)) return; // a file outside the scanned selection: it only lent facts
            found.push({
              file: report.file,
              finding: {
                ruleId: rule.id,
                severity,
                message: formatMessage(rule.messages[report.messageId] ?? report.messageId, report.data),
                messageId: report.messageId,
                span: { start: 0, end: 0 },
                ...report.location,
                ...(report.rewords ? { rewords: true } : {}),
              },
            });
          },
        });
      } catch (error) {
        const first = files.find((f) => reported.has(f.file));
        if (first) add(first.file, internalError(rule.id, `in the cross-file pass over ${root ? `the project unit ${displayPath(root)}` : 'the project'}`, error));
        continue;
      }
      for (const { file, finding } of found) add(file, finding);
    }
  }
  addProjectFindings(results, added);
  return added;
}

/** Adds findings of the project pass to their files' results (copies: the cache may hold the originals), sorted and counted. */
export function addProjectFindings(results: FileResult[], findings: ProjectFindings): void {
  if (Object.keys(findings).length === 0) return;
  for (const result of results) {
    if (!Object.hasOwn(findings, result.filePath)) continue;
    for (const { rewords, ...finding } of findings[result.filePath]) {
      // A finding worded again replaces the per-file one at its place; where that one is gone (suppressed, in the
      // baseline), so is it.
      const same = rewords ? result.messages.findIndex((m) => m.ruleId === finding.ruleId && m.line === finding.line && m.column === finding.column && !m.fatal) : -1;
      if (rewords && same < 0) continue;
      if (rewords) result.messages.splice(same, 1);
      result.messages.push({ ...finding });
    }
    sortFindings(result.messages);
    countSeverities(result);
  }
}
