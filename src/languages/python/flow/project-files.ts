// The Python files of a project, the set the project-wide readings look at
// (project-pools.ts, project-callers.ts): the application's own modules,
// without tests, migrations, virtual environments and build output. Kept
// apart from both so that neither imports the other (nor the drivers).
import { isTestPath } from '../../../model/test-evidence.ts';
import { walkProject } from '../../../project-walk.ts';

/** Modules looked at in one project, at most: past it, what the project makes is not known. */
const MAX_FILES = 1500;
/** Folders that are not the application's code, or not its runtime. */
const SKIP_DIRS = /^(\..*|node_modules|__pycache__|venv|env|site-packages|build|dist|tests?|migrations|alembic)$/;

/** The Python files of the project, without tests and migrations; undefined past MAX_FILES. */
export function projectFiles(root: string): string[] | undefined {
  return walkProject(root, { skipDirs: SKIP_DIRS, accept: (name) => name.endsWith('.py') && !isTestPath(name), maxFiles: MAX_FILES });
}
