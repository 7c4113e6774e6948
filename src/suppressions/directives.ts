// Reads `pgq-audit-ignore-next-line <rule-id>[, <rule-id>...] -- <reason>`
// from the directive comments a front end collected (FileModel.comments),
// whatever the comment marker of the language (--, #, //).
import { rules as allRules } from '../../rules/index.ts';
import { LineIndex } from '../engine/lines.ts';
import type { FileModel, Language, Span } from '../model/index.ts';
import { DIRECTIVE } from './meta-rules.ts';

export interface DirectiveProblem {
  messageId: 'missingReason' | 'noRule' | 'unknownRule' | 'unknownDirective';
  data: Record<string, string>;
}

export interface SuppressionDirective {
  span: Span;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** The line whose findings it suppresses. */
  targetLine: number;
  /** Bare rule ids. */
  rules: string[];
  reason: string;
  /** Set when the directive is invalid: it then suppresses nothing. */
  problem?: DirectiveProblem;
}

/** Everything the suppression step needs of one file. JSON-serializable, so it can cross worker threads. */
export interface FileDirectives {
  language: Language;
  directives: SuppressionDirective[];
}

export function readDirectives(model: FileModel): FileDirectives | undefined {
  if (model.fatal || model.comments.length === 0) return undefined;
  const lines = new LineIndex(model.text);
  const directives: SuppressionDirective[] = [];
  const directiveOnlyLines = new Set<number>();
  for (const comment of model.comments) {
    const match = /^(pgq-audit-[\w-]*)(?:\s+([\s\S]*))?$/.exec(comment.text);
    if (!match) continue; // the word appears in prose inside a comment: not a directive
    const start = lines.position(comment.span.start);
    const end = lines.position(comment.span.end);
    const before = model.text.slice(comment.span.start - (start.column - 1), comment.span.start);
    if (before.trim() === '') directiveOnlyLines.add(start.line);
    const directive: SuppressionDirective = {
      span: comment.span,
      line: start.line,
      column: start.column,
      endLine: end.line,
      endColumn: end.column,
      targetLine: start.line + 1,
      rules: [],
      reason: '',
    };
    directive.problem = parseBody(match[1], match[2] ?? '', directive);
    directives.push(directive);
  }
  if (directives.length === 0) return undefined;
  // Stacked directives (one per line, above the same line) all aim at the first line that is not one.
  for (const directive of directives) {
    while (directiveOnlyLines.has(directive.targetLine)) directive.targetLine++;
  }
  return { language: model.language, directives };
}

function parseBody(name: string, body: string, directive: SuppressionDirective): DirectiveProblem | undefined {
  if (name !== DIRECTIVE) return { messageId: 'unknownDirective', data: { directive: name, valid: DIRECTIVE } };
  const separator = /(?:^|\s)--(?:\s|$)/.exec(body);
  const rulePart = separator ? body.slice(0, separator.index) : body;
  directive.reason = separator ? body.slice(separator.index + separator[0].length).trim() : '';
  directive.rules = rulePart
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((id) => id.replace(/^pgq\//, ''));
  if (directive.rules.length === 0) return { messageId: 'noRule', data: {} };
  const unknown = directive.rules.find((id) => !allRules.some((r) => r.id === id));
  if (unknown) return { messageId: 'unknownRule', data: { rule: unknown, valid: allRules.map((r) => r.id).join(', ') } };
  if (!directive.reason) return { messageId: 'missingReason', data: { rules: directive.rules.join(', ') } };
  return undefined;
}
