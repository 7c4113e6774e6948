// Which language a file is written in, by its extension: all a scan needs to
// know of a file before it analyses it. Kept apart from the front ends
// (index.ts), so a scan served from the cache does not load them.
import type { Language } from '../model/index.ts';

export const TYPESCRIPT_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'] as const;
export const PYTHON_EXTENSIONS = ['.py'] as const;
export const SQL_EXTENSIONS = ['.sql'] as const;

export const LANGUAGES: readonly { language: Language; extensions: readonly string[] }[] = [
  { language: 'sql', extensions: SQL_EXTENSIONS },
  { language: 'python', extensions: PYTHON_EXTENSIONS },
  { language: 'typescript', extensions: TYPESCRIPT_EXTENSIONS },
];

const byExtension = new Map(LANGUAGES.flatMap(({ language, extensions }) => extensions.map((e) => [e, language] as const)));

export function languageOf(file: string): Language | undefined {
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : byExtension.get(file.slice(dot).toLowerCase());
}

export const supportedExtensions = (): string[] => LANGUAGES.flatMap((l) => [...l.extensions]);
