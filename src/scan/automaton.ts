// A linear-time matcher for the prefilter's triggers. V8's regexes backtrack:
// a trigger such as update<gap>[^;]{1,160}?<gap>set takes seconds on a file
// of "// update" and spaces. Here the trigger regexes are compiled to one
// NFA per language and run as a lazily built DFA: one table lookup per input
// byte, a new DFA state built at most once per byte (its cost bounded by the
// NFA's size), and a bounded state cache that is flushed when full. So a
// test is linear in the text whatever the text, and the answer is exactly
// `regex.test(text)` for the text read as latin1 (a byte is a character).
//
// The subset: literals, escapes (\s \d \w and their negations, \n \t ...,
// escaped punctuation, \xHH below 0x80), classes, `.`, groups, alternation,
// the quantifiers * + ? {n} {n,} {n,m} (lazy or not: for "does it match
// anywhere" laziness changes nothing). Anchors, word boundaries, lookaround,
// backreferences and \u escapes are refused when the matcher is built.

/** A latin1 byte is its own symbol; a UTF-16 unit above 0xff is one of three (what an ASCII class can tell apart). */
const LINE_SEPARATOR = 256;
const WIDE_SPACE = 257;
const WIDE_OTHER = 258;
const SYMBOLS = 259;
const REPRESENTATIVE = (symbol: number) =>
  symbol < 256 ? String.fromCharCode(symbol) : symbol === LINE_SEPARATOR ? '\u2028' : symbol === WIDE_SPACE ? '\u3000' : '\u0100';

/** Beyond this, a trigger is refused: the NFA's size bounds the work per input byte. */
const MAX_NFA_STATES = 20_000;
/** DFA states kept before the cache is flushed (each holds one row of the transition table). */
const MAX_DFA_STATES = 4_096;
const UNKNOWN = -1;
const ACCEPT = -2;
/** An anchored attempt that can no longer match. */
const DEAD = -3;

export interface TextMatcher {
  /** True when some trigger occurs in `text` (bytes are read as latin1). */
  test(text: string | Uint8Array): boolean;
  /** The index of the symbol at which the first occurrence of a trigger from `from` on ends, or -1. */
  firstMatchEnd(text: string | Uint8Array, from?: number): number;
  /** Work done so far, for tests of linearity: symbols read, and NFA states visited building DFA states. */
  readonly work: { symbols: number; nfaSteps: number; nfaStates: number };
}

type Ast =
  | { kind: 'char'; set: number }
  | { kind: 'seq'; items: Ast[] }
  | { kind: 'alt'; options: Ast[] }
  | { kind: 'repeat'; item: Ast; min: number; max: number };

export class TriggerSyntaxError extends Error {}

/** Compiles regexes (each `{ source, flags }`, flags '' or 'i') into one matcher for "any of them occurs". */
export function compileMatcher(patterns: readonly { source: string; flags: string }[]): TextMatcher {
  return compile(patterns, false);
}

/** A matcher for "one of them begins at `from`": its DFA states hold one match attempt, so few of them. */
export function compileAnchoredMatcher(patterns: readonly { source: string; flags: string }[]): Pick<TextMatcher, 'work'> & { matchesAt(text: string | Uint8Array, from: number): boolean } {
  return compile(patterns, true);
}

function compile(patterns: readonly { source: string; flags: string }[], anchored: boolean): LazyDfa {
  const sets = new CharSets();
  const asts = patterns.map((p) => new Parser(p.source, p.flags, sets).parse());
  return new LazyDfa(new Nfa(asts.length === 1 ? asts[0] : { kind: 'alt', options: asts }), sets, anchored);
}

