// Lezer's Python tree, and what "does not parse" means for pgq-audit.
//
// Lezer recovers from any error, so every text gets a tree. A file is fatal
// when it is not text (NUL bytes, invalid UTF-8), when it is Python 2 (print
// statement, `except E, e`, `raise E, msg`, `<>`, 0777), or when Lezer had to
// recover from an error that is not one of its known gaps on valid Python 3
// (bare `(yield)`, PEP 614 decorators, `a[*b]`, `with x as (a, b)`). The one
// gap that matters to worker code, parenthesized context managers
// (`with (pool.connection() as conn, conn.cursor() as cur):`), is repaired
// before parsing by blanking the parentheses, which keeps every offset.
import { createRequire } from 'node:module';
import type { SyntaxNode, Tree } from '@lezer/common';
import type { Span } from '../../model/index.ts';

type LezerPython = typeof import('@lezer/python');

/** Lezer's Python parser, loaded on the first Python file (a scan of TS and SQL alone never does). */
let lezer: LezerPython | undefined;
const pythonParser = () => (lezer ??= createRequire(import.meta.url)('@lezer/python') as LezerPython).parser;

export type Node = SyntaxNode;

/** The child nodes, without comments: a comment between a call's arguments or a dict's entries is not one of them. */
export function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.name !== 'Comment') out.push(c);
  return out;
}

/**
 * The first child named `name`: node.getChild(name) without the cursor and the array of every match
 * (no node of Lezer's Python grammar is in a group of these names, so the name alone decides).
 */
export function childNamed(node: Node, name: string): Node | null {
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.name === name) return c;
  return null;
}

/** Every node of a def's own body, in order (not those of defs, classes and lambdas inside it). */
export function ownNodes(def: Node, visit: (node: Node) => void): void {
  const walk = (node: Node) => {
    for (const child of children(node)) {
      if (child.name === 'FunctionDefinition' || child.name === 'ClassDefinition' || child.name === 'LambdaExpression') continue;
      visit(child);
      walk(child);
    }
  };
  const body = def.getChild('Body');
  if (body) walk(body);
}

export interface Arg {
  /** Keyword name for `name=value`. */
  name?: string;
  value: Node;
  star?: '*' | '**';
}

/** The arguments of an ArgList, grouped at its top-level commas. */
export function argsOf(argList: Node | null | undefined, text: string): Arg[] {
  if (!argList || argList.name !== 'ArgList') return [];
  const args: Arg[] = [];
  // Each group between top-level commas is read by its first three nodes; sibling links, no array per group.
  let first: Node | undefined;
  let second: Node | undefined;
  let third: Node | undefined;
  const flush = () => {
    if (!first) return;
    if ((first.name === '*' || first.name === '**') && second) args.push({ star: first.name, value: second });
    else if (first.name === 'VariableName' && second?.name === 'AssignOp' && text.slice(second.from, second.to) === '=' && third) {
      args.push({ name: text.slice(first.from, first.to), value: third });
    } else args.push({ value: first });
    first = second = third = undefined;
  };
  for (let c = argList.firstChild; c; c = c.nextSibling) {
    const kind = c.name;
    if (kind === 'Comment' || kind === '(' || kind === ')') continue;
    if (kind === ',') flush();
    else if (!first) first = c;
    else if (!second) second = c;
    else if (!third) third = c;
  }
  flush();
  return args;
}

/** argsOf(argList).length > 0, without grouping them: some child of the ArgList is more than a parenthesis, a comma or a comment. */
export function hasArguments(argList: Node): boolean {
  for (let c = argList.firstChild; c; c = c.nextSibling) {
    const kind = c.name;
    if (kind !== 'Comment' && kind !== '(' && kind !== ')' && kind !== ',') return true;
  }
  return false;
}

export function positional(args: Arg[], index: number): Node | undefined {
  return args.filter((a) => !a.name && !a.star)[index]?.value;
}

export function keyword(args: Arg[], name: string): Node | undefined {
  return args.find((a) => a.name === name)?.value;
}

