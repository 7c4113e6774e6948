// The context a file's cached analysis also depends on: project files its front end reads besides the
// file itself (a lock or requirements file for Python), hashed once per folder in a scan.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeCrypto } from '../node-crypto.ts';
import type { Language } from '../model/index.ts';
import { CONFIG_MAX_BYTES, readRegularFile } from '../read-file.ts';
import type { AnalysisCache } from './cache.ts';

/**
 * Project files a front end reads besides the source file itself, by
 * language: the Python front end takes the psycopg version from the nearest
 * lock or requirements file (src/languages/python/versions.ts). A cached
 * analysis holds only while these are unchanged too.
 */
export const CONTEXT_FILES: Partial<Record<Language, RegExp>> = {
  python: /^(uv\.lock|poetry\.lock|pyproject\.toml|requirements.*\.(txt|in))$/i,
};

/**
 * Hashes of the context files above a source file, read once per folder and file in a scan; with a
 * cache, a file whose stat is the one stored is not read, and a set hashed before is not hashed again.
 */
export class ContextHasher {
  private readonly listings = new Map<string, string[]>();
  private readonly hashes = new Map<string, string>();

  /** The answer per folder and language: the files of a folder share it. */
  private readonly byFolder = new Map<string, string>();

  constructor(private readonly cache?: AnalysisCache) {}

  /** '' when the language has no context files or none is there. */
  of(file: string, language: Language): string {
    const pattern = CONTEXT_FILES[language];
    if (!pattern) return '';
    const folder = dirname(file);
    const key = `${language}\0${folder}`;
    let value = this.byFolder.get(key);
    if (value === undefined) {
      value = this.ofFolder(folder, pattern);
      this.byFolder.set(key, value);
    }
    return value;
  }

  private ofFolder(folder: string, pattern: RegExp): string {
    const parts: string[] = [];
    let dir = folder;
    // The walk the front end makes: up to 12 folders, stopping at the repository root.
    for (let depth = 0; depth < 12; depth++) {
      const names = this.list(dir);
      for (const name of names) if (pattern.test(name)) parts.push(`${join(dir, name)}:${this.hashOf(join(dir, name))}`);
      if (names.includes('.git') || dirname(dir) === dir) break;
      dir = dirname(dir);
    }
    if (parts.length === 0) return '';
    const text = parts.join('\n');
    const known = this.cache?.contextSet(text);
    if (known !== undefined) return known;
    const hash = nodeCrypto().hash('sha1', text);
    this.cache?.rememberContextSet(text, hash);
    return hash;
  }

  private list(dir: string): string[] {
    let names = this.listings.get(dir);
    if (!names) {
      try {
        names = readdirSync(dir).sort();
      } catch {
        names = [];
      }
      this.listings.set(dir, names);
    }
    return names;
  }

  private hashOf(path: string): string {
    let value = this.hashes.get(path);
    if (value === undefined) {
      // The stat first: one taken after the read could stand for bytes written since.
      const stat = this.cache?.statOf(path);
      value = this.cache?.contextFile(path, stat);
      if (value === undefined) {
        try {
          value = nodeCrypto().hash('sha1', readRegularFile(path, CONFIG_MAX_BYTES));
        } catch {
          value = 'unreadable';
        }
        this.cache?.rememberContextFile(path, stat, value);
      }
      this.hashes.set(path, value);
    }
    return value;
  }
}
