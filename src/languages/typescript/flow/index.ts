// The flow engine of the TS/JS front end: one file's walk, with the project
// modules it imports read the same way. It knows no driver: what a driver's
// calls mean comes from the registry it is given (drivers/index.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { FileModel } from '../../../model/index.ts';
import type { FrontEndOptions } from '../../types.ts';
import type { DriverRegistry } from '../drivers/index.ts';
import { isAbsolute } from 'node:path';
import { keepReading, readingAsImport, TsFile, type AnalysisContext } from './file.ts';

export { parsedAsImport } from './file.ts';
import { MAX_IMPORT_DEPTH } from './modules.ts';
import { Walk } from './walk.ts';

const walker: AnalysisContext['walker'] = (file, env, state, name) => new Walk(file, env, state, { name });

export function analyzeTypeScript(model: FileModel, program: TSESTree.Program, options: FrontEndOptions, drivers: DriverRegistry, parse?: AnalysisContext['parse']): void {
  const context: AnalysisContext = { importDepth: MAX_IMPORT_DEPTH, parse, drivers, walker };
  // A file read already as another's import, where that reading is the one this walk would make: its model.
  const read = isAbsolute(model.file) && parse ? readingAsImport(model.file, program, options, context) : undefined;
  if (read) {
    const { file: _file, language: _language, text: _text, comments: _comments, ...found } = read.model;
    Object.assign(model, found);
  }
  const file = read ?? new TsFile(model, program, options, context);
  if (!read) {
    file.run();
    if (isAbsolute(model.file) && parse) keepReading(model.file, program, file);
  }
  // The modules read for the file, and those whose calls of its functions were read (project-callers.ts).
  const dependencies = [...new Set([...file.dependencies(), ...(model.dependencies ?? [])])].filter((p) => p !== model.file).sort();
  if (dependencies.length > 0) model.dependencies = dependencies;
}