/** `a`, `a.b.c` for names and attribute chains; undefined for anything else. */
export function dottedName(node: Node | null | undefined, text: string): string | undefined {
  if (!node) return undefined;
  if (node.name === 'VariableName') return text.slice(node.from, node.to);
  if (node.name === 'MemberExpression') {
    const object = node.firstChild;
    const property = node.lastChild;
    if (!object || property?.name !== 'PropertyName' || object.nextSibling?.name !== '.') return undefined;
    const base = dottedName(object, text);
    return base === undefined ? undefined : `${base}.${text.slice(property.from, property.to)}`;
  }
  if (node.name === 'ParenthesizedExpression') return dottedName(innerOfParens(node), text);
  return undefined;
}

/** `await x` and `(x)` are x. */
export function unwrap(node: Node | null | undefined): Node | undefined {
  let current = node ?? undefined;
  while (current) {
    if (current.name === 'AwaitExpression') current = current.lastChild ?? undefined;
    else if (current.name === 'ParenthesizedExpression') {
      const inner = innerOfParens(current);
      if (!inner) return current;
      current = inner;
    } else return current;
  }
  return current;
}

function innerOfParens(node: Node): Node | undefined {
  const inner = children(node).filter((c) => c.name !== '(' && c.name !== ')');
  return inner.length === 1 ? inner[0] : undefined;
}

export interface CallParts {
  callee: Node;
  readonly args: Arg[];
  argList: Node;
}

export function callParts(node: Node | null | undefined, text: string): CallParts | undefined {
  const call = unwrap(node);
  if (!call || call.name !== 'CallExpression') return undefined;
  const callee = call.firstChild;
  const argList = call.lastChild;
  if (!callee || !argList || argList.name !== 'ArgList') return undefined;
  return new Call(callee, argList, text);
}

/** A call's parts; its arguments are grouped when first read: most askers want the callee only (methodCall, chains). */
class Call implements CallParts {
  private grouped?: Arg[];

  constructor(
    readonly callee: Node,
    readonly argList: Node,
    private readonly text: string,
  ) {}

  get args(): Arg[] {
    return (this.grouped ??= argsOf(this.argList, this.text));
  }
}

/** For `x.m(...)`: the object x and the method name m. */
export function methodCall(node: Node | null | undefined, text: string): { object: Node; method: string; call: CallParts } | undefined {
  const call = callParts(node, text);
  if (!call || call.callee.name !== 'MemberExpression') return undefined;
  const object = call.callee.firstChild;
  const property = call.callee.lastChild;
  if (!object || property?.name !== 'PropertyName' || object.nextSibling?.name !== '.') return undefined;
  return { object, method: text.slice(property.from, property.to), call };
}

/** A decorator `@a.b(args)` as its dotted name and arguments (Lezer writes it flat: At, names, dots, ArgList). */
export function decoratorParts(decorator: Node, text: string): { name: string; args?: Arg[] } | undefined {
  const names: string[] = [];
  let args: Arg[] | undefined;
  for (const c of children(decorator)) {
    if (c.name === 'VariableName') names.push(text.slice(c.from, c.to));
    else if (c.name === 'ArgList') args = argsOf(c, text);
    else if (c.name !== 'At' && c.name !== '.') return undefined;
  }
  return names.length > 0 ? { name: names.join('.'), args } : undefined;
}

export function span(node: Node): Span {
  return { start: node.from, end: node.to };
}

// ---- parsing -------------------------------------------------------------------------

/** `python2`: the file is valid Python 2, another language to this front end, not a broken Python 3 file. */
export type ParseOutcome = { ok: true; tree: Tree; text: string } | { ok: false; message: string; span: Span; python2?: boolean };

export function parsePython(original: string): ParseOutcome {
  try {
    return parseChecked(original);
  } catch {
    // Lezer's tree of some inputs cannot be walked (a method chain thousands of links long).
    return { ok: false, message: 'This file is nested too deeply to be read: it was not analysed.', span: { start: 0, end: 0 } };
  }
}

