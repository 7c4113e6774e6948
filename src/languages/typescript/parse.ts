// The CLI's TS/JS parser: oxc-parser, a native parser (prebuilt per platform,
// installed as an npm package with no install script) whose tree is ESTree
// with typescript-estree's TS nodes. Asked for `range` and without
// ParenthesizedExpression nodes, it is the shape the walker reads (ESTree
// node types and `range`; never `parent` or `loc`); the comments get their
// `range` here. Measured on this repository's TS, the fixtures and the
// bench tree, it builds the same FileModel as typescript-estree
// (test/scan/ts-parser-parity.test.ts) several times faster.
//
// A file oxc rejects is parsed again with typescript-estree, so a syntax
// error is reported exactly as before (and a file that only oxc rejects is
// still analysed). Each parser is loaded on the first file that needs it.
import { createRequire } from 'node:module';
import type { TSESTree } from '@typescript-eslint/typescript-estree';

type Oxc = typeof import('oxc-parser');
type TypeScriptEstree = typeof import('@typescript-eslint/typescript-estree');

const require = createRequire(import.meta.url);
let oxc: Oxc | undefined;
let estree: TypeScriptEstree | undefined;

/** Parses a TS/JS file into a typescript-estree-shaped Program with `range` and `comments`. Throws on a syntax error. */
export function parseTypeScriptProgram(text: string, file: string): TSESTree.Program {
  return parseWithOxc(text, file) ?? parseWithTypeScriptEstree(text, file);
}

/** oxc's tree in typescript-estree's shape, or undefined when oxc reports a syntax error. */
export function parseWithOxc(text: string, file: string): TSESTree.Program | undefined {
  oxc ??= require('oxc-parser') as Oxc;
  const result = oxc.parseSync(file, text, { lang: langFor(file), sourceType: sourceTypeFor(file), astType: 'ts', range: true, preserveParens: false });
  if (result.errors.some((e) => e.severity === 'Error')) return undefined;
  const program = result.program as unknown as TSESTree.Program;
  program.comments = result.comments.map((c) => ({ type: c.type, value: c.value, range: [c.start, c.end] }) as TSESTree.Comment);
  return program;
}

/** typescript-estree, as the CLI ran it before: the reference for the tree, and the parser of files oxc rejects. */
export function parseWithTypeScriptEstree(text: string, file: string): TSESTree.Program {
  estree ??= require('@typescript-eslint/typescript-estree') as TypeScriptEstree;
  return estree.parse(text, { range: true, loc: false, comment: true, jsx: jsxFor(file), filePath: file });
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