/** Atoms that are one character standing for itself: letters, digits and punctuation with no meaning in a regex. */
const PLAIN_ATOM = /^[A-Za-z0-9 _\-,'"`:;=<>!@#%&~/]$/;

/** Every symbol's representative, in symbol order: the one text an atom's set is read from. */
let alphabet: string | undefined;
/** Per atom and flags, the symbols it matches: the same few classes (\s, [^;], \w) recur in every compile. */
const matchedSymbols = new Map<string, Uint8Array>();

/**
 * The symbols one atom matches, as V8 says: one pass of the atom over the alphabet (each match is the one
 * character at its index) instead of one regex test per symbol, 259 of them, per atom and compile. Only
 * `\cX` may match more than one character (Annex B reads an unknown control escape as text): it is asked
 * symbol by symbol, as before.
 */
function symbolsMatching(atom: string, flags: string): Uint8Array {
  const key = `${flags}/${atom}`;
  const known = matchedSymbols.get(key);
  if (known !== undefined) return known;
  const members = new Uint8Array(SYMBOLS);
  if (atom.startsWith('\\c')) {
    const single = new RegExp(`^(?:${atom})$`, flags);
    for (let symbol = 0; symbol < SYMBOLS; symbol++) members[symbol] = single.test(REPRESENTATIVE(symbol)) ? 1 : 0;
  } else {
    alphabet ??= Array.from({ length: SYMBOLS }, (_, symbol) => REPRESENTATIVE(symbol)).join('');
    for (const match of alphabet.matchAll(new RegExp(`(?:${atom})`, `${flags}g`))) members[match.index] = 1;
  }
  matchedSymbols.set(key, members);
  return members;
}

/** The character sets of the atoms, as membership per symbol, interned. */
class CharSets {
  readonly members: Uint8Array[] = [];
  private readonly known = new Map<string, number>();

  /** The set of symbols one atom (a char, an escape, a class, `.`) matches, by asking V8 for each symbol. */
  of(atom: string, flags: string): number {
    const key = `${flags}/${atom}`;
    const existing = this.known.get(key);
    if (existing !== undefined) return existing;
    const members = new Uint8Array(SYMBOLS);
    if (atom.length === 1 && PLAIN_ATOM.test(atom)) {
      // A character that stands for itself: the set V8 would give without asking it 259 times. With `i`
      // (no `u`), a letter is both its cases and nothing else here: no symbol of the alphabet (latin1, and
      // the three representatives above it) folds to an ASCII letter but the letters themselves.
      members[atom.charCodeAt(0)] = 1;
      if (flags === 'i' && /[A-Za-z]/.test(atom)) {
        members[atom.toLowerCase().charCodeAt(0)] = 1;
        members[atom.toUpperCase().charCodeAt(0)] = 1;
      }
    } else members.set(symbolsMatching(atom, flags));
    const id = this.members.length;
    this.members.push(members);
    this.known.set(key, id);
    return id;
  }
}

class Parser {
  private at = 0;

  constructor(
    private readonly source: string,
    private readonly flags: string,
    private readonly sets: CharSets,
  ) {
    if (flags.replace('i', '') !== '') throw new TriggerSyntaxError(`flags other than i are not supported (/${source}/${flags})`);
    new RegExp(source, flags); // V8's own syntax errors first
  }

  parse(): Ast {
    const ast = this.alternation();
    if (this.at < this.source.length) this.fail(`unexpected '${this.source[this.at]}'`);
    return ast;
  }

  private fail(why: string): never {
    throw new TriggerSyntaxError(`${why} at ${this.at} in /${this.source}/`);
  }

  private alternation(): Ast {
    const options = [this.sequence()];
    while (this.source[this.at] === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  }

  private sequence(): Ast {
    const items: Ast[] = [];
    while (this.at < this.source.length && this.source[this.at] !== '|' && this.source[this.at] !== ')') {
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0] : { kind: 'seq', items };
  }

  private atom(): Ast {
    const s = this.source;
    const c = s[this.at];
    if (c === '(') {
      if (s.startsWith('(?:', this.at)) this.at += 3;
      else if (s[this.at + 1] === '?') this.fail('lookaround and named groups are not supported');
      else this.at++;
      const inner = this.alternation();
      if (s[this.at] !== ')') this.fail("missing ')'");
      this.at++;
      return inner;
    }
    if (c === '[') return this.char(this.classText());
    if (c === '\\') return this.char(this.escape());
    if (c === '^' || c === '$') this.fail('anchors are not supported');
    if (c === '*' || c === '+' || c === '?' || c === '{' || c === '}' || c === ']') this.fail('nothing to repeat');
    if (c.charCodeAt(0) > 0x7f) this.fail('only ASCII is supported');
    this.at++;
    return this.char(c);
  }

  private char(atom: string): Ast {
    return { kind: 'char', set: this.sets.of(atom, this.flags) };
  }

  private escape(): string {
    const s = this.source;
    const c = s[this.at + 1];
    if (c === undefined) this.fail('trailing backslash');
    if (/[1-9k]/.test(c)) this.fail('backreferences are not supported');
    if (c === 'b' || c === 'B') this.fail('word boundaries are not supported');
    if (c === 'u') this.fail('\\u escapes are not supported (triggers are ASCII)');
    if (c === 'x') {
      const hex = s.slice(this.at + 2, this.at + 4);
      if (!/^[0-7][0-9a-fA-F]$/.test(hex)) this.fail('\\x escapes must be ASCII (\\x00-\\x7f)');
      this.at += 4;
      return `\\x${hex}`;
    }
    if (c === 'c') {
      this.at += 3;
      return s.slice(this.at - 3, this.at);
    }
    this.at += 2;
    return `\\${c}`;
  }

  /** The text of a [...] class, escapes kept (V8 decides what it holds). */
  private classText(): string {
    const s = this.source;
    const start = this.at;
    let i = this.at + 1;
    if (s[i] === '^') i++;
    for (; i < s.length; i++) {
      const c = s[i];
      if (c === '\\') {
        const next = s[i + 1];
        if (next === 'u' || (next === 'x' && !/^[0-7]/.test(s[i + 2] ?? ''))) {
          this.at = i;
          this.fail('escapes in a trigger class must be ASCII');
        }
        i++;
        continue;
      }
      if (c.charCodeAt(0) > 0x7f) this.fail('only ASCII is supported');
      if (c === ']') {
        this.at = i + 1;
        return s.slice(start, this.at);
      }
    }
    this.fail("missing ']'");
  }

  private quantified(item: Ast): Ast {
    const s = this.source;
    let min: number;
    let max: number;
    const c = s[this.at];
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.at));
      if (!m) this.fail("'{' that is not a quantifier");
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.at += m[0].length - 1;
    } else return item;
    this.at++;
    if (s[this.at] === '?') this.at++; // lazy: the same set of matches
    if (s[this.at] === '*' || s[this.at] === '+' || s[this.at] === '{') this.fail('nothing to repeat');
    return { kind: 'repeat', item, min, max };
  }
}