function parseChecked(original: string): ParseOutcome {
  const nul = original.indexOf('\u0000');
  if (nul >= 0) return { ok: false, message: 'Not a Python source file: it contains NUL bytes. It was not analysed.', span: { start: 0, end: 0 } };
  // Form feeds are whitespace to Python (and to no Lezer rule).
  const text = repairTrailingDotFloats(repairParenthesizedWith(original).replace(/\f/g, ' '));
  let tree = pythonParser().parse(text);
  // Bytes that are not UTF-8 read as U+FFFD: text inside a string or a comment, a sign of binary elsewhere.
  for (let at = original.indexOf('\uFFFD'); at >= 0; at = original.indexOf('\uFFFD', at + 1)) {
    let node: Node | null = tree.resolveInner(at, 1);
    while (node && node.name !== 'String' && node.name !== 'FormatString' && node.name !== 'Comment') node = node.parent;
    if (!node) return { ok: false, message: 'Not a Python source file: it is not valid UTF-8. It was not analysed.', span: { start: at, end: at + 1 } };
  }
  let problem = syntaxProblems(tree, text);
  if (problem.error && !problem.python2 && !problem.legacy) {
    // Lezer's guard against deep left-associative trees also fires on long runs of
    // commented statements, and recovers with an error where the Python is valid.
    const again = parseWithoutDepthGuard(text);
    if (again) {
      const second = syntaxProblems(again, text);
      if (!second.error && !second.python2 && !second.legacy) {
        tree = again;
        problem = second;
      }
    }
  }
  const python2 = problem.python2 ?? problem.legacy;
  if (python2) {
    return { ok: false, python2: true, message: `File skipped: it is Python 2 (${python2.what}); pgq-audit reads Python 3, so this file was not analysed. Add it to "ignores" to leave it out silently.`, span: python2.span };
  }
  const error = problem.error;
  if (error) {
    return { ok: false, message: 'Python syntax error: this file does not parse as Python 3 and was not analysed.', span: error };
  }
  return { ok: true, tree, text };
}

/** The deepest tree the re-parse below may give: deeper than this, the guard's forced reduction was right. */
const MAX_REPARSE_DEPTH = 400;

/**
 * Parses again without Lezer's guard against deep left-associative trees. The guard
 * counts large reductions that start at the same offset and, past 300, forces the
 * parse out of the production with an error. A class body or a module of a few
 * hundred statements with comments between them reaches that count with a shallow
 * tree (the statements' repetition, not nesting), and valid Python reads as an error
 * (a long settings module, a class of commented hook declarations). The counter is
 * the parse's own field (`bigReductionCount` in @lezer/lr): it is reset between steps,
 * and the tree is kept only when it stays shallow, so a real chain of thousands of
 * operators is still refused. Undefined when this Lezer has no such field.
 */
function parseWithoutDepthGuard(text: string): Tree | undefined {
  const parse = pythonParser().startParse(text) as ReturnType<ReturnType<typeof pythonParser>['startParse']> & { bigReductionCount?: number };
  if (typeof parse.bigReductionCount !== 'number') return undefined;
  let tree: Tree | null;
  while (!(tree = parse.advance())) if (parse.bigReductionCount > 200) parse.bigReductionCount = 0;
  let depth = 0;
  let deepest = 0;
  tree.iterate({
    enter() {
      deepest = Math.max(deepest, ++depth);
      return deepest <= MAX_REPARSE_DEPTH;
    },
    leave() {
      depth--;
    },
  });
  return deepest <= MAX_REPARSE_DEPTH ? tree : undefined;
}

interface SyntaxProblems {
  /** The first Python 2 construct Lezer reads as a node of its own (a print statement, `<>`, 0777, `raise E, msg`, `except E, e`). */
  python2?: { what: string; span: Span };
  /** The first error node that shows Python 2 on its line (`exec "..."`, backquotes). */
  legacy?: { what: string; span: Span };
  /** The first error node, outside any other, that is not one of Lezer's known gaps on valid Python 3. */
  error?: Span;
}

