// The CLI's TS/JS parser: oxc-parser, a native parser (prebuilt per platform,
// installed as an npm package with no install script) whose tree is ESTree
// with typescript-estree's TS nodes. Asked for `range` and without
// ParenthesizedExpression nodes, it is the shape the walker reads (ESTree
// node types and `range`; never `parent` or `loc`); the comments get their
// `range` here. Measured on this repository's TS, the fixtures and the
// bench tree, it builds the same FileModel as typescript-estree
// (test/scan/ts-parser-parity.test.ts) several times faster.
//
// A syntax error is oxc's (message and offset). Only a file nested deeply
// enough to overflow oxc's native stack goes to typescript-estree, where it
// is installed (it comes with the ESLint plugin's optional peers). Each
// parser is loaded on the first file that needs it: typescript-estree
// (TypeScript itself, 9 MB of JS) almost never.
import { createRequire } from 'node:module';
import type { TSESTree } from '@typescript-eslint/typescript-estree';

type OxcResult = ReturnType<typeof import('oxc-parser').parseSync>;
type OxcOptions = NonNullable<Parameters<typeof import('oxc-parser').parseSync>[2]>;
/**
 * oxc-parser's native binding and its JSON reader, which its package exports as subpaths
 * (`src-js/bindings`, `src-js/wrap`). Its public parseSync also converts the file's ESM import
 * and export records to JS objects, which nothing here reads: a quarter of the parse time on the
 * bench tree's TS files (600 files: 670 -> 500 ms). The version is pinned; the parity test
 * (test/scan/ts-parser-parity.test.ts) holds the tree to typescript-estree's.
 */
interface Oxc {
  parseSync(filename: string, text: string, options: OxcOptions): { program: string; comments: OxcResult['comments']; errors: OxcResult['errors'] };
  jsonParseAst(json: string): unknown;
}
type TypeScriptEstree = typeof import('@typescript-eslint/typescript-estree');

const require = createRequire(import.meta.url);
let oxc: Oxc | undefined;

function loadOxc(): Oxc {
  const { parseSync } = require('oxc-parser/src-js/bindings') as Pick<Oxc, 'parseSync'>;
  const { jsonParseAst } = require('oxc-parser/src-js/wrap') as Pick<Oxc, 'jsonParseAst'>;
  return { parseSync, jsonParseAst };
}
/** null: not installed (a CLI-only install). */
let estree: TypeScriptEstree | null | undefined;

/** Parses a TS/JS file into a typescript-estree-shaped Program with `range` and `comments`. Throws on a syntax error. */
export function parseTypeScriptProgram(text: string, file: string): TSESTree.Program {
  // typescript-estree comes with the ESLint plugin's optional peers; without it a file too deep for oxc is one parse error.
  const tooDeep = tooDeepForOxc(text);
  if (tooDeep && typeScriptEstree() !== undefined) return parseWithTypeScriptEstree(text, file);
  const parsed = oxcParse(text, file, tooDeep);
  if (parsed.program) return parsed.program;
  throw parsed.error;
}

/** oxc's tree in typescript-estree's shape, or undefined when oxc reports a syntax error. */
export function parseWithOxc(text: string, file: string): TSESTree.Program | undefined {
  return oxcParse(text, file).program;
}

/**
 * oxc's parser recurses on the machine stack and has no depth limit: deep enough nesting ends the
 * process (SIGSEGV), where typescript-estree throws a RangeError. Measured with oxc-parser 0.159 on
 * Node 20.20 (worker threads have the smaller stack, 4 MB): parentheses crash a worker from about
 * 3,000 levels, conditional, arrow and else-if chains from about 5,000, `!` chains from about
 * 30,000. Files that come anywhere near are left to typescript-estree.
 *
 * What is measured is nesting, not how many such tokens a file has: one linear pass over the code
 * (strings, comments and regular expressions skipped) keeps, per bracket level, the length of the
 * conditional and arrow chain (`a ? b : c ? ...`, `a => b => ...`, ended by `;` or `,` at that
 * level), of the else-if chain (ended when the level closes) and of the run of unary operators,
 * and weighs the deepest point: a bracket level or an open type argument list costs 6, a chain link
 * 2, a unary operator 0.4, and 6,000 is too deep (1,000 parentheses, 3,000 chain links, 15,000 `!`).
 * A bundle with tens of thousands of `?` and `if` at shallow depth goes to oxc.
 */