/**
 * A Thompson NFA. A state either consumes one symbol of its set (set >= 0,
 * one successor) or is a split with epsilon successors (set -1); state 0 is
 * the accepting state.
 */
class Nfa {
  readonly set: number[] = [-1];
  readonly next: number[][] = [[]];
  readonly start: number;

  constructor(ast: Ast) {
    this.start = this.build(ast, 0);
  }

  private add(set: number, next: number[]): number {
    if (this.set.length >= MAX_NFA_STATES) throw new TriggerSyntaxError(`the triggers need more than ${MAX_NFA_STATES} automaton states`);
    this.set.push(set);
    this.next.push(next);
    return this.set.length - 1;
  }

  /** Builds `ast` so that it continues to state `then`; returns its entry state. */
  private build(ast: Ast, then: number): number {
    switch (ast.kind) {
      case 'char':
        return this.add(ast.set, [then]);
      case 'seq': {
        let entry = then;
        for (let i = ast.items.length - 1; i >= 0; i--) entry = this.build(ast.items[i], entry);
        return entry;
      }
      case 'alt':
        return this.add(-1, ast.options.map((option) => this.build(option, then)));
      case 'repeat': {
        let entry = then;
        if (ast.max === Infinity) {
          const loop = this.add(-1, []);
          this.next[loop] = [this.build(ast.item, loop), then];
          entry = loop;
        } else {
          // x{0,k}: k nested optional copies, each either continues inward or leaves.
          for (let i = 0; i < ast.max - ast.min; i++) entry = this.add(-1, [this.build(ast.item, entry), then]);
        }
        for (let i = 0; i < ast.min; i++) entry = this.build(ast.item, entry);
        return entry;
      }
    }
  }
}

