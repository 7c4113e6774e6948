// pgq-audit as an ESLint plugin (flat config, ESLint 9 and 10), for configs
// of either module kind:
//
//   import pgq from 'pgq-audit/eslint';            const pgq = require('pgq-audit/eslint');
//   export default [...pgq.configs.recommended];   module.exports = [...pgq.configs.recommended];
//
// This module is what require() loads (package.json "exports"): it has no
// top-level await, which require() refuses (ERR_REQUIRE_ASYNC_MODULE), and
// starts the SQL parser's load instead; index.ts, what import loads, awaits it.
// Rule ids are the CLI's, as pgq/<rule-id>; findings are the CLI's for the
// same file: both build the model with src/languages/typescript.
import tsParser from '@typescript-eslint/parser';
import { startLoadingSqlParser } from '../sql/index.ts';
import { VERSION } from '../version.ts';
import { eslintRules, recommendedRules, type PgqEslintRule } from './rules.ts';

// libpg-query is wasm and ESLint's rules are synchronous: the parser must be loaded before the first file is linted.
startLoadingSqlParser();

const JS_FILES = ['**/*.js', '**/*.jsx', '**/*.mjs', '**/*.cjs'];
const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];

interface FlatConfig {
  name: string;
  files: string[];
  plugins?: Record<string, unknown>;
  languageOptions?: Record<string, unknown>;
  rules?: Record<string, 'error' | 'warn' | 'off'>;
}

interface PgqPlugin {
  meta: { name: string; namespace: string; version: string };
  rules: Record<string, PgqEslintRule>;
  configs: { recommended: FlatConfig[] };
}

const plugin: PgqPlugin = {
  meta: { name: 'pgq-audit', namespace: 'pgq', version: VERSION },
  rules: eslintRules,
  configs: { recommended: [] },
};

plugin.configs.recommended = [
  {
    name: 'pgq/recommended',
    files: [...TS_FILES, ...JS_FILES],
    plugins: { pgq: plugin },
    rules: Object.fromEntries(recommendedRules.map((r) => [`pgq/${r.id}`, r.defaultSeverity])),
  },
  {
    name: 'pgq/recommended/typescript-parser',
    files: TS_FILES,
    languageOptions: { parser: tsParser, sourceType: 'module' },
  },
];

export default plugin;
// require('pgq-audit/eslint') returns the plugin itself, not the module's namespace.
export { plugin, plugin as 'module.exports' };
