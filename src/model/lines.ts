// UTF-16 offsets to 1-based lines and columns, as ESLint reports them. The one
// line count of pgq-audit: every finding is located through it, and code frames
// and baselines split lines the same way.
import type { Location, Span } from './index.ts';

/** ESLint's line breaks (its `lineBreakPattern`): CRLF, a lone CR or LF, U+2028 and U+2029. */
export const LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/;

/** The lines of a text, split where ESLint counts a line break. */
export function splitLines(text: string): string[] {
  return text.split(LINE_BREAK);
}

export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    // From one line break to the next by a regex search: a loop over every character ran in the
    // interpreter (then on-stack replaced) for each file a cold scan locates.
    const breaks = /\r\n?|[\n\u2028\u2029]/g;
    for (let m = breaks.exec(text); m; m = breaks.exec(text)) this.starts.push(m.index + m[0].length);
  }

  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - this.starts[low] + 1 };
  }

  /** The location of a span: start and end positions (an empty or reversed span ends where it starts). */
  location(span: Span): Location {
    const start = this.position(span.start);
    const end = this.position(Math.max(span.end, span.start));
    return { line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
  }
}

let last: { text: string; index: LineIndex } | undefined;

/** The line index of `text`: the passes over one file (rules, suppressions, queue facts) share one. */
export function lineIndexOf(text: string): LineIndex {
  if (last?.text !== text) last = { text, index: new LineIndex(text) };
  return last.index;
}
