// The psycopg version a Python file runs with, read from the project files
// nearest to it: uv.lock and poetry.lock (exact), requirements*.txt and
// pyproject.toml (exact pins or lower bounds). Read once per directory.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readConfigText } from '../../read-file.ts';

export interface VersionPin {
  /** The lowest version the project allows (the exact one for == and locks). */
  version: string;
  exact: boolean;
  /** File name the pin was read from, e.g. "poetry.lock". */
  source: string;
}

const cache = new Map<string, VersionPin | null>();
/** Per folder: it holds .git (where the search for a pin stops). Asked once per folder, as `cache` reads each folder's files once. */
const gitFolders = new Map<string, boolean>();

function holdsGit(dir: string): boolean {
  let known = gitFolders.get(dir);
  if (known === undefined) gitFolders.set(dir, (known = existsSync(join(dir, '.git'))));
  return known;
}

/** psycopg (3) as pinned near `file`; undefined when no project file says. */
export function psycopgPin(file: string): VersionPin | undefined {
  let dir = dirname(file);
  for (let depth = 0; depth < 12; depth++) {
    const found = pinInDirectory(dir);
    if (found !== null) return found;
    if (holdsGit(dir)) return undefined;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** The pin in this directory's files; null when none of them names psycopg. */
function pinInDirectory(dir: string): VersionPin | null {
  const cached = cache.get(dir);
  if (cached !== undefined) return cached;
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    entries = [];
  }
  const read = (name: string) => {
    try {
      return readConfigText(join(dir, name));
    } catch {
      return '';
    }
  };
  let pin: VersionPin | null = null;
  for (const lock of ['uv.lock', 'poetry.lock']) {
    if (pin || !entries.includes(lock)) continue;
    const version = lockedVersion(read(lock));
    if (version) pin = { version, exact: true, source: lock };
  }
  if (!pin) {
    const candidates = [...entries.filter((e) => /^requirements.*\.(txt|in)$/i.test(e)).sort(), ...(entries.includes('pyproject.toml') ? ['pyproject.toml'] : [])];
    for (const name of candidates) {
      const found = requirementPin(read(name), basename(name) === 'pyproject.toml');
      if (found) {
        pin = { ...found, source: name };
        if (found.exact) break;
      }
    }
  }
  cache.set(dir, pin);
  return pin;
}

/** `[[package]]\nname = "psycopg"\nversion = "3.3.6"` in uv.lock and poetry.lock. */
export function lockedVersion(lock: string): string | undefined {
  const match = /\[\[package\]\]\s*\n\s*name\s*=\s*"psycopg"\s*\n\s*version\s*=\s*"([^"]+)"/.exec(lock);
  return match?.[1];
}

/**
 * A psycopg requirement in requirements.txt (`psycopg[binary,pool]==3.3.6`,
 * `psycopg>=3.1,<3.2`) or pyproject.toml (PEP 621 strings, or Poetry's
 * `psycopg = "^3.1.7"` / `psycopg = { version = "3.3.6", extras = [...] }`).
 */
export function requirementPin(text: string, toml: boolean): { version: string; exact: boolean } | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.replace(/(^|\s)#.*$/, '').trim());
  for (const line of lines) {
    const specs: string[] = [];
    // Poetry: psycopg = "^3.1.7" / psycopg = { version = "3.3.6", extras = [...] }
    const poetry = toml ? /^psycopg(?:-binary)?\s*=\s*(?:"([^"]+)"|\{[^}]*version\s*=\s*"([^"]+)")/.exec(line) : null;
    if (poetry) specs.push(poetry[1] ?? poetry[2]);
    // requirements / PEP 621: psycopg, psycopg-binary, psycopg-c, psycopg[...]; not psycopg2, psycopg-pool
    const pep = /(?:^|["'\s,[])psycopg(?:-binary|-c)?(?:\[[^\]]*\])?\s*((?:[=<>!~]=?|===)[^"';]+)/.exec(line);
    if (pep) specs.push(pep[1]);
    for (const spec of specs) {
      const pin = lowerBound(spec);
      if (pin) return pin;
    }
  }
  return undefined;
}

/** The lowest version a specifier allows: `==3.3.6` exact; `>=3.3.5,<4`, `~=3.3.5`, `^3.3.5` lower bounds. */
function lowerBound(spec: string): { version: string; exact: boolean } | undefined {
  const clauses = spec.split(',').map((c) => c.trim());
  let best: { version: string; exact: boolean } | undefined;
  for (const clause of clauses) {
    const match = /^(===|==|>=|~=|\^|~|>|<=|<|!=)?\s*v?(\d+(?:\.\d+)*)(\.\*)?/.exec(clause);
    if (!match) continue;
    const [, op = '==', version, wildcard] = match;
    if (op === '<' || op === '<=' || op === '!=') continue;
    const exact = (op === '==' || op === '===') && !wildcard;
    if (!best || exact) best = { version, exact };
  }
  return best;
}

/** Negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((p) => parseInt(p, 10) || 0);
  const pb = b.split('.').map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Forgets what was read (tests that write project files). */
export function clearVersionCache(): void {
  cache.clear();
  gitFolders.clear();
}
