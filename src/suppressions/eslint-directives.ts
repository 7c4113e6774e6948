// ESLint's own disable comments in TS/JS, read the way ESLint 9 and 10 read
// them, so that one comment serves `pgq-audit scan` and the ESLint plugin:
//
//   // eslint-disable-next-line pgq/<rule>[, ...] [-- reason]   the next line (after a block comment: the line after its end)
//   code(); // eslint-disable-line pgq/<rule>                   its own line (a block comment must not span lines)
//   /* eslint-disable pgq/<rule> */ ... /* eslint-enable pgq/<rule> */   from the comment on (block comments only)
//
// Rules are separated by commas; a reason after ` -- ` is optional, as in
// ESLint. A directive that names no rule applies to every rule, pgq/ ones
// included, as in ESLint. Names of other plugins' rules are ESLint's business:
// they are ignored here. Where ESLint would ignore a directive or report it
// (a line comment `// eslint-disable`, an `eslint-disable-line` over several
// lines, a pgq/ rule the plugin does not have), it suppresses nothing here
// either, and is reported.
import type { DirectiveProblem, SuppressionDirective } from './directives.ts';

/** The directive at the start of a comment, as ESLint matches it (lower case, then a space or the end). */
const ESLINT_DIRECTIVE = /^(eslint-disable-next-line|eslint-disable-line|eslint-disable|eslint-enable)(?:\s|$)/;

/** ESLint's separator of the reason: two or more dashes with whitespace on both sides. */
const REASON = /\s-{2,}\s/;

/** Whether a comment's text is an ESLint disable or enable directive, whatever rules it names. */
export function isEslintDirective(value: string): boolean {
  const separator = REASON.exec(value);
  return ESLINT_DIRECTIVE.test((separator ? value.slice(0, separator.index) : value).trim());
}

export interface EslintComment {
  /** The comment's text without its markers. */
  value: string;
  block: boolean;
  start: { line: number; column: number };
  end: { line: number; column: number };
}

/**
 * The directive of one ESLint comment, or undefined when it is not a directive
 * or concerns no pgq/ rule. `ruleIds` are the ids of the rules ESLint runs for
 * pgq/ (those that read TypeScript).
 */
export function readEslintDirective(comment: EslintComment, ruleIds: readonly string[]): Omit<SuppressionDirective, 'span' | 'line' | 'column' | 'endLine' | 'endColumn'> | undefined {
  const separator = REASON.exec(comment.value);
  const directivePart = (separator ? comment.value.slice(0, separator.index) : comment.value).trim();
  const reason = separator ? comment.value.slice(separator.index + separator[0].length).trim() : '';
  const match = ESLINT_DIRECTIVE.exec(directivePart);
  if (!match) return undefined;
  const label = match[1];
  const names = directivePart
    .slice(label.length)
    .split(',')
    .map((name) => name.trim().replace(/^(['"]?)(.*)\1$/s, '$2'))
    .filter(Boolean);
  const ours = names.filter((name) => name.startsWith('pgq/')).map((name) => name.slice('pgq/'.length));
  const allRules = names.length === 0;
  // Other plugins' rules only: nothing of ours to suppress or check.
  if (!allRules && ours.length === 0) return undefined;
  const kind = label === 'eslint-disable' ? 'disable' : label === 'eslint-enable' ? 'enable' : 'line';
  const targetLine = label === 'eslint-disable-next-line' ? comment.end.line + 1 : comment.start.line;
  const directive: Omit<SuppressionDirective, 'span' | 'line' | 'column' | 'endLine' | 'endColumn'> = { kind, eslint: label, targetLine, rules: ours, reason };
  if (allRules) directive.allRules = true;
  directive.problem = problemOf(label, comment, ours, ruleIds);
  // ESLint ignores a bare line comment `// eslint-disable` silently; so do we (it names no rule of ours).
  if (directive.problem?.messageId === 'lineComment' && allRules) return undefined;
  return directive;
}

function problemOf(label: string, comment: EslintComment, ours: readonly string[], ruleIds: readonly string[]): DirectiveProblem | undefined {
  if (!comment.block && (label === 'eslint-disable' || label === 'eslint-enable')) {
    return { messageId: 'lineComment', data: { directive: label, rules: ours.map((id) => `pgq/${id}`).join(', ') } };
  }
  if (label === 'eslint-disable-line' && comment.start.line !== comment.end.line) return { messageId: 'multiLine', data: {} };
  const unknown = ours.find((id) => !ruleIds.includes(id));
  if (unknown) return { messageId: 'unknownRule', data: { rule: `pgq/${unknown}`, valid: ruleIds.map((id) => `pgq/${id}`).join(', ') } };
  return undefined;
}
