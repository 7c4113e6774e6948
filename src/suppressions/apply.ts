// Applies a file's suppression directives to its findings, after every rule
// (per-file and project-wide) has reported: a finding of a named rule that
// starts on the target line is dropped. An invalid directive suppresses
// nothing and is reported; so is a valid one that suppressed nothing.
import { countSeverities, type FileResult, type Finding } from '../engine/findings.ts';
import type { ActiveRule } from '../engine/rule-config.ts';
import { sortFindings } from '../engine/run-rules.ts';
import { formatMessage } from '../model/index.ts';
import type { FileDirectives, SuppressionDirective } from './directives.ts';
import { invalidSuppression, unusedSuppression } from './meta-rules.ts';

export interface SuppressionOptions {
  /** Severity of unused-suppression: 0 off, 1 warn (the default), 2 error. */
  unused?: 0 | 1 | 2;
}

/** Filters `result.messages` in place and recounts; returns the result. */
export function applySuppressions(
  result: FileResult,
  file: FileDirectives | undefined,
  active: readonly ActiveRule[],
  options: SuppressionOptions = {},
): FileResult {
  if (!file || file.directives.length === 0) return result;
  const unusedSeverity = options.unused ?? 1;
  const extra: Finding[] = [];
  const used = new Set<string>();
  const valid = file.directives.filter((d) => !d.problem);
  result.messages = result.messages.filter((finding) => {
    if (finding.ruleId === null) return true; // parse errors cannot be suppressed
    const directive = valid.find((d) => d.targetLine === finding.line && d.rules.includes(finding.ruleId!));
    if (!directive) return true;
    used.add(`${file.directives.indexOf(directive)}:${finding.ruleId}`);
    return false;
  });
  for (const [index, directive] of file.directives.entries()) {
    if (directive.problem) {
      extra.push(diagnostic(directive, invalidSuppression.id, 2, directive.problem.messageId, directive.problem.data, invalidSuppression.messages));
      continue;
    }
    if (unusedSeverity === 0) continue;
    for (const rule of directive.rules) {
      if (used.has(`${index}:${rule}`)) continue;
      // A rule that is off, or does not read this language, cannot have reported: the directive is not stale.
      const running = active.find((a) => a.rule.id === rule);
      if (!running || !running.rule.languages.includes(file.language)) continue;
      extra.push(diagnostic(directive, unusedSuppression.id, unusedSeverity, 'unused', { rule, line: directive.targetLine }, unusedSuppression.messages));
    }
  }
  result.messages = sortFindings([...result.messages, ...extra]);
  return countSeverities(result);
}

function diagnostic(
  directive: SuppressionDirective,
  ruleId: string,
  severity: 1 | 2,
  messageId: string,
  data: Record<string, string | number>,
  messages: Record<string, string>,
): Finding {
  return {
    ruleId,
    severity,
    message: formatMessage(messages[messageId], data),
    messageId,
    span: directive.span,
    line: directive.line,
    column: directive.column,
    endLine: directive.endLine,
    endColumn: directive.endColumn,
  };
}