/** The DFA, built as the input asks for it; one per set of triggers, shared by every file. */
class LazyDfa implements TextMatcher {
  /** Symbol -> its class (symbols no set tells apart share one). */
  private readonly classOf: Int32Array;
  /** Per class, its symbols: a transition built for one symbol is the one of its whole class. */
  private readonly classMembers: number[][];
  private table!: Int32Array;
  /** DFA state (its table row offset / SYMBOLS) -> its NFA states. The table has a column per symbol, so a byte needs no class lookup. */
  private states!: Int32Array[];
  private ids!: Map<string, number>;
  /** The start state's row offset. */
  private start!: number;
  /** The epsilon closure of the NFA start: part of every state (a match may begin at any byte). */
  private readonly startClosure: number[];
  private readonly mark: Uint32Array;
  private generation = 0;
  /** Per char set, per symbol: 1 when the set holds it. */
  private readonly members: Uint8Array[];
  readonly work: { symbols: number; nfaSteps: number; nfaStates: number };

  constructor(
    private readonly nfa: Nfa,
    sets: CharSets,
    private readonly anchored = false,
  ) {
    this.members = sets.members;
    this.work = { symbols: 0, nfaSteps: 0, nfaStates: nfa.set.length };
    const signatures = new Map<string, number>();
    this.classOf = new Int32Array(SYMBOLS);
    this.classMembers = [];
    for (let symbol = 0; symbol < SYMBOLS; symbol++) {
      let signature = '';
      for (const members of sets.members) signature += members[symbol];
      let cls = signatures.get(signature);
      if (cls === undefined) {
        cls = signatures.size;
        signatures.set(signature, cls);
        this.classMembers.push([]);
      }
      this.classOf[symbol] = cls;
      this.classMembers[cls].push(symbol);
    }
    this.mark = new Uint32Array(nfa.set.length);
    this.startClosure = this.closure([nfa.start]);
    if (this.startClosure.includes(0)) throw new TriggerSyntaxError('a trigger matches the empty text');
    this.reset();
  }

  private reset(): void {
    this.table = new Int32Array(64 * SYMBOLS).fill(UNKNOWN);
    this.states = [];
    this.ids = new Map();
    this.start = this.intern(Int32Array.from(this.startClosure));
  }

  /** The consuming states (and the accepting one) reachable from `seeds` by epsilon moves, sorted. */
  private closure(seeds: number[], into: number[] = []): number[] {
    const { set, next } = this.nfa;
    const generation = this.nextGeneration();
    const stack = [...seeds];
    while (stack.length > 0) {
      const state = stack.pop()!;
      this.work.nfaSteps++;
      if (this.mark[state] === generation) continue;
      this.mark[state] = generation;
      if (set[state] >= 0 || state === 0) into.push(state);
      else for (const target of next[state]) stack.push(target);
    }
    return into;
  }

