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
 * 30,000. Files that come anywhere near are left to typescript-estree: one linear pass that counts
 * bracket depth, chain tokens and unary operators (in strings too, so it can only overestimate).
 */
const MAX_BRACKET_DEPTH = 1000;
const MAX_CHAIN_TOKENS = 2500;
const MAX_UNARY_OPERATORS = 15000;

export function tooDeepForOxc(text: string): boolean {
  let depth = 0;
  let chains = 0;
  let unary = 0;
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123 || c === 60) {
      // ( [ { and < (type arguments nest too)
      if (++depth > MAX_BRACKET_DEPTH) return true;
    } else if (c === 41 || c === 93 || c === 125 || c === 62) {
      if (depth > 0) depth--;
      if (c === 62 && text.charCodeAt(i - 1) === 61 && ++chains > MAX_CHAIN_TOKENS) return true; // =>
    } else if (c === 63) {
      if (++chains > MAX_CHAIN_TOKENS) return true; // ?
    } else if (c === 33 || c === 126 || c === 45 || c === 43) {
      if (++unary > MAX_UNARY_OPERATORS) return true; // ! ~ - +
    } else if (c === 101 && text.startsWith('else', i) || c === 105 && text.charCodeAt(i + 1) === 102) {
      if (++chains > MAX_CHAIN_TOKENS) return true; // else, if
    }
  }
  return false;
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
