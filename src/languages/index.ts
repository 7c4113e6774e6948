// Front ends by file extension. TS/JS and Python plug in here; extensions.ts
// says which language a file is without loading them.
import { languageOf } from './extensions.ts';
import type { FrontEnd } from './types.ts';
import { pythonFrontEnd } from './python/index.ts';
import { sqlFrontEnd } from './sql/index.ts';
import { typescriptFrontEnd } from './typescript/index.ts';

export const frontEnds: FrontEnd[] = [sqlFrontEnd, pythonFrontEnd, typescriptFrontEnd];

export function frontEndFor(file: string): FrontEnd | undefined {
  const language = languageOf(file);
  return language && frontEnds.find((f) => f.language === language);
}

export type { FrontEnd, FrontEndOptions } from './types.ts';
