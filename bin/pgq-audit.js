#!/usr/bin/env node
// The CLI runs the compiled output; `npm ci` builds it (the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/run.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('pgq-audit: the package is not built; run `npm run build` in its folder.\n');
  process.exit(2);
}
await import(entry.href);
