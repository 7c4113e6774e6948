// The package's `prepare` script: builds dist/ (npm run build). npm runs it
// on `npm ci` in a checkout, and when it installs the package from git —
// which pre-commit does for the hook in .pre-commit-hooks.yaml, with
// `npm install -g git+file://<clone>`. A global install from git prepares
// the clone without its devDependencies (npm/cli#8440: `tsc: not found`, seen
// with npm 11.19.1 and pre-commit 4.6.2), so install them here first.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
const run = (args, env = process.env) => execFileSync(npm[0], [...npm.slice(1), ...args], { cwd: root, stdio: 'inherit', env });

if (!existsSync(join(root, 'node_modules/typescript/package.json'))) {
  const local = { ...process.env, npm_config_global: 'false', npm_config_prefix: root };
  for (const key of Object.keys(local)) if (/^npm_config_(install_links|allow_git)$/i.test(key)) delete local[key];
  run(['ci', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund'], local);
}
run(['run', 'build']);
