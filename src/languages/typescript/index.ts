// .ts .tsx .mts .cts .js .jsx .mjs .cjs: worker code on node-postgres,
// postgres.js, Kysely, Knex, Drizzle, Slonik, pg-promise, TypeORM and Prisma,
// parsed with typescript-estree (no type information needed). The ESLint
// plugin builds the same model from ESLint's own tree (src/eslint/).
import { parse, type TSESTree } from '@typescript-eslint/typescript-estree';
import { emptyFileModel, type FileModel } from '../../model/index.ts';
import { isDirectiveComment } from '../comments.ts';
import type { FrontEnd, FrontEndOptions } from '../types.ts';
import { analyzeTypeScript } from './analyze.ts';

export const TYPESCRIPT_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'] as const;

/** The model of a file from an ESTree Program with ranges (typescript-estree's, or ESLint's sourceCode.ast). */
export function buildTypeScriptModel(program: TSESTree.Program, text: string, file: string, options: FrontEndOptions = {}): FileModel {
  const model = emptyFileModel(file, 'typescript', text);
  for (const comment of program.comments ?? []) {
    if (isDirectiveComment(comment.value)) model.comments.push({ span: { start: comment.range[0], end: comment.range[1] }, text: comment.value.trim() });
  }
  analyzeTypeScript(model, program, options);
  return model;
}

function jsxFor(file: string): boolean {
  const lower = file.toLowerCase();
  // .js files may hold JSX (React projects); .ts and the module variants may not (`<T>x` is a cast there).
  return lower.endsWith('.tsx') || lower.endsWith('.jsx') || lower.endsWith('.js');
}

export const typescriptFrontEnd: FrontEnd = {
  language: 'typescript',
  extensions: TYPESCRIPT_EXTENSIONS,
  parse(text, file, options) {
    let program: TSESTree.Program;
    try {
      program = parse(text, { range: true, loc: false, comment: true, jsx: jsxFor(file), filePath: file });
    } catch (error) {
      const model = emptyFileModel(file, 'typescript', text);
      const e = error as { message?: string; index?: number; location?: { start?: { offset?: number } } };
      const at = typeof e.index === 'number' ? e.index : e.location?.start?.offset ?? 0;
      model.fatal = { message: `Parsing error: ${e.message ?? String(error)}`, span: { start: at, end: at } };
      return model;
    }
    return buildTypeScriptModel(program, text, file, options);
  },
};
