// One model per file, shared by every pgq rule ESLint runs on it: built from
// ESLint's own tree (context.sourceCode.ast) on the first rule's Program:exit
// and kept in a WeakMap keyed by the SourceCode, so it goes with the file.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { buildTypeScriptModel } from '../languages/typescript/index.ts';
import { emptyFileModel, type FileModel } from '../model/index.ts';

interface SourceCodeLike {
  text: string;
  ast: unknown;
}

interface Built {
  model: FileModel;
  /** Why the front end failed on this file; reported once, by the first pgq rule that runs on it. */
  error?: string;
  reported?: boolean;
}

const models = new WeakMap<object, Built>();

export interface ModelSettings {
  /** Extra call names (in-house wrappers) that take SQL as their first argument: ESLint `settings.pgq.queryFunctions`. */
  queryFunctions?: readonly string[];
}

export function modelFor(sourceCode: SourceCodeLike, file: string, settings: ModelSettings = {}): FileModel {
  return builtFor(sourceCode, file, settings).model;
}

/**
 * The file's model, and once per file the error the front end stopped with:
 * a bug of ours on one file must not stop the user's lint run, nor pass in
 * silence — the file gets one message saying its pgq rules did not run.
 */
export function builtFor(sourceCode: SourceCodeLike, file: string, settings: ModelSettings = {}): Built {
  let built = models.get(sourceCode);
  if (!built) {
    try {
      built = { model: buildTypeScriptModel(sourceCode.ast as TSESTree.Program, sourceCode.text, file, { queryFunctions: settings.queryFunctions }) };
    } catch (error) {
      built = { model: emptyFileModel(file, 'typescript', sourceCode.text), error: (error as Error)?.message ?? String(error) };
    }
    models.set(sourceCode, built);
  }
  return built;
}

/** The front end's error on this file, the first time it is asked for (one message per file). */
export function takeError(built: Built): string | undefined {
  if (!built.error || built.reported) return undefined;
  built.reported = true;
  return built.error;
}
