import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of pgq-audit's package.json, from src/ or from the built dist/src/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && JSON.parse(readFileSync(candidate, 'utf8')).name === 'pgq-audit') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('pgq-audit: cannot find its own package.json');
    dir = parent;
  }
}
