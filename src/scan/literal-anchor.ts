// Anchoring every trigger on its leading literal. Almost every trigger begins with literal text
// (`update`, `set`, `.rpc(`, `pgq-audit-`), and no match can begin anywhere else. So one pass of a
// small literal automaton (Aho-Corasick, ASCII case-folded, a full table: one lookup per byte, built
// once, never flushed) finds where matches may begin, and an anchored automaton (automaton.ts: its DFA
// states hold one attempt, so few of them) tries the triggers from each such start only. The lazy DFA of
// all triggers at once has to hold every partial match of every trigger in its states: on real code
// it builds hundreds of states per file before it is warm (35-125 MB/s on a cold scan) and on text
// with many `update` words and no ';' it keeps flushing its cache.
//
// The verdict is exactly the one automaton's: every match begins with an occurrence of the leading
// literal of its alternative, and every occurrence of every literal is tried. Attempts are bounded in
// total (ATTEMPT_BUDGET per byte of the text): past that, the one automaton of the anchored triggers
// answers from the first start not yet tried, so the work stays linear in the text whatever the text.
import { compileAnchoredMatcher, compileMatcher, type TextMatcher } from './automaton.ts';

/** Attempt symbols allowed per byte of text before the one automaton takes over. */
const ATTEMPT_BUDGET = 64;

/**
 * The literals every match of a regex alternative (its source, case-insensitive) begins with, in lower
 * case; undefined when some match may begin otherwise (a class, `.`, an optional first character).
 * Conservative: it stops at the first thing it does not read as fixed text, so the literals may be
 * shorter than the longest fixed prefix, never wrong.
 */
export function leadingLiterals(source: string): string[] | undefined {
  let prefixes = [''];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    let units: string[];
    let next: number;
    if (c === '\\') {
      const e = source[i + 1];
      // Escaped punctuation is that character; a letter or digit escape is a class or a control.
      if (e === undefined || /[A-Za-z0-9]/.test(e)) break;
      units = [e];
      next = i + 2;
    } else if (c === '(') {
      const close = groupEnd(source, i);
      if (close < 0) break;
      const inner = source.startsWith('(?:', i) ? source.slice(i + 3, close) : source[i + 1] === '?' ? undefined : source.slice(i + 1, close);
      if (inner === undefined) break;
      const options = splitAlternatives(inner).map(wholeLiteral);
      if (options.some((o) => o === undefined)) break;
      units = options as string[];
      next = close + 1;
    } else if (/[A-Za-z0-9_\-,'"`:;=<>!@#%&~/ ]/.test(c)) {
      units = [c];
      next = i + 1;
    } else break;
    // A quantifier makes the unit optional or repeated: the fixed text ends before it.
    if (next < source.length && /[?*+{]/.test(source[next])) break;
    prefixes = prefixes.flatMap((prefix) => units.map((unit) => prefix + unit.toLowerCase()));
    i = next;
  }
  return prefixes.every((prefix) => prefix.length > 0) ? prefixes : undefined;
}

/** The text of an alternative that is literal through and through, or undefined. */
function wholeLiteral(source: string): string | undefined {
  if (source === '') return undefined;
  const literals = leadingLiterals(source);
  if (literals === undefined || literals.length !== 1) return undefined;
  // Literal as a whole only if reading it consumed all of it: the literal's source length can differ
  // (escapes), so re-read it by checking that nothing but fixed text is there.
  let fixed = 0;
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '\\') {
      if (!/[^A-Za-z0-9]/.test(source[i + 1] ?? 'a')) return undefined;
      i++;
    } else if (!/[A-Za-z0-9_\-,'"`:;=<>!@#%&~/ ]/.test(source[i])) return undefined;
    fixed++;
  }
  return fixed === literals[0].length ? literals[0] : undefined;
}

/** The index of the ')' closing the group opened at `open`, or -1. */
function groupEnd(source: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** The top-level alternatives of a regex source (`a|(?:b|c)` -> `a`, `(?:b|c)`). */
export function splitAlternatives(source: string): string[] {
  const alternatives: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      alternatives.push(source.slice(start, i));
      start = i + 1;
    }
  }
  alternatives.push(source.slice(start));
  return alternatives;
}

/** Aho-Corasick over lower-case ASCII literals, as a full byte table; upper-case letters fold to lower. */
class LiteralScanner {
  /** Per state, 256 columns: the next state's row offset (state * 256). */
  private readonly table: Int32Array;
  /** Per state: 1 when some literal ends there. */
  private readonly ending: Uint8Array;
  /** Per state: the lengths of the literals that end there (its own and those of its failure chain). */
  private readonly lengths: number[][];
  /** Bytes read, for tests of linearity. */
  symbols = 0;

