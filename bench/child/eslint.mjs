// ESLint with only pgq.configs.recommended (which brings typescript-eslint's
// parser for .ts), on the same tree, the way a user would run it (concurrency
// auto). ESLint needs an options module for worker threads: it is written
// next to the tree.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { note } from './report.mjs';

const [root, treeRoot, concurrency, ...paths] = process.argv.slice(2);
const require = createRequire(join(root, 'package.json'));
const optionsModule = join(treeRoot, '.eslint-bench-options.mjs');
writeFileSync(
  optionsModule,
  `import pgq from ${JSON.stringify(pathToFileURL(join(root, 'dist/src/eslint/index.js')).href)};
const recommended = Array.isArray(pgq.configs.recommended) ? pgq.configs.recommended : [pgq.configs.recommended];
export default {
  cwd: ${JSON.stringify(treeRoot)},
  overrideConfigFile: true,
  concurrency: ${JSON.stringify(concurrency === 'off' ? 'off' : concurrency === 'auto' ? 'auto' : Number(concurrency))},
  overrideConfig: recommended,
};
`,
);
const { ESLint } = await import(pathToFileURL(require.resolve('eslint')).href);
const eslint = await ESLint.fromOptionsModule(pathToFileURL(optionsModule));
const results = await eslint.lintFiles(paths);
note({
  files: results.length,
  // Every pgq finding, for the parity check against the CLI's report.
  pgq: results.flatMap((r) => r.messages.filter((m) => m.ruleId?.startsWith('pgq/')).map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId.slice(4)}`)),
  findings: results.reduce((n, r) => n + r.messages.filter((m) => m.ruleId?.startsWith('pgq/')).length, 0),
  fatal: results.reduce((n, r) => n + r.messages.filter((m) => m.fatal).length, 0),
});
