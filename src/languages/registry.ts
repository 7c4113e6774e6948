// The front ends a scan's analysis runs, each loaded when the scan first has a
// file of its language to analyse (loadFrontEnds): a scan of migrations never
// compiles the TypeScript and Python front ends' code, a Python project's scan
// not the TypeScript one's. index.ts is the eager list (tests, the API).
import type { Language } from '../model/index.ts';
import { languageOf } from './extensions.ts';
import type { FrontEnd } from './types.ts';

const IMPORTS: Record<Language, () => Promise<FrontEnd>> = {
  sql: async () => (await import('./sql/index.ts')).sqlFrontEnd,
  python: async () => (await import('./python/index.ts')).pythonFrontEnd,
  typescript: async () => (await import('./typescript/index.ts')).typescriptFrontEnd,
};

/** The front ends loaded so far on this thread, looked up in order (a test may put one first). */
export const loadedFrontEnds: FrontEnd[] = [];
const loading = new Map<Language, Promise<void>>();

/** Loads the front ends of these languages that are not loaded yet. */
export function loadFrontEnds(languages: Iterable<Language>): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const language of languages) {
    let wait = loading.get(language);
    if (!wait) {
      wait = IMPORTS[language]().then((frontEnd) => void loadedFrontEnds.push(frontEnd));
      // A failed load is tried again by the next caller.
      wait.catch(() => loading.delete(language));
      loading.set(language, wait);
    }
    waits.push(wait);
  }
  return Promise.all(waits).then(() => undefined);
}

/** Whether the front end of every one of these files' languages is loaded (loadFrontEnds). */
export function frontEndsMissing(files: readonly string[]): Language[] {
  const missing = new Set<Language>();
  for (const file of files) {
    const language = languageOf(file);
    if (language && !loadedFrontEnds.some((f) => f.language === language)) missing.add(language);
  }
  return [...missing];
}

/** The loaded front end of a file's language; undefined when it has none, or it is not loaded. */
export function loadedFrontEndFor(file: string): FrontEnd | undefined {
  const language = languageOf(file);
  return language && loadedFrontEnds.find((f) => f.language === language);
}
