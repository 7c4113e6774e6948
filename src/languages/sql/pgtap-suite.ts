// A helper file of a pgTAP suite: a pgTAP script (`SELECT plan(3)` ... `finish()`, run by pg_prove through psql)
// includes it with `\ir fixtures.sql`. Its statements run on that psql connection, in the test's database: the
// routines it defines are the suite's helpers, called by its scripts, not by an application's pooled jobs.
import { dirname, isAbsolute, resolve } from 'node:path';
import { sqlFilesIn } from '../../read-file.ts';

/** A pgTAP script (pg_prove runs it through psql): `SELECT plan(3)`, `no_plan()`, `finish()` or `runtests()`. */
export const PGTAP_SCRIPT = /^[ \t]*select\s+(?:\*\s+from\s+)?(?:\w+\.)?(?:plan\s*\(\s*\d+|no_plan\s*\(\s*\)|finish\s*\(|runtests\s*\()/im;
/** psql's include commands and the path they name. */
const INCLUDE = /^[ \t]*\\(ir|i|include_relative|include)[ \t]+'?([^'\s]+)'?/gm;
/** How many folders up the including script is looked for, and the largest script read. */
const LEVELS_UP = 2;
const MAX_SCRIPT_BYTES = 256 * 1024;
/** A folder of a test suite, or one of the two folders below it. */
const IN_TEST_FOLDER = /(?:^|\/)(?:t|tests?|specs?|[\w-]*[-_]tests?|[\w-]*pgtap[\w-]*)(?:\/[^/]+){0,2}$/i;
/** A folder of a test suite's name anywhere in a path: an absolute path without one is in no test folder, resolved or not. */
const TEST_FOLDER_ANYWHERE = /(?:^|[/\\])(?:t|tests?|specs?|[\w-]*[-_]tests?|[\w-]*pgtap[\w-]*)[/\\]/i;

/** Per folder, the files a pgTAP script there includes (resolved), asked once per folder and process. */
const includedByFolder = new Map<string, Map<string, string>>();

function includedIn(dir: string): Map<string, string> {
  let known = includedByFolder.get(dir);
  if (known) return known;
  known = new Map();
  includedByFolder.set(dir, known);
  for (const { file: script, text } of sqlFilesIn(dir, MAX_SCRIPT_BYTES)) {
    if (!PGTAP_SCRIPT.test(text)) continue;
    // \ir is relative to the script; \i to psql's working folder, which pg_prove runs from the suite: read as \ir.
    for (const m of text.matchAll(INCLUDE)) known.set(resolve(dir, m[2]), script);
  }
  return known;
}

/** The pgTAP script that includes the file, a folder or two up (the model depends on it), or undefined. */
export function pgtapScriptIncluding(file: string): string | undefined {
  if (!file.toLowerCase().endsWith('.sql') || file.startsWith('db:')) return undefined;
  // Resolving only drops `.`, `..` and repeated separators from an absolute path: no folder name comes in (1,500 migrations: a path's work each).
  if (isAbsolute(file) && !TEST_FOLDER_ANYWHERE.test(file)) return undefined;
  const target = resolve(file);
  // Suites live in test folders (`test/`, `tests/`, `t/`, `spec/`, `pgtap/`): elsewhere (a migrations folder of
  // thousands of files) the folder is not read a second time to look for a script that includes the file.
  if (!IN_TEST_FOLDER.test(dirname(target).replace(/\\/g, '/'))) return undefined;
  let dir = dirname(target);
  for (let level = 0; level <= LEVELS_UP; level++) {
    const script = includedIn(dir).get(target);
    if (script && script !== target) return script;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
