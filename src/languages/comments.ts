import type { CommentDirective } from '../model/index.ts';

const DIRECTIVE = 'pgq-audit-';

/**
 * A comment the suppression step must see: a pgq-audit directive, or (in
 * TS/JS) an ESLint disable or enable directive, which the CLI honours too for
 * pgq/ rules. src/suppressions reads them exactly; this only picks them out.
 */
export function isDirectiveComment(text: string): boolean {
  return text.includes(DIRECTIVE) || /^\s*eslint-(?:disable|enable)/.test(text);
}

/**
 * Line comments that carry a pgq-audit directive. A textual scan is enough for
 * SQL and Python: a directive inside a string literal is not worth a parser.
 */
export function collectLineComments(text: string, marker: '--' | '#' | '//'): CommentDirective[] {
  const comments: CommentDirective[] = [];
  if (!text.includes(DIRECTIVE)) return comments;
  let from = 0;
  for (;;) {
    const at = text.indexOf(DIRECTIVE, from);
    if (at < 0) break;
    const lineStart = text.lastIndexOf('\n', at) + 1;
    const lineEnd = text.indexOf('\n', at);
    const end = lineEnd < 0 ? text.length : lineEnd;
    const markerAt = text.lastIndexOf(marker, at);
    if (markerAt >= lineStart) {
      comments.push({ span: { start: markerAt, end }, text: text.slice(markerAt + marker.length, end).trim() });
    }
    from = end + 1;
  }
  return comments;
}
