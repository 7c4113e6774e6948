// A .sql file another .sql file pulls in with a Jinja `{% include "path" %}` (often inside a comment,
// `/*{% include "../meta/catalog.sql" %}*/`, so the includer stays PostgreSQL): a fragment of the includer,
// maybe of a function body (`perform ...`, `if ... then`), that no tool runs alone. Asked only about a file
// that does not parse, so a fragment that is valid SQL on its own is still read.
import { dirname, resolve, sep } from 'node:path';
import { sqlFilesIn } from '../../read-file.ts';

/** Jinja's include tag and the path it names (`{% include 'x.sql' %}`, `{%- include "x.sql" ignore missing -%}`). */
const INCLUDE = /\{%-?\s*include\s+(["'])([^"'\n]+?\.sql)\1/gi;
/** How many folders up the includer is looked for, and the largest includer read. */
const LEVELS_UP = 2;
const MAX_TEMPLATE_BYTES = 512 * 1024;

export interface Includer {
  /** The file whose include tag names the fragment. */
  file: string;
  /** The tag, as written. */
  tag: string;
}

/** Per folder, the targets of the include tags of its .sql files, asked once per folder and process. */
const includesByFolder = new Map<string, { path: string; includer: Includer }[]>();

function includesIn(dir: string): { path: string; includer: Includer }[] {
  let known = includesByFolder.get(dir);
  if (known) return known;
  known = [];
  includesByFolder.set(dir, known);
  for (const { file, text } of sqlFilesIn(dir, MAX_TEMPLATE_BYTES)) {
    if (!text.includes('include')) continue;
    for (const m of text.matchAll(INCLUDE)) known.push({ path: m[2], includer: { file, tag: m[0].replace(/\s+/g, ' ') } });
  }
  return known;
}

/**
 * The .sql file, in the fragment's folder or up to two above it, whose include tag names the fragment: by its
 * path from the includer's folder, or, as a template loader searches its own root, by the path's tail.
 */
export function templateIncluding(file: string): Includer | undefined {
  if (!file.toLowerCase().endsWith('.sql') || file.startsWith('db:')) return undefined;
  const target = resolve(file);
  const slashed = target.split(sep).join('/');
  let dir = dirname(target);
  for (let level = 0; level <= LEVELS_UP; level++) {
    for (const { path, includer } of includesIn(dir)) {
      if (includer.file === target) continue;
      const tail = path.replace(/\\/g, '/').replace(/^(?:\.\.?\/)+/, '');
      if (resolve(dir, path) === target || slashed.endsWith(`/${tail}`)) return includer;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