const BRACKET_COST = 30;
const CHAIN_COST = 10;
const UNARY_COST = 2;
const MAX_DEPTH_COST = 30_000;

/**
 * Each character is weighed at most once and at most BRACKET_COST: an open bracket or `<` in its own
 * term, a chain link (`?`, `=>`), an `else` or a unary operator in the one level opened at its level
 * while it counts, or in the check at its own level. A text this short is never too deep, and is not
 * read (most modules are shorter).
 */
const NEVER_TOO_DEEP_CHARS = Math.floor(MAX_DEPTH_COST / BRACKET_COST);

export function tooDeepForOxc(text: string): boolean {
  return text.length > NEVER_TOO_DEEP_CHARS && weighsTooDeep(text);
}

/** The weighing itself, whatever the length (tooDeepForOxc skips the short texts). */
export function weighsTooDeep(text: string): boolean {
  /** Per open bracket level: the chain links and else links counted at that level. */
  const chains: number[] = [0];
  const elses: number[] = [0];
  /** What opening each level added to `below`, taken off again when it closes. */
  const opened: number[] = [0];
  let depth = 0;
  /** Open type arguments (`Array<` right after a name), ended by `>` or by the statement or block. */
  let angles = 0;
  /** Cost of the levels below the current one (brackets and their chains), kept as levels open and close. */
  let below = 0;
  let unary = 0;
  /** The last significant character, to tell a regular expression's `/` from a division. */
  let previous = 0;
  /** A statement just ended at this level: unless `else` comes next, the level's else-if chain is over. */
  let ended = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    if (ended) {
      ended = false;
      if (!(c === 101 && text.startsWith('else', i))) elses[depth] = 0;
    }
    if (c === 34 || c === 39 || c === 96) {
      i = skipString(text, i, c);
      previous = c;
      unary = 0;
      continue;
    }
    if (c === 47) {
      const next = text.charCodeAt(i + 1);
      if (next === 47) {
        const end = text.indexOf('\n', i);
        i = end < 0 ? n : end;
        continue;
      }
      if (next === 42) {
        const end = text.indexOf('*/', i + 2);
        i = end < 0 ? n : end + 1;
        continue;
      }
      if (startsRegExp(previous)) {
        i = skipRegExp(text, i);
        previous = 47;
        continue;
      }
    }
    if (c === 40 || c === 91 || c === 123) {
      // ( [ {: a level opens; its chains start afresh.
      const cost = BRACKET_COST + (chains[depth] + elses[depth]) * CHAIN_COST + unary * UNARY_COST;
      below += cost;
      depth++;
      chains[depth] = 0;
      elses[depth] = 0;
      opened[depth] = cost;
      unary = 0;
      if (c === 123) angles = 0;
      if (below > MAX_DEPTH_COST) return true;
    } else if (c === 41 || c === 93 || c === 125) {
      if (depth > 0) {
        below -= opened[depth];
        depth--;
      }
      unary = 0;
      if (c === 125) {
        angles = 0;
        ended = true;
      }
    } else if (c === 59 || c === 44) {
      chains[depth] = 0; // ; and , end a conditional or arrow chain
      unary = 0;
      if (c === 59) {
        angles = 0;
        ended = true;
      }
    } else if (c === 60 && isWordChar(text.charCodeAt(i - 1)) && startsType(text.charCodeAt(i + 1))) {
      angles++; // Name<T: type arguments (or a comparison: that can only overestimate)
      unary = 0;
    } else if ((c === 38 || c === 124) && text.charCodeAt(i + 1) === c) {
      angles = 0; // && and || are no type syntax: what came before was a comparison
      unary = 0;
      i++;
    } else if (c === 62) {
      if (angles > 0) angles--;
      unary = 0;
    } else if (c === 63) {
      const next = text.charCodeAt(i + 1);
      if (next === 63) i++; // ?? does not nest
      else if (next !== 46) chains[depth]++; // ?. does not either
      unary = 0;
    } else if (c === 61 && text.charCodeAt(i + 1) === 62) {
      chains[depth]++; // =>
      i++;
      unary = 0;
    } else if (c === 33 || c === 126 || c === 45 || c === 43) {
      unary++; // ! ~ - +: a run of them nests
    } else if (c === 101 && text.startsWith('else', i) && !isWordChar(text.charCodeAt(i - 1)) && !isWordChar(text.charCodeAt(i + 4))) {
      elses[depth]++;
      i += 3;
      unary = 0;
    } else {
      // Any other character: nothing grew, so nothing to weigh.
      unary = 0;
      previous = c;
      continue;
    }
    if (below + (chains[depth] + elses[depth]) * CHAIN_COST + unary * UNARY_COST + angles * BRACKET_COST > MAX_DEPTH_COST) return true;
    previous = c;
  }
  return false;
}

