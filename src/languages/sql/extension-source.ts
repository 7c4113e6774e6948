// Pieces of an extension's install script: many extensions keep their SQL in a `sql/` folder next to the
// extension's control file (`timescaledb.control.in`, `pg_partman.control`) and the build joins the pieces into
// `ext--1.0.sql`, which CREATE EXTENSION runs with check_function_bodies off. A piece is read as that script is.
import { readdirSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Per folder, its control file's name, or '' for none: asked once per folder and process. */
const controlFiles = new Map<string, string>();

function controlFileIn(dir: string): string {
  let known = controlFiles.get(dir);
  if (known === undefined) {
    try {
      known = readdirSync(dir).filter((name) => /\.control(?:\.in)?$/.test(name)).sort()[0] ?? '';
    } catch {
      known = '';
    }
    controlFiles.set(dir, known);
  }
  return known;
}

/** A folder named sql somewhere in a path (what the folders' walk below looks for): a cheap test first. */
const SQL_FOLDER = /[\\/]sql[\\/]/i;

/** The control file of the extension whose `sql/` folder holds the file (the model depends on it), or undefined. */
export function extensionControlOf(file: string): string | undefined {
  if (!file.endsWith('.sql') || file.startsWith('db:') || !SQL_FOLDER.test(file)) return undefined;
  const parts = dirname(file).split(/[\\/]/);
  for (let i = parts.length - 1; i > 0; i--) {
    if (parts[i].toLowerCase() !== 'sql') continue;
    const parent = parts.slice(0, i).join(sep) || sep;
    const control = controlFileIn(parent);
    if (control) return join(parent, control);
  }
  return undefined;
}

