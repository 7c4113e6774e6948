// The source files below a project's root, in a stable order (sorted names,
// folders breadth first): the set a front end's project-wide readings look
// at (what every call of a helper passes, what every pool is made with).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface ProjectWalk {
  /** Folders left out by their name (dependencies, build output, tests, migrations). */
  skipDirs: RegExp;
  /** Whether a file is one of the project's sources. */
  accept(name: string, path: string): boolean;
  /** Past this many files the project is too large to read whole: undefined. */
  maxFiles: number;
}

export function walkProject(root: string, walk: ProjectWalk): string[] | undefined {
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
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!walk.skipDirs.test(entry.name)) dirs.push(path);
      } else if (entry.isFile() && walk.accept(entry.name, path)) {
        files.push(path);
        if (files.length > walk.maxFiles) return undefined;
      }
    }
  }
  return files;
}
