// A small SQL lexer that knows only what we need to skip: string literals,
// quoted identifiers, dollar quotes and comments. It finds statement
// boundaries and host placeholders without parsing, so one bad statement does
// not hide the others and a huge file can be parsed in batches.

export type Region = 'code' | 'string' | 'identifier' | 'dollar' | 'comment';

/** Calls `onCode(index)` for every character outside strings, identifiers and comments. */
export function forEachCodeChar(text: string, onCode: (index: number) => number | void): void {
  const length = text.length;
  let i = 0;
  while (i < length) {
    const skipped = opensRegion(text.charCodeAt(i)) ? regionEnd(text, i, length) : -1;
    if (skipped >= 0) {
      i = skipped;
      continue;
    }
    const next = onCode(i);
    i = typeof next === 'number' ? next : i + 1;
  }
}

/** Whether a string, quoted name, dollar quote or comment may start at this character: the only ones regionEnd opens at. */
export const opensRegion = (c: number): boolean => c === 39 /* ' */ || c === 34 /* " */ || c === 45 /* - */ || c === 47 /* / */ || c === 36; /* $ */

/**
 * Where a string literal, quoted identifier, comment or dollar-quoted body
 * that starts at `i` ends (an unclosed one ends at `end`); -1 when none
 * starts there. A `$` that opens no tag (`$1`) is code.
 */
export function regionEnd(text: string, i: number, end = text.length): number {
  const c = text.charCodeAt(i);
  if (c === 39 /* ' */) {
    const escapes = i > 0 && (text[i - 1] === 'E' || text[i - 1] === 'e') && !isIdentChar(text.charCodeAt(i - 2));
    return skipQuoted(text, i, 39, escapes);
  }
  if (c === 34 /* " */) return skipQuoted(text, i, 34, false);
  if (c === 45 /* - */ && text.charCodeAt(i + 1) === 45) {
    const newline = text.indexOf('\n', i);
    return newline < 0 ? end : newline + 1;
  }
  if (c === 47 /* / */ && text.charCodeAt(i + 1) === 42 /* * */) return skipBlockComment(text, i);
  if (c === 36 /* $ */ && !isIdentChar(text.charCodeAt(i - 1))) {
    const tag = dollarTagAt(text, i);
    if (tag !== undefined) {
      const close = text.indexOf(tag, i + tag.length);
      return close < 0 ? end : close + tag.length;
    }
  }
  return -1;
}

export function isIdentChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127
  );
}

export function skipQuoted(text: string, start: number, quote: number, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (backslashEscapes && c === 92) {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (text.charCodeAt(i + 1) === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return text.length;
}

export function skipBlockComment(text: string, start: number): number {
  return blockCommentEnd(text, start) ?? text.length;
}

/** Where the block comment at `start` ends (PostgreSQL nests them), or undefined when it is never closed. */
export function blockCommentEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text.charCodeAt(i) === 47 && text.charCodeAt(i + 1) === 42) {
      depth++;
      i += 2;
    } else if (text.charCodeAt(i) === 42 && text.charCodeAt(i + 1) === 47) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return undefined;
}

/** `$tag$` or `$$` at `i`, or undefined when `$` starts something else (`$1`). */
export function dollarTagAt(text: string, i: number): string | undefined {
  let j = i + 1;
  const first = text.charCodeAt(j);
  if (first >= 48 && first <= 57) return undefined; // $1 is a parameter
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 36) return text.slice(i, j + 1);
    if (!isIdentChar(c) || c === 36) return undefined;
    j++;
  }
  return undefined;
}

/** Spans of the statements of `text`, split at top-level semicolons (empty ones dropped). */
export function splitStatements(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let start = 0;
  forEachCodeChar(text, (i) => {
    if (text.charCodeAt(i) === 59 /* ; */) {
      pushIfCode(text, spans, start, i + 1);
      start = i + 1;
    }
  });
  pushIfCode(text, spans, start, text.length);
  return spans;
}

function pushIfCode(text: string, spans: { start: number; end: number }[], start: number, end: number): void {
  let hasCode = false;
  forEachCodeChar(text.slice(start, end), (i) => {
    const c = text.charCodeAt(start + i);
    if (c !== 59 && c !== 32 && c !== 9 && c !== 10 && c !== 13) {
      hasCode = true;
      return end - start; // stop
    }
  });
  if (hasCode) spans.push({ start, end });
}

/** The text with its strings, quoted identifiers, dollar quotes and comments blanked (newlines kept): offsets stay. */
export function codeOnly(text: string): string {
  const code = text.replace(/[^\r\n]/g, ' ').split('');
  forEachCodeChar(text, (i) => {
    code[i] = text[i];
  });
  return code.join('');
}