/** A type argument starts with a name, a literal, or an object, tuple or function type (a comparison's `<=`, `<<` and `< 1` do not). */
function startsType(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || c === 123 || c === 91 || c === 40 || c === 39 || c === 34 || c === 96;
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** Past a '...', "..." or `...` literal (a template's `${...}` parts included: nesting there is not measured). */
function skipString(text: string, start: number, quote: number): number {
  let braces = 0;
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) i++;
    else if (quote === 96 && c === 36 && text.charCodeAt(i + 1) === 123) {
      braces++;
      i++;
    } else if (braces > 0 && c === 125) braces--;
    else if (braces === 0 && c === quote) return i;
    else if (c === 10 && quote !== 96) return i; // an unterminated string ends at its line
  }
  return text.length;
}

/** A `/` after these starts a regular expression, not a division (after `)`, `]`, a name or a number it divides). */
function startsRegExp(previous: number): boolean {
  return previous === 0 || '(,=:[!&|?{};+-*%<>~^'.includes(String.fromCharCode(previous));
}

/** Past a regular expression literal: its escapes and character classes may hold a `/`. */
function skipRegExp(text: string, start: number): number {
  let inClass = false;
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 91) inClass = true;
    else if (c === 93) inClass = false;
    else if (c === 47 && !inClass) return i;
    else if (c === 10) return i;
  }
  return text.length;
}

function oxcParse(text: string, file: string, tooDeep = tooDeepForOxc(text)): { program?: TSESTree.Program; error?: ParseError } {
  if (tooDeep) return { error: new ParseError('the file is nested too deeply to parse', 0) };
  oxc ??= loadOxc();
  const result = oxc.parseSync(file, text, { lang: langFor(file), sourceType: sourceTypeFor(file), astType: 'ts', range: true, preserveParens: false });
  const error = result.errors.find((e) => e.severity === 'Error');
  if (error) return { error: new ParseError(error.message, error.labels[0]?.start ?? 0) };
  const program = oxc.jsonParseAst(result.program) as TSESTree.Program;
  program.comments = result.comments.map((c) => ({ type: c.type, value: c.value, range: [c.start, c.end] }) as TSESTree.Comment);
  return { program };
}

/** A syntax error, at an offset: the shape the front end reads from typescript-estree's errors. */
export class ParseError extends Error {
  constructor(
    message: string,
    readonly index: number,
  ) {
    super(message);
  }
}

/** typescript-estree, as the CLI ran it before: the reference for the tree, and the parser of files oxc rejects. */
export function parseWithTypeScriptEstree(text: string, file: string): TSESTree.Program {
  const estree = typeScriptEstree();
  if (!estree) throw new Error('@typescript-eslint/typescript-estree is not installed');
  return estree.parse(text, { range: true, loc: false, comment: true, jsx: jsxFor(file), filePath: file });
}

function typeScriptEstree(): TypeScriptEstree | undefined {
  if (estree === undefined) {
    try {
      estree = require('@typescript-eslint/typescript-estree') as TypeScriptEstree;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
      estree = null;
    }
  }
  return estree ?? undefined;
}

function extension(file: string): string {
  const lower = file.toLowerCase();
  return lower.slice(lower.lastIndexOf('.'));
}

/** .js files may hold JSX (React projects); .ts and the module variants may not (`<T>x` is a cast there). */
function jsxFor(file: string): boolean {
  const ext = extension(file);
  return ext === '.tsx' || ext === '.jsx' || ext === '.js';
}

function langFor(file: string): 'ts' | 'tsx' | 'js' | 'jsx' {
  switch (extension(file)) {
    case '.tsx':
      return 'tsx';
    case '.js':
    case '.jsx':
      return 'jsx';
    case '.mjs':
    case '.cjs':
      return 'js';
    default:
      return 'ts';
  }
}

function sourceTypeFor(file: string): 'module' | 'unambiguous' {
  // Plain .js/.cjs may be sloppy-mode scripts; TS and .mjs are modules.
  const ext = extension(file);
  return ext === '.js' || ext === '.jsx' || ext === '.cjs' ? 'unambiguous' : 'module';
}
