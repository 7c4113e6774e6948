// pgq-audit as an ESLint plugin (flat config, ESLint 9 and 10):
//
//   import pgq from 'pgq-audit/eslint';
//   export default [...pgq.configs.recommended];
//
// Rule ids are the CLI's, as pgq/<rule-id>; findings are the CLI's for the
// same file: both build the model with src/languages/typescript.
import tsParser from '@typescript-eslint/parser';
import { loadSqlParser } from '../sql/index.ts';
import { VERSION } from '../version.ts';
import { eslintRules, recommendedRules, type PgqEslintRule } from './rules.ts';

// libpg-query is wasm: load it once, before ESLint calls any rule (they are synchronous).
await loadSqlParser();

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
export { plugin };
