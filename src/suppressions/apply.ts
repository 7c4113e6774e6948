// Applies a file's suppression directives to its findings, after every rule
// (per-file and project-wide) has reported. A line directive (pgq-audit's own,
// eslint-disable-next-line, eslint-disable-line) drops the findings of the
// rules it names that start on its target line. ESLint's block comments work
// as in ESLint: a finding is dropped when, of the eslint-disable and
// eslint-enable comments before it that concern its rule (by name, or naming
// none), the last is an eslint-disable. An invalid directive suppresses
// nothing and is reported; so is a valid one that suppressed nothing.
// One pass over findings and directives in order of position.
import { countSeverities, type FileResult, type Finding } from '../engine/findings.ts';
import type { ActiveRule, RuleBase } from '../engine/rule-config.ts';
import { sortFindings } from '../engine/run-rules.ts';
import { formatMessage } from '../model/index.ts';
import type { FileDirectives, SuppressionDirective } from './directives.ts';
import { invalidSuppression, unusedSuppression } from './meta-rules.ts';

export interface SuppressionOptions {
  /** Severity of unused-suppression: 0 off, 1 warn (the default), 2 error. */
  unused?: 0 | 1 | 2;
}

/** `${directive index}:${rule id}`, or `${index}:*` for one that names no rule. */
type Use = string;

/** Filters `result.messages` in place and recounts; returns the result. */
export function applySuppressions(
  result: FileResult,
  file: FileDirectives | undefined,
  active: readonly ActiveRule<RuleBase>[],
  options: SuppressionOptions = {},
): FileResult {
  if (!file || file.directives.length === 0) return result;
  const unusedSeverity = options.unused ?? 1;
  const { directives } = file;
  const used = new Set<Use>();
  const unmatchedEnables = new Set<Use>();

  const byTargetLine = new Map<number, number[]>();
  const blocks: number[] = [];
  for (const [index, directive] of directives.entries()) {
    if (directive.problem) continue;
    if ((directive.kind ?? 'line') !== 'line') blocks.push(index);
    else if (byTargetLine.has(directive.targetLine)) byTargetLine.get(directive.targetLine)!.push(index);
    else byTargetLine.set(directive.targetLine, [index]);
  }
  blocks.sort((a, b) => compare(directives[a], directives[b]));

  // The block state at the current position: the last eslint-disable/enable per rule and for every rule, by order.
  let order = 0;
  let lastAll: { index: number; kind: 'disable' | 'enable'; order: number } | undefined;
  const lastByRule = new Map<string, { index: number; kind: 'disable' | 'enable'; order: number }>();
  const inForce = (rule: string) => {
    const own = lastByRule.get(rule);
    const last = !lastAll || (own && own.order > lastAll.order) ? own : lastAll;
    return last?.kind === 'disable' ? last : undefined;
  };
  let next = 0;
  const advanceTo = (at: { line: number; column: number }) => {
    for (; next < blocks.length && compare(directives[blocks[next]], at) <= 0; next++) {
      const index = blocks[next];
      const directive = directives[index];
      const kind = directive.kind as 'disable' | 'enable';
      const event = { index, kind, order: order++ };
      if (directive.allRules) {
        lastAll = event;
        continue;
      }
      for (const rule of directive.rules) {
        if (kind === 'enable' && !inForce(rule)) unmatchedEnables.add(`${index}:${rule}`);
        lastByRule.set(rule, event);
      }
    }
  };

  const dropped = new Set<Finding>();
  for (const finding of [...result.messages].sort(compare)) {
    const rule = finding.ruleId;
    if (rule === null) continue; // parse errors cannot be suppressed
    advanceTo(finding);
    const onLine = byTargetLine.get(finding.line)?.find((i) => directives[i].allRules || directives[i].rules.includes(rule));
    const block = onLine === undefined ? inForce(rule)?.index : undefined;
    const by = onLine ?? block;
    if (by === undefined) continue;
    used.add(directives[by].allRules ? `${by}:*` : `${by}:${rule}`);
    dropped.add(finding);
  }
  advanceTo({ line: Number.MAX_SAFE_INTEGER, column: 0 });
  result.messages = result.messages.filter((m) => !dropped.has(m));

  const extra: Finding[] = [];
  for (const [index, directive] of directives.entries()) {
    if (directive.problem) {
      extra.push(diagnostic(directive, invalidSuppression.id, 2, directive.problem.messageId, directive.problem.data, invalidSuppression.messages));
      continue;
    }
    if (unusedSeverity === 0 || directive.allRules) continue;
    for (const rule of directive.rules) {
      const data = { rule, line: directive.targetLine, directive: directive.eslint ?? '' };
      if (directive.kind === 'enable') {
        if (unmatchedEnables.has(`${index}:${rule}`)) extra.push(diagnostic(directive, unusedSuppression.id, unusedSeverity, 'unusedEnable', data, unusedSuppression.messages));
        continue;
      }
      if (used.has(`${index}:${rule}`)) continue;
      // A rule that is off, or does not read this language, cannot have reported: the directive is not stale.
      const running = active.find((a) => a.rule.id === rule);
      if (!running || !running.rule.languages.includes(file.language)) continue;
      const messageId = directive.kind === 'disable' ? 'unusedRange' : directive.eslint === 'eslint-disable-line' ? 'unusedLine' : 'unused';
      extra.push(diagnostic(directive, unusedSuppression.id, unusedSeverity, messageId, data, unusedSuppression.messages));
    }
  }
  result.messages = sortFindings([...result.messages, ...extra]);
  return countSeverities(result);
}

function compare(a: { line: number; column: number }, b: { line: number; column: number }): number {
  return a.line - b.line || a.column - b.column;
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
