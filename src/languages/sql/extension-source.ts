// Pieces of an extension's install script: many extensions keep their SQL in a `sql/` folder next to the
// extension's control file (`timescaledb.control.in`, `pg_partman.control`) and the build joins the pieces into
// `ext--1.0.sql`, which CREATE EXTENSION runs with check_function_bodies off. A piece is read as that script is.
import { readdirSync } from 'node:fs';
import { dirname, sep } from 'node:path';

/** Per folder, whether it holds a control file: asked once per folder and process. */
const controlFolders = new Map<string, boolean>();

function holdsControlFile(dir: string): boolean {
  let known = controlFolders.get(dir);
  if (known === undefined) {
    try {
      known = readdirSync(dir).some((name) => /\.control(?:\.in)?$/.test(name));
    } catch {
      known = false;
    }
    controlFolders.set(dir, known);
  }
  return known;
}

/** The file is under a `sql/` folder whose parent holds an extension's control file. */
export function inExtensionSource(file: string): boolean {
  if (!file.endsWith('.sql') || file.startsWith('db:')) return false;
  const parts = dirname(file).split(/[\\/]/);
  for (let i = parts.length - 1; i > 0; i--) {
    if (parts[i].toLowerCase() !== 'sql') continue;
    const parent = parts.slice(0, i).join(sep) || sep;
    if (holdsControlFile(parent === '' ? sep : parent)) return true;
  }
  return false;
}