/**
 * The kinds of node the file's index (flow/def-index.ts) reads, which the
 * walk below keeps for it so that it need not walk the tree again.
 */
export const INDEXED_KINDS: ReadonlySet<string> = new Set([
  'CallExpression',
  'FunctionDefinition',
  'ClassDefinition',
  'LambdaExpression',
  'ImportStatement',
  'Body',
  'AssignStatement',
  'UpdateStatement',
  'ScopeStatement',
  'ForStatement',
  'WithStatement',
  'ReturnStatement',
]);

/** Kinds whose end the index needs to know (the scopes it enters): a second entry, `leave`, marks it. */
const SCOPE_KINDS: ReadonlySet<string> = new Set(['FunctionDefinition', 'ClassDefinition', 'LambdaExpression']);

/** A node of INDEXED_KINDS as the tree's walk met it: entered, or (a scope) left. */
export interface WalkedNode {
  node: Node;
  leave?: true;
}

/** Per tree parsePython gave: its INDEXED_KINDS nodes in walk order, kept by syntaxProblems' walk (see indexedNodes). */
const walkedNodes = new WeakMap<Tree, readonly WalkedNode[]>();

/** The nodes of INDEXED_KINDS of a tree parsePython read, in the order a walk of the tree meets them; undefined for another tree. */
export function indexedNodes(tree: Tree): readonly WalkedNode[] | undefined {
  return walkedNodes.get(tree);
}

/**
 * What makes a parsed file unreadable, read in one pass over the tree. The same
 * pass keeps the nodes of INDEXED_KINDS (indexedNodes); a walk cut short (Python 2
 * found) keeps none, and its file is not read further.
 */
