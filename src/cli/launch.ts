// What bin/pgq-audit.js runs (built to dist/cli/launch.js): the CLI's V8 settings first, then the
// CLI itself, the CommonJS bundle dist/cli/pgq-audit.cjs, compiled from V8's code cache when a
// previous run left one (code-cache.ts). The build (src/cli/bundle.mjs) puts the bundle's content
// hash in place of PGQ_BUNDLE_HASH.
import { fileURLToPath } from 'node:url';
import { lendImport } from '../import-module.ts';
import { codeCacheFolder, requireWithCodeCache } from './code-cache.ts';
import { setCliV8Settings } from './v8-settings.ts';

declare const PGQ_BUNDLE_HASH: string;

setCliV8Settings();
lendImport((specifier) => import(specifier));
const bundle = fileURLToPath(new URL('./pgq-audit.cjs', import.meta.url));
const cli = requireWithCodeCache(bundle, process.argv[2] ?? '', { id: PGQ_BUNDLE_HASH, folder: codeCacheFolder() }) as typeof import('./start.ts');
await cli.start();
