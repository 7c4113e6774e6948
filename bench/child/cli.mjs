// Runs the built pgq-audit CLI in this process (argv after the script), so
// the report holds the CLI's own peak memory, worker threads included.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import './report.mjs';

const [root, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], join(root, 'bin/pgq-audit.js'), ...args];
await import(pathToFileURL(join(root, 'bin/pgq-audit.js')).href);