function syntaxProblems(tree: Tree, text: string): SyntaxProblems {
  const found: SyntaxProblems = {};
  const walked: WalkedNode[] = [];
  const scopes: Node[] = [];
  // Error nodes around the cursor: an error inside another is not looked at for `error` (the outer one is).
  let errorDepth = 0;
  const kinds = nodeKinds();
  tree.iterate({
    enter(ref) {
      if (found.python2) return false;
      // What the walk does at a node, by its type's id: most nodes (names, operators, punctuation) are none of these.
      const kind = kinds[ref.type.id];
      if (kind === 0) return;
      if (kind & INDEXED) {
        const node = ref.node;
        walked.push({ node });
        if (kind & SCOPE) scopes.push(node);
      }
      if (kind & ERROR) {
        // Backquotes and `exec "..."` leave error nodes; say why when the line shows it.
        if (!found.legacy) {
          const lineStart = text.lastIndexOf('\n', ref.from - 1) + 1;
          const line = text.slice(lineStart, text.indexOf('\n', ref.from) < 0 ? text.length : text.indexOf('\n', ref.from));
          if (/^\s*exec\s+["'\w]/.test(line)) found.legacy = { what: 'exec statement', span: { start: lineStart, end: lineStart + line.length } };
          else if (text[ref.from] === '`') found.legacy = { what: 'backquotes', span: { start: ref.from, end: ref.from + 1 } };
        }
        if (errorDepth === 0 && !found.error && !knownGap(ref.node, text)) found.error = { start: ref.from, end: Math.max(ref.to, ref.from + 1) };
        errorDepth++;
        return;
      }
      if (!(kind & CHECKED)) return;
      // By the cursor's name first: a node object is made only for the few kinds read further.
      switch (ref.name) {
        case 'PrintStatement':
          found.python2 = { what: 'print statement', span: { start: ref.from, end: ref.to } };
          return false;
        case 'CompareOp':
          if (text.slice(ref.from, ref.to) === '<>') found.python2 = { what: '<> operator', span: { start: ref.from, end: ref.to } };
          return;
        case 'Number':
          if (/^0+[1-9][0-9]*[lL]?$/.test(text.slice(ref.from, ref.to))) found.python2 = { what: 'octal literal without 0o', span: { start: ref.from, end: ref.to } };
          return;
        case 'RaiseStatement':
          if (children(ref.node).some((c) => c.name === ',')) found.python2 = { what: 'raise E, message', span: { start: ref.from, end: ref.to } };
          return;
        case 'TryStatement': {
          const parts = children(ref.node);
          for (let i = 0; i < parts.length; i++) {
            if (parts[i].name !== 'except') continue;
            // except E, name:  ->  except, test, ",", VariableName
            if (parts[i + 2]?.name === ',' && parts[i + 3]?.name === 'VariableName') {
              found.python2 = { what: 'except E, name', span: { start: parts[i].from, end: parts[i + 3].to } };
              return false;
            }
          }
          return;
        }
      }
      return;
    },
    leave(ref) {
      const kind = kinds[ref.type.id];
      if (kind & ERROR) errorDepth--;
      else if (kind & SCOPE) walked.push({ node: scopes.pop()!, leave: true });
    },
  });
  if (!found.python2) walkedNodes.set(tree, walked);
  return found;
}

const INDEXED = 1;
const SCOPE = 2;
const ERROR = 4;
/** The kinds syntaxProblems' switch reads further. */
const CHECKED = 8;
const CHECKED_KINDS: ReadonlySet<string> = new Set(['PrintStatement', 'CompareOp', 'Number', 'RaiseStatement', 'TryStatement']);

/** Per node type id of Lezer's Python grammar, what syntaxProblems' walk does there (INDEXED, SCOPE, ERROR, CHECKED). */
let kindsById: Uint8Array | undefined;

function nodeKinds(): Uint8Array {
  if (kindsById) return kindsById;
  const types = pythonParser().nodeSet.types;
  const kinds = new Uint8Array(types.length);
  for (const type of types) {
    kinds[type.id] =
      (INDEXED_KINDS.has(type.name) ? INDEXED : 0) | (SCOPE_KINDS.has(type.name) ? SCOPE : 0) | (type.isError ? ERROR : 0) | (CHECKED_KINDS.has(type.name) ? CHECKED : 0);
  }
  return (kindsById = kinds);
}

function knownGap(error: Node, text: string): boolean {
  const parent = error.parent;
  if (!parent) return false;
  // `yield` and `(yield)` with no value.
  if ((parent.name === 'YieldExpression' || parent.name === 'YieldStatement') && error.from === error.to) return true;
  // Floats written with a trailing dot: `4.`, `24.*3600.`
  if (parent.name === 'MemberExpression' && error.from === error.to && error.prevSibling?.name === '.' && /[0-9]\.$/.test(text.slice(0, error.from))) return true;
  // Match patterns (`case Point():`): they hold no SQL.
  for (let p: Node | null = parent; p; p = p.parent) if (p.name === 'MatchClause' || p.name === 'LiteralPattern' || p.name === 'ClassPattern') return true;
  // PEP 614 decorators: any expression after @.
  for (let p: Node | null = parent; p; p = p.parent) if (p.name === 'Decorator' || p.name === 'DecoratedStatement') return true;
  // Starred expressions Lezer does not know: a[*b], tuple[*Ts], for a, *rest in ..., *args: *Ts.
  if (text[error.from] === '*') return true;
  // Lambda parameters (`lambda a, /, b:`, `lambda a,:`) and match subjects (`match x,:`).
  for (let p: Node | null = parent; p; p = p.parent) if (p.name === 'LambdaExpression' || p.name === 'MatchStatement') return true;
  // with x as self.attr:  — an attribute as the target.
  if (parent.name === 'WithStatement') {
    for (let s = error.prevSibling; s; s = s.prevSibling) if (s.name === 'as') return true;
  }
  // with x as (a, b):
  if (parent.name === 'WithStatement' && error.prevSibling?.name === 'as') return true;
  if (parent.name === 'AssignStatement' && parent.prevSibling?.name === 'WithStatement') return true;
  if (parent.name === 'TypeDef' && parent.parent?.prevSibling?.name === 'WithStatement') return true;
  // A line break between two comments that Lezer, in long files, sometimes leaves as an error: nothing but whitespace.
  if (error.prevSibling?.name === 'Comment' && error.nextSibling?.name === 'Comment' && /^\s*$/.test(text.slice(error.from, error.to))) return true;
  return false;
}

/**
 * `with (a as b, c as d):` (Python 3.10) is a syntax error to Lezer. Blanking the
 * parentheses, the newlines and the comments between them gives the same
 * statement on one logical line, at the same offsets.
 */
export function repairParenthesizedWith(text: string): string {
  let out: string[] | undefined;
  const blank = (open: number, close: number) => {
    out ??= text.split(''); // by UTF-16 unit, as the offsets count: [...text] splits by code point, one off after an emoji
    out[open] = ' ';
    out[close] = ' ';
    blankLayout(text, open + 1, close, out);
  };
  for (const start of withHeaderStarts(text)) {
    if (text[start] === '(') {
      // with (a as b, c as d):
      const close = matchingParen(text, start);
      if (close >= 0 && /^[ \t]*:/.test(text.slice(close + 1)) && hasTopLevelAs(text.slice(start + 1, close))) blank(start, close);
    }
    // with x as (a, b):  — a tuple target; the names do not matter here.
    const headerEnd = headerEndAt(text, start);
    for (const target of text.slice(start, headerEnd).matchAll(/\bas[ \t]*\(/g)) {
      const open = start + (target.index ?? 0) + target[0].length - 1;
      const close = matchingParen(text, open);
      if (close >= 0 && close < headerEnd) blank(open, close);
    }
  }
  return out ? (out as string[]).join('') : text;
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';
const opensStatement = (c: string | undefined) => c === '\n' || c === ';' || c === ':';
const isWordChar = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_');

/**
 * Where each `with` statement's items begin: the offsets after the matches of
 * /(^|[\n;:])[ \t]*(?:async[ \t]+)?with\b[ \t]*\/g, found from each `with` in the
 * text (indexOf) and read around it, instead of trying the regex at every offset
 * of the file. The matches cannot overlap (after its first character a match
 * holds no [\n;:]), so each `with` is judged on its own.
 */
function withHeaderStarts(text: string): number[] {
  const starts: number[] = [];
  // Strings and comments, read once the first candidate is seen: a line of a triple-quoted string that starts
  // with `with x as (` is SQL (a CTE), not a statement, and must be left as it is.
  let quoted: QuotedSpans | undefined;
  for (let at = text.indexOf('with'); at >= 0; at = text.indexOf('with', at + 4)) {
    if (isWordChar(text[at + 4])) continue;
    if ((quoted ??= new QuotedSpans(text)).contains(at)) continue;
    let before = at;
    while (isBlank(text[before - 1])) before--;
    let opens = before === 0 || opensStatement(text[before - 1]);
    if (!opens && before < at && before >= 5 && text.startsWith('async', before - 5)) {
      let first = before - 5;
      while (isBlank(text[first - 1])) first--;
      opens = first === 0 || opensStatement(text[first - 1]);
    }
    if (!opens) continue;
    let end = at + 4;
    while (isBlank(text[end])) end++;
    starts.push(end);
  }
  return starts;
}

/** The string literals and comments of a text, in order, asked in increasing offsets. */
class QuotedSpans {
  private readonly spans: { start: number; end: number }[] = [];
  private next = 0;

  constructor(text: string) {
    // From one quote or `#` to the next by a regex search, not a loop over every character.
    const next = /["'#]/g;
    for (let m = next.exec(text); m; m = next.exec(text)) {
      const i = m.index;
      let end: number;
      if (text[i] === '#') {
        const nl = text.indexOf('\n', i);
        end = nl < 0 ? text.length : nl;
      } else end = skipPythonString(text, i);
      this.spans.push({ start: i, end });
      next.lastIndex = end;
    }
  }

  contains(at: number): boolean {
    while (this.next < this.spans.length && this.spans[this.next].end <= at) this.next++;
    const span = this.spans[this.next];
    return span !== undefined && span.start <= at && at < span.end;
  }
}

/** Offset of the `:` that ends a compound statement's header starting at `from` (outside brackets and strings). */
function headerEndAt(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") i = skipPythonString(text, i) - 1;
    else if (c === '#') {
      const nl = text.indexOf('\n', i);
      if (nl < 0 || depth === 0) return nl < 0 ? text.length : nl;
      i = nl;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && (c === ':' || c === '\n')) return i;
  }
  return text.length;
}

/** Offset of the parenthesis that closes the one at `open`, skipping strings and comments; -1 if none. */
function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '#') {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return -1;
      i = nl;
    } else if (c === '"' || c === "'") {
      i = skipPythonString(text, i) - 1;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return c === ')' ? i : -1;
    }
  }
  return -1;
}

function hasTopLevelAs(inner: string): boolean {
  let depth = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '"' || c === "'") {
      i = skipPythonString(inner, i) - 1;
      continue;
    }
    if (c === '#') {
      const nl = inner.indexOf('\n', i);
      i = nl < 0 ? inner.length : nl;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && inner.startsWith('as', i) && /\s/.test(inner[i - 1] ?? '') && /\s/.test(inner[i + 2] ?? '')) return true;
  }
  return false;
}