  constructor(literals: readonly string[]) {
    const children: Map<number, number>[] = [new Map()];
    const own: number[] = [0];
    for (const literal of literals) {
      let state = 0;
      for (const ch of literal) {
        const code = ch.charCodeAt(0);
        let child = children[state].get(code);
        if (child === undefined) {
          child = children.length;
          children.push(new Map());
          own.push(0);
          children[state].set(code, child);
        }
        state = child;
      }
      own[state] = literal.length;
    }
    const count = children.length;
    this.table = new Int32Array(count * 256);
    this.ending = new Uint8Array(count);
    this.lengths = Array.from({ length: count }, () => []);
    const fail = new Int32Array(count);
    // Breadth first: a state's failure state is shallower, so its row and lengths are complete first.
    const order = [0];
    for (let at = 0; at < order.length; at++) {
      const state = order[at];
      this.lengths[state] = [...(own[state] > 0 ? [own[state]] : []), ...(state === 0 ? [] : this.lengths[fail[state]])];
      this.ending[state] = this.lengths[state].length > 0 ? 1 : 0;
      // A byte with no child goes where the failure state goes (the root's: to the root, row 0): the failure
      // state's row, copied whole, then the children's bytes over it, both cases of a letter.
      if (state !== 0) this.table.copyWithin(state * 256, fail[state] * 256, fail[state] * 256 + 256);
      // In byte order, as the breadth-first order has always been.
      for (const lower of [...children[state].keys()].sort((a, b) => a - b)) {
        // No byte folds to an upper-case letter: a literal's upper-case character is never reached.
        if (lower >= 0x41 && lower <= 0x5a) continue;
        const child = children[state].get(lower)!;
        fail[child] = state === 0 ? 0 : this.table[fail[state] * 256 + lower] / 256;
        order.push(child);
        this.table[state * 256 + lower] = child * 256;
        if (lower >= 0x61 && lower <= 0x7a) this.table[state * 256 + lower - 0x20] = child * 256;
      }
    }
  }

  /** Calls `hit(end, lengths)` at each byte where literals end, in order, until it returns true. */
  scan(text: string | Uint8Array, hit: (end: number, lengths: readonly number[]) => boolean): boolean {
    const { table, ending, lengths } = this;
    this.symbols += text.length;
    let state = 0;
    if (typeof text === 'string') {
      for (let i = 0, n = text.length; i < n; i++) {
        const code = text.charCodeAt(i);
        // No literal holds a character above 0xff (they are ASCII) nor NUL: either one resets the scan.
        state = table[state + (code < 256 ? code : 0)];
        if (ending[state >> 8] === 1 && hit(i, lengths[state >> 8])) return true;
      }
      return false;
    }
    for (let i = 0, n = text.length; i < n; i++) {
      state = table[state + text[i]];
      if (ending[state >> 8] === 1 && hit(i, lengths[state >> 8])) return true;
    }
    return false;
  }
}

/**
 * The matcher of regex alternatives (sources, case-insensitive) that each begin with literals, and of
 * `rest`, the triggers that do not (run as one automaton, as before).
 */
export class LiteralAnchoredMatcher implements TextMatcher {
  private readonly scanner: LiteralScanner;
  private readonly attempts: ReturnType<typeof compileAnchoredMatcher>;
  private readonly longest: number;
  private full?: TextMatcher;
  readonly work: { symbols: number; nfaSteps: number; nfaStates: number };

  constructor(
    private readonly alternatives: readonly { source: string; literals: readonly string[] }[],
    private readonly rest: TextMatcher | undefined,
  ) {
    const all = [...new Set(alternatives.flatMap((a) => a.literals))];
    // Prefix-free: an attempt at a start tries every alternative, so a literal that another begins needs no attempt of its own.
    const literals = all.filter((literal) => !all.some((other) => other !== literal && literal.startsWith(other)));
    this.scanner = new LiteralScanner(literals);
    this.longest = Math.max(...literals.map((l) => l.length));
    this.attempts = compileAnchoredMatcher([{ source: this.source, flags: 'i' }]);
    const scanner = this.scanner;
    const scanned = {
      get symbols() {
        return scanner.symbols;
      },
      nfaSteps: 0,
      nfaStates: 0,
    };
    const parts = (): TextMatcher['work'][] => [scanned, this.attempts.work, ...(rest === undefined ? [] : [rest.work]), ...(this.full === undefined ? [] : [this.full.work])];
    const sum = (key: 'symbols' | 'nfaSteps' | 'nfaStates') => parts().reduce((total, part) => total + part[key], 0);
    this.work = {
      get symbols() {
        return sum('symbols');
      },
      get nfaSteps() {
        return sum('nfaSteps');
      },
      get nfaStates() {
        return sum('nfaStates');
      },
    };
  }

  private get source(): string {
    return this.alternatives.map((a) => `(?:${a.source})`).join('|');
  }

  test(text: string | Uint8Array): boolean {
    if (this.rest?.test(text) === true) return true;
    const attempts = this.attempts;
    const budget = ATTEMPT_BUDGET * text.length + 65_536;
    const spentBefore = attempts.work.symbols;
    let fallbackFrom = -1;
    const found = this.scanner.scan(text, (end, lengths) => {
      // Literals are prefix-free, so no start is tried twice: two literals at one start would be one's prefix.
      for (const length of lengths) if (attempts.matchesAt(text, end + 1 - length)) return true;
      if (attempts.work.symbols - spentBefore > budget) {
        // Every literal ending up to here was tried; one ending later begins after end - longest.
        fallbackFrom = Math.max(0, end + 1 - this.longest);
        return true;
      }
      return false;
    });
    if (fallbackFrom < 0) return found;
    this.full ??= compileMatcher([{ source: this.source, flags: 'i' }]);
    return this.full.firstMatchEnd(text, fallbackFrom) >= 0;
  }

  firstMatchEnd(text: string | Uint8Array, from = 0): number {
    // Not the prefilter's path: the one automaton of all triggers gives the first end.
    const restEnd = this.rest === undefined ? -1 : this.rest.firstMatchEnd(text, from);
    this.full ??= compileMatcher([{ source: this.source, flags: 'i' }]);
    const end = this.full.firstMatchEnd(text, from);
    if (restEnd < 0) return end;
    return end < 0 ? restEnd : Math.min(end, restEnd);
  }
}