  private nextGeneration(): number {
    if (++this.generation === 0xffffffff) {
      this.mark.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }

  /** The row offset of the DFA state for these NFA states, adding it if new. */
  private intern(nfaStates: Int32Array): number {
    nfaStates.sort();
    const key = nfaStates.join(',');
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const offset = this.states.length * SYMBOLS;
    if (offset + SYMBOLS > this.table.length) {
      const grown = new Int32Array(this.table.length * 2).fill(UNKNOWN);
      grown.set(this.table);
      this.table = grown;
    }
    this.states.push(nfaStates);
    this.ids.set(key, offset);
    return offset;
  }

  /** Builds the transition of the state at row `offset` on `symbol` (and its class); returns the next row or ACCEPT. */
  private step(offset: number, symbol: number): number {
    const { set, next } = this.nfa;
    const seeds: number[] = [];
    for (const state of this.states[offset / SYMBOLS]) {
      this.work.nfaSteps++;
      if (state !== 0 && this.members[set[state]][symbol] === 1) seeds.push(next[state][0]);
    }
    const reached = this.closure(seeds, []);
    const members = this.classMembers[this.classOf[symbol]];
    if (reached.includes(0)) {
      for (const member of members) this.table[offset + member] = ACCEPT;
      return ACCEPT;
    }
    if (this.anchored && reached.length === 0) {
      for (const member of members) this.table[offset + member] = DEAD;
      return DEAD;
    }
    // Every state also holds the start: a match can begin at the next byte.
    if (!this.anchored) for (const state of this.startClosure) if (this.mark[state] !== this.generation) reached.push(state);
    if (this.states.length >= MAX_DFA_STATES) {
      // Bounded memory: start over with an empty cache; this state is the first of the new one.
      this.reset();
      return this.intern(Int32Array.from(reached));
    }
    const target = this.intern(Int32Array.from(reached));
    for (const member of members) this.table[offset + member] = target;
    return target;
  }

  test(text: string | Uint8Array): boolean {
    return this.firstMatchEnd(text) >= 0;
  }

  firstMatchEnd(text: string | Uint8Array, from = 0): number {
    this.work.symbols += text.length - from;
    return typeof text === 'string' ? this.testString(text, from) : this.testBytes(text, from);
  }

  /** Anchored matchers only: a match begins at `from`. */
  matchesAt(text: string | Uint8Array, from: number): boolean {
    let state = this.start;
    let i = from;
    let matched = false;
    for (const n = text.length; i < n; i++) {
      const code = typeof text === 'string' ? text.charCodeAt(i) : text[i];
      const symbol = code < 256 ? code : wideSymbol(code);
      let target = this.table[state + symbol];
      if (target === UNKNOWN) target = this.step(state, symbol);
      if (target === ACCEPT) matched = true;
      if (target < 0) break;
      state = target;
    }
    this.work.symbols += i - from + 1;
    return matched;
  }

  private testBytes(bytes: Uint8Array, from: number): number {
    let table = this.table;
    let state = this.start;
    const n = bytes.length;
    let i = from;
    while (i < n) {
      // Four known transitions per turn: a quarter of the loop's own checks, about a quarter faster
      // on the bench tree (390 -> 500 MB/s). A transition not built yet, or a match, leaves the
      // turn at its byte for the one-step path below.
      while (i + 4 <= n) {
        const s1 = table[state + bytes[i]];
        if (s1 < 0) break;
        const s2 = table[s1 + bytes[i + 1]];
        if (s2 < 0) {
          state = s1;
          i += 1;
          break;
        }
        const s3 = table[s2 + bytes[i + 2]];
        if (s3 < 0) {
          state = s2;
          i += 2;
          break;
        }
        const s4 = table[s3 + bytes[i + 3]];
        if (s4 < 0) {
          state = s3;
          i += 3;
          break;
        }
        state = s4;
        i += 4;
      }
      if (i >= n) break;
      let target = table[state + bytes[i]];
      if (target < 0) {
        if (target === ACCEPT) return i;
        target = this.step(state, bytes[i]);
        if (target === ACCEPT) return i;
        table = this.table;
      }
      state = target;
      i++;
    }
    return -1;
  }

  private testString(text: string, from: number): number {
    let table = this.table;
    let state = this.start;
    for (let i = from, n = text.length; i < n; i++) {
      const code = text.charCodeAt(i);
      const symbol = code < 256 ? code : wideSymbol(code);
      let target = table[state + symbol];
      if (target < 0) {
        if (target === ACCEPT) return i;
        target = this.step(state, symbol);
        if (target === ACCEPT) return i;
        table = this.table;
      }
      state = target;
    }
    return -1;
  }
}

function wideSymbol(code: number): number {
  if (code === 0x2028 || code === 0x2029) return LINE_SEPARATOR;
  // JS \s above 0xff: U+1680, U+2000-200A, U+202F, U+205F, U+3000, U+FEFF.
  if (code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff) return WIDE_SPACE;
  return WIDE_OTHER;
}
