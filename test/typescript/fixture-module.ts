// Proofs run the TS fixtures' own code against the test database: the
// fixture modules read DATABASE_URL when they are imported and export their
// pools, so a proof can end them.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '../../fixtures/typescript');

/** Imports fixtures/typescript/<path> with DATABASE_URL set to `url` (each path once per process). */
export async function importFixture<T = Record<string, any>>(path: string, url: string): Promise<T> {
  process.env.DATABASE_URL = url;
  return (await import(pathToFileURL(join(root, path)).href)) as T;
}

/** Ends every pg Pool and postgres.js instance a fixture module exports. */
export async function endPools(...modules: Record<string, any>[]): Promise<void> {
  for (const m of modules) {
    for (const value of Object.values(m)) {
      if (value && typeof value === 'function' && typeof value.end === 'function' && typeof value.begin === 'function') await value.end({ timeout: 1 });
      else if (value && typeof value === 'object' && typeof value.end === 'function' && typeof value.connect === 'function') await value.end();
    }
  }
}

/** The functions a fixture declares (`declare const handlers`) are globals at run time. */
export function defineGlobal(name: string, value: unknown): void {
  (globalThis as Record<string, unknown>)[name] = value;
}
