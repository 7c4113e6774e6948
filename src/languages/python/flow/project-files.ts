// The Python files of a project, the set the project-wide readings look at
// (project-pools.ts, project-callers.ts): the application's own modules,
// without tests, migrations, virtual environments and build output. Kept
// apart from both so that neither imports the other (nor the drivers).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isTestPath } from '../../../model/test-evidence.ts';

/** Modules looked at in one project, at most: past it, what the project makes is not known. */
const MAX_FILES = 1500;
/** Folders that are not the application's code, or not its runtime. */
const SKIP_DIRS = /^(\..*|node_modules|__pycache__|venv|env|site-packages|build|dist|tests?|migrations|alembic)$/;

/** The Python files of the project, without tests and migrations; undefined past MAX_FILES. */
export function projectFiles(root: string): string[] | undefined {
  const files: string[] = [];
  const dirs = [root];
  while (dirs.length > 0) {
    const dir = dirs.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.test(entry.name)) dirs.push(join(dir, entry.name));
      } else if (entry.isFile() && entry.name.endsWith('.py') && !isTestPath(entry.name)) {
        files.push(join(dir, entry.name));
        if (files.length > MAX_FILES) return undefined;
      }
    }
  }
  return files;
}
