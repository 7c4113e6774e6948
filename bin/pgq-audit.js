#!/usr/bin/env node
// The CLI runs the built bundle (dist/cli: one file to load instead of a
// hundred modules, through V8's code cache, src/cli/launch.ts); `npm ci`
// builds it (the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/launch.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('pgq-audit: the package is not built; run `npm run build` in its folder.\n');
  process.exit(2);
}
await import(entry.href);
