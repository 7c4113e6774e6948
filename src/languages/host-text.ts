// SQL text taken from a host language's strings, with a map from each UTF-16
// unit back to the host file. Both host front ends build these (escapes,
// interpolations as holes, concatenation, constants) and analyse them the same way.
import type { Span } from '../model/index.ts';
import { analyzeSql, type AnalyzeOptions, type SqlAnalysis } from '../sql/index.ts';

export interface HostText {
  text: string;
  /** Host offsets where each UTF-16 unit of `text` starts and ends. */
  starts: number[];
  ends: number[];
  /** Spans of `text` that stand for values computed at run time. */
  holes: Span[];
  /** Host span of the expression the text came from. */
  span: Span;
  /** Set when the text was reached through a name: every position maps to the name at the use. */
  pinned?: Span;
}

/** A span of the text, in the host file. */
export function toHost(host: HostText, s: Span): Span {
  if (host.pinned) return { ...host.pinned };
  const n = host.text.length;
  if (n === 0) return { start: host.span.start, end: host.span.start };
  const start = s.start < n ? host.starts[s.start] : host.ends[n - 1];
  const end = s.end > s.start ? host.ends[Math.min(s.end, n) - 1] : start;
  return { start, end: Math.max(start, end) };
}

export class HostTextBuilder {
  text = '';
  starts: number[] = [];
  ends: number[] = [];
  holes: Span[] = [];

  /** Appends `chars`, every unit of them mapped to the host range [from, to) (one escape, one character). */
  push(chars: string, from: number, to: number): void {
    // The text in one piece: a string per unit would be a rope of one-unit strings to flatten later.
    this.text += chars;
    for (let k = 0; k < chars.length; k++) {
      this.starts.push(from);
      this.ends.push(to);
    }
  }

  /** A value computed at run time: one placeholder character. */
  hole(from: number, to: number): void {
    const at = this.text.length;
    this.push('_', from, to);
    this.holes.push({ start: at, end: at + 1 });
  }

  append(other: HostText): void {
    const offset = this.text.length;
    if (other.pinned) {
      this.push(other.text, other.pinned.start, other.pinned.end);
    } else {
      this.text += other.text;
      for (const s of other.starts) this.starts.push(s);
      for (const e of other.ends) this.ends.push(e);
    }
    for (const h of other.holes) this.holes.push({ start: h.start + offset, end: h.end + offset });
  }

  done(span: Span): HostText {
    return { text: this.text, starts: this.starts, ends: this.ends, holes: this.holes, span };
  }
}

/** Analyses host text as SQL and maps every span of the facts back to the host file. */
export function analyzeHostText(host: HostText, options: AnalyzeOptions): SqlAnalysis {
  return analyzeSql(host.text, { ...options, holes: options.holes ?? host.holes, mapSpan: (s) => toHost(host, s) });
}
