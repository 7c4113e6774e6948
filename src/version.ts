import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.ts';

export const VERSION: string = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version;
