// The programmatic scan from dist/, for the phase timings of one run; with
// "shaped": true, the rules' triggers are first replaced by the proposal in
// shaped-triggers.mjs (the prefilter runs in this thread, so that is enough).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { note } from './report.mjs';

const [root, { shaped, ...options }] = [process.argv[2], JSON.parse(process.argv[3])];
if (shaped) {
  const { rules } = await import(pathToFileURL(join(root, 'dist/rules/index.js')).href);
  const { applyShapedTriggers } = await import('./shaped-triggers.mjs');
  applyShapedTriggers(rules);
}
const { scan } = await import(pathToFileURL(join(root, 'dist/src/scan/scan.js')).href);
const result = await scan(options);
// Parses of imported project modules, when the scan ran in this thread and the build counts them.
const modules = await import(pathToFileURL(join(root, 'dist/src/languages/typescript/flow/modules.js')).href);
note({ stats: result.stats, findings: result.results.reduce((n, r) => n + r.messages.length, 0), importParses: modules.moduleParses?.count, reusedParses: modules.moduleParses?.reused, importWalks: modules.moduleParses?.walks });
