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

const models = new WeakMap<object, FileModel>();

export interface ModelSettings {
  /** Extra call names (in-house wrappers) that take SQL as their first argument: ESLint `settings.pgq.queryFunctions`. */
  queryFunctions?: readonly string[];
}

export function modelFor(sourceCode: SourceCodeLike, file: string, settings: ModelSettings = {}): FileModel {
  let model = models.get(sourceCode);
  if (!model) {
    try {
      model = buildTypeScriptModel(sourceCode.ast as TSESTree.Program, sourceCode.text, file, { queryFunctions: settings.queryFunctions });
    } catch {
      // A bug of ours on one file must not stop the user's lint run: the file simply gets no pgq findings.
      model = emptyFileModel(file, 'typescript', sourceCode.text);
    }
    models.set(sourceCode, model);
  }
  return model;
}
