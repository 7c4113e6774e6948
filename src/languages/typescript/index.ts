// .ts .tsx .mts .cts .js .jsx .mjs .cjs: worker code on node-postgres,
// postgres.js, Kysely, Knex, Drizzle, Slonik, pg-promise, TypeORM, Prisma,
// Sequelize, Bun SQL, Neon, @vercel/postgres and Supabase, parsed with
// oxc-parser into typescript-estree's shape (parse.ts; no type information
// needed). The ESLint plugin builds the same model from ESLint's own tree
// (src/eslint/); both read the project modules a file imports its pool from
// with parseImported.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { emptyFileModel, type FileModel } from '../../model/index.ts';
import { isDirectiveComment } from '../comments.ts';
import { TYPESCRIPT_EXTENSIONS } from '../extensions.ts';
import type { FrontEnd, FrontEndOptions } from '../types.ts';
import { driverRegistry } from './drivers/index.ts';
import { analyzeTypeScript, parsedAsImport } from './flow/index.ts';
import { parseTypeScriptProgram } from './parse.ts';

/** The model of a file from an ESTree Program with ranges (typescript-estree's, or ESLint's sourceCode.ast). */
export function buildTypeScriptModel(program: TSESTree.Program, text: string, file: string, options: FrontEndOptions = {}): FileModel {
  const model = emptyFileModel(file, 'typescript', text);
  for (const comment of program.comments ?? []) {
    if (isDirectiveComment(comment.value)) model.comments.push({ span: { start: comment.range[0], end: comment.range[1] }, text: comment.value.trim() });
  }
  analyzeTypeScript(model, program, options, driverRegistry, parseImported);
  return model;
}

/**
 * Parses a project module a file imports (for what it exports): the CLI's
 * parser, in the CLI and in ESLint alike. Undefined where it does not parse;
 * what it exports is then unknown.
 */
export function parseImported(text: string, file: string): TSESTree.Program | undefined {
  try {
    return parseTypeScriptProgram(text, file);
  } catch {
    return undefined;
  }
}

export const typescriptFrontEnd: FrontEnd = {
  language: 'typescript',
  extensions: TYPESCRIPT_EXTENSIONS,
  parse(text, file, options) {
    let program: TSESTree.Program;
    try {
      // A module parsed already as an import of a file before it is not parsed again.
      program = parsedAsImport(file, text) ?? parseTypeScriptProgram(text, file);
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
