// Reads `pgq-audit-ignore-next-line <rule-id>[, <rule-id>...] -- <reason>`
// from the directive comments a front end collected (FileModel.comments),
// whatever the comment marker of the language (--, #, //), and in TS/JS the
// ESLint disable comments that name pgq/ rules (eslint-directives.ts).
import { ruleMeta as allRules } from '../../rules/meta.ts';
import { lineIndexOf } from '../model/lines.ts';
import type { FileModel, Language, Span } from '../model/index.ts';
import { isEslintDirective, readEslintDirective } from './eslint-directives.ts';
import { DIRECTIVE } from './meta-rules.ts';

export interface DirectiveProblem {
  messageId: 'missingReason' | 'noRule' | 'unknownRule' | 'unknownDirective' | 'lineComment' | 'multiLine';
  data: Record<string, string>;
}

export interface SuppressionDirective {
  span: Span;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /**
   * 'line' (the default): suppresses findings that start on targetLine.
   * 'disable' / 'enable': an ESLint block comment; from its own position on, until
   * the next one of the other kind for the same rule (or for every rule).
   */
  kind?: 'line' | 'disable' | 'enable';
  /** The line whose findings it suppresses (kind 'line'). */
  targetLine: number;
  /** Bare rule ids. */
  rules: string[];
  /** An ESLint directive that names no rule: it applies to every rule. */
  allRules?: true;
  /** Written as an ESLint directive: which one (eslint-disable-next-line, ...). */
  eslint?: string;
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
  const lines = lineIndexOf(model.text);
  const directives: SuppressionDirective[] = [];
  const directiveOnlyLines = new Set<number>();
  for (const comment of model.comments) {
    const start = lines.position(comment.span.start);
    const end = lines.position(comment.span.end);
    const at = { span: comment.span, line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
    const onItsOwnLine = model.text.slice(comment.span.start - (start.column - 1), comment.span.start).trim() === '';
    const match = /^(pgq-audit-[\w-]*)(?:\s+([\s\S]*))?$/.exec(comment.text);
    if (match) {
      if (onItsOwnLine) directiveOnlyLines.add(start.line);
      const directive: SuppressionDirective = { ...at, targetLine: start.line + 1, rules: [], reason: '' };
      directive.problem = parseBody(match[1], match[2] ?? '', directive);
      directives.push(directive);
      continue;
    }
    if (model.language !== 'typescript') continue;
    const block = model.text.startsWith('/*', comment.span.start);
    const value = model.text.slice(comment.span.start + 2, comment.span.end - (block ? 2 : 0));
    if (!isEslintDirective(value)) continue; // prose that mentions eslint-disable
    if (onItsOwnLine) directiveOnlyLines.add(start.line);
    const eslint = readEslintDirective({ value, block, start, end }, eslintRuleIds());
    if (eslint) directives.push({ ...at, ...eslint }); // else: other plugins' rules only
  }
  if (directives.length === 0) return undefined;
  // Stacked pgq-audit directives (one per line, above the same line) all aim at the first line that is
  // not one; ESLint's aim at exactly the line ESLint says. Bottom up, so a tall stack costs one pass.
  const below = new Map<number, number>();
  for (const line of [...directiveOnlyLines].sort((a, b) => b - a)) below.set(line, below.get(line + 1) ?? line + 1);
  for (const directive of directives) {
    if (!directive.eslint) directive.targetLine = below.get(directive.targetLine) ?? directive.targetLine;
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

/** The pgq/ rules ESLint has: those that read TypeScript (src/eslint/rules.ts). */
function eslintRuleIds(): string[] {
  return allRules.filter((r) => r.languages.includes('typescript')).map((r) => r.id);
}
