// UTF-16 offsets to 1-based lines and columns, as ESLint reports them.
import type { Location } from './rule.ts';
import type { Span } from './types.ts';

export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
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
