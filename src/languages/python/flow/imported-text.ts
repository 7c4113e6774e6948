// SQL text a file imports from a module of the project: a constant (`from
// app.sql import CLAIM`), through re-exports, or read through the module or
// the class of constants it is imported with (`queries.CLAIM`, `Q.CLAIM`), or an
// item of a dict of SQL it imports (`QUERIES["CLAIM"]`).
import { SQL_TEXT } from '../drivers/index.ts';
import type { Node } from '../syntax.ts';
import { qualifiedName, type Imports } from './imports.ts';
import { classConstant, type ModuleSource } from './project.ts';
import { dictItem } from './sql-dicts.ts';
import { resolveText, type HostText } from './strings.ts';

/** What reads the modules of the project for a file. */
export interface ProjectReader {
  readonly imports: Imports;
  projectModule(module: string, level: number, from?: string): ModuleSource | undefined;
}

/** `from app.sql import CLAIM`: the text of the constant, read in its module (through re-exports). */
export function importedText(host: ProjectReader, dotted: string, depth = 0): HostText | undefined {
  const found = importedNode(host, dotted);
  return found ? textIn(host, found.source, found.value, depth) : undefined;
}

/**
 * `QUERIES["CLAIM"]` with `from app.sql import QUERIES` (or `sql.QUERIES["CLAIM"]`), QUERIES a dict of SQL
 * there: the text of the item, read in its module.
 */
export function importedItemText(host: ProjectReader, dotted: string, key: string, depth = 0): HostText | undefined {
  const found = importedNode(host, dotted);
  const item = found ? dictItem(found.value, key, found.source.text, (name) => found.source.constants.get(name)) : undefined;
  return found && item ? textIn(host, found.source, item, depth) : undefined;
}

/** The node a name the file imports is bound to in its module of the project (through re-exports), and that module. */
function importedNode(host: ProjectReader, dotted: string): { source: ModuleSource; value: Node } | undefined {
  if (dotted.includes('.')) return importedMemberNode(host, dotted);
  let from = host.imports.fromImports.get(dotted);
  let source = from ? host.projectModule(from.module, from.level) : undefined;
  let value = source && from ? source.constants.get(from.name) : undefined;
  // Re-exported: `from app.queries import CLAIM` in app/sql.py, imported from there.
  for (let depth = 0; source && from && !value && depth < 2; depth++) {
    from = source.imports.fromImports.get(from.name);
    source = from ? host.projectModule(from.module, from.level, source.path) : undefined;
    value = source && from ? source.constants.get(from.name) : undefined;
  }
  return source && value ? { source, value } : undefined;
}

/**
 * A constant read through the module or class it is imported with: `from app import queries` or `import
 * app.queries as q` then `queries.CLAIM`, `import app.queries` then `app.queries.CLAIM`, `from app.sql import Q`
 * (a class of constants) then `Q.CLAIM`.
 */
function importedMemberNode(host: ProjectReader, dotted: string): { source: ModuleSource; value: Node } | undefined {
  const parts = dotted.split('.');
  const attribute = parts.pop() as string;
  if (parts.length > 4) return undefined;
  const from = host.imports.fromImports.get(parts[0]);
  const base = host.imports.names.get(parts[0]);
  if (!from && !base) return undefined;
  let module: string;
  let level = 0;
  if (from) {
    module = [...(from.module ? [from.module] : []), from.name, ...parts.slice(1)].join('.');
    level = from.level;
  } else module = [base, ...parts.slice(1)].join('.');
  const source = host.projectModule(module, level);
  const value = source?.constants.get(attribute);
  if (source && value) return { source, value };
  // A class of constants: `Q` is a class of the module it is imported from.
  const dot = module.lastIndexOf('.');
  const owner = dot > 0 || level > 0 ? host.projectModule(module.slice(0, Math.max(dot, 0)), level) : undefined;
  const member = owner ? classConstant(owner, module.slice(dot + 1), attribute) : undefined;
  return owner && member ? { source: owner, value: member } : undefined;
}

/** How many modules a constant's own imports are followed through (`CLAIM = f"UPDATE {JOBS_TABLE} ..."` with JOBS_TABLE from settings). */
const MAX_IMPORT_DEPTH = 2;

/** SQL text a node of another module of the project holds, read there, with the constants that module imports in turn. */
function textIn(host: ProjectReader, source: ModuleSource, value: Node, depth: number): HostText | undefined {
  const qualify = (n: Node) => qualifiedName(n, source.text, source.imports);
  const there: ProjectReader = { imports: source.imports, projectModule: (module, level, from) => host.projectModule(module, level, from ?? source.path) };
  const imported = depth < MAX_IMPORT_DEPTH ? (name: string) => importedText(there, name, depth + 1) : undefined;
  const importedItem = depth < MAX_IMPORT_DEPTH ? (name: string, key: string) => importedItemText(there, name, key, depth + 1) : undefined;
  return resolveText(value, { text: source.text, qualify, constant: (other) => source.constants.get(other), sqlText: SQL_TEXT, imported, importedItem });
}
