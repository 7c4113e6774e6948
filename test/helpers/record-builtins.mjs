// Loaded into a CLI child with --import (NODE_OPTIONS): when the child exits, the built-in modules it
// loaded (process.moduleLoadList) are written, one a line, to the file PGQ_RECORD_BUILTINS names
// (test/cli/cached-scan-loads.test.ts).
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  writeFileSync(process.env.PGQ_RECORD_BUILTINS, `${builtins.join('\n')}\n`);
});
