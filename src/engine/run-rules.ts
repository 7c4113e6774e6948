// Runs the active rules on one file's model and turns reports into findings.
import { formatMessage, type FileModel } from '../model/index.ts';
import { internalError, type Finding } from './findings.ts';
import { lineIndexOf } from '../model/lines.ts';
import type { ActiveRule } from './rule-config.ts';

export function runRules(model: FileModel, active: readonly ActiveRule[]): Finding[] {
  // Indexed when a finding is first placed: most files get none.
  let lines: ReturnType<typeof lineIndexOf> | undefined;
  const locate = (span: { start: number; end: number }) => (lines ??= lineIndexOf(model.text)).location(span);
  if (model.fatal) {
    return [{ ruleId: null, severity: 2, fatal: true, message: model.fatal.message, span: model.fatal.span, ...locate(model.fatal.span) }];
  }
  if (model.skipped) {
    return [{ ruleId: null, severity: 1, messageId: model.skipped.messageId ?? 'not-postgresql', message: model.skipped.message, span: model.skipped.span, ...locate(model.skipped.span) }];
  }
  const findings: Finding[] = [];
  if (model.notRead) findings.push({ ruleId: null, severity: 1, messageId: 'newer-postgresql', message: model.notRead.message, span: model.notRead.span, ...locate(model.notRead.span) });
  if (model.sqlErrors.length > 0) {
    // One diagnostic per file for the statements that did not parse; the rest were analysed.
    const [first] = model.sqlErrors;
    const more = model.sqlErrors.length - 1;
    const others = more > 0 ? ` (and ${more} more statement${more > 1 ? 's' : ''} that did not parse)` : '';
    const hint = model.parseErrorHint ? `. ${model.parseErrorHint}` : '';
    if (model.language === 'sql') {
      findings.push({ ruleId: null, severity: 2, fatal: true, message: `Parsing error: ${first.message}${others}${hint}`, span: first.span, ...locate(first.span) });
    } else {
      // The file itself parsed: SQL in one of its strings that does not (a test that sends bad SQL on purpose) is worth a look, not a failed run.
      findings.push({ ruleId: null, severity: 1, messageId: 'sql-syntax', message: `SQL in a string does not parse: ${first.message}${others}${hint}`, span: first.span, ...locate(first.span) });
    }
  }
  for (const { rule, severity, options } of active) {
    if (!rule.languages.includes(model.language)) continue;
    // A rule that throws loses its own findings on this file, and only those.
    const own: Finding[] = [];
    try {
      rule.check({
        file: model,
        options,
        report(report) {
          own.push({
            ruleId: rule.id,
            severity,
            message: formatMessage(rule.messages[report.messageId] ?? report.messageId, report.data),
            messageId: report.messageId,
            span: report.span,
            suggestions: report.suggestions,
            ...locate(report.span),
          });
        },
      });
      findings.push(...own);
    } catch (error) {
      findings.push(internalError(rule.id, 'on this file', error));
    }
  }
  return sortFindings(dedupe(findings));
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.ruleId}:${f.span.start}:${f.span.end}:${f.messageId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort((a, b) => a.line - b.line || a.column - b.column || String(a.ruleId).localeCompare(String(b.ruleId)));
}