/** Newlines and comments between from and to (outside strings) become spaces. */
function blankLayout(text: string, from: number, to: number, out: string[]): void {
  for (let i = from; i < to; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = skipPythonString(text, i) - 1;
    } else if (c === '#') {
      while (i < to && text[i] !== '\n') out[i++] = ' ';
      if (i < to) out[i] = ' ';
    } else if (c === '\n' || c === '\r') out[i] = ' ';
    else if (c === '\\' && (text[i + 1] === '\n' || text[i + 1] === '\r')) out[i] = ' ';
  }
}

/** Index after the string literal whose quote is at `i`. */
export function skipPythonString(text: string, i: number): number {
  const quote = text[i];
  const triple = text[i + 1] === quote && text[i + 2] === quote;
  // The next character that may end the string, found by a regex search: a backslash (it escapes the
  // one after it), the quote, and in a one-line string a line break. A loop over every character ran in
  // the interpreter for much of a cold scan.
  const stop = quote === '"' ? (triple ? TRIPLE_DOUBLE_STOP : DOUBLE_STOP) : triple ? TRIPLE_SINGLE_STOP : SINGLE_STOP;
  // A raw prefix right before the quote keeps backslashes, but \" still does not end the string.
  stop.lastIndex = i + (triple ? 3 : 1);
  for (let m = stop.exec(text); m; m = stop.exec(text)) {
    const j = m.index;
    const c = text[j];
    if (c === '\\') stop.lastIndex = j + 2;
    else if (c === '\n') return j;
    else if (!triple) return j + 1;
    else if (text[j + 1] === quote && text[j + 2] === quote) return j + 3;
    else stop.lastIndex = j + 1;
  }
  return text.length;
}

const SINGLE_STOP = /[\\'\n]/g;
const DOUBLE_STOP = /[\\"\n]/g;
const TRIPLE_SINGLE_STOP = /[\\']/g;
const TRIPLE_DOUBLE_STOP = /[\\"]/g;

/** `1.`, `4/7.`: Lezer wants a digit after the dot. Outside strings and comments the dot becomes a space. */
export function repairTrailingDotFloats(text: string): string {
  if (!/\d\.(?![\w.])/.test(text)) return text;
  let out: string[] | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = skipPythonString(text, i) - 1;
    } else if (c === '#') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c >= '0' && c <= '9' && !/[\w.]/.test(text[i - 1] ?? '')) {
      let j = i;
      while (j < text.length && /[\d_]/.test(text[j])) j++;
      if (text[j] === '.' && !/[\w.]/.test(text[j + 1] ?? '')) {
        out ??= text.split(''); // by UTF-16 unit, as the offsets count: [...text] splits by code point, one off after an emoji
        out[j] = ' ';
      }
      i = j;
    }
  }
  return out ? out.join('') : text;
}
