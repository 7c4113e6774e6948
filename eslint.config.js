// The project's own lint (`npm run lint`, a step of `npm test`, warnings fail
// it): typescript-eslint's recommended rules and pgq-audit's own
// (pgq.configs.recommended, the built plugin) over the source, the rules, the
// tests, the bench and bin/. fixtures/ hold bad code on purpose and are not linted.
// `npm run lint` names this file (-c): ESLint 10 would otherwise lint test/eslint/
// with the fixture config there, which holds only the pgq rules.
import { defineConfig } from 'eslint/config';
import pgq from 'pgq-audit/eslint';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'fixtures/**', 'node_modules/**', '.pgq-bench/**', 'coverage/**', 'test/core/.readme-eslint.config.mjs'] },
  ...tseslint.configs.recommended,
  ...pgq.configs.recommended,
  {
    name: 'pgq-audit/own-code',
    rules: {
      // `any` is where the types end on purpose: Rule<any> lists of rules with different
      // options, parser nodes, fixture modules imported by path. tsc still checks the rest.
      '@typescript-eslint/no-explicit-any': 'off',
      // The model walks chains from `this` (for (let env = this; env; env = env.parent)).
      '@typescript-eslint/no-this-alias': 'off',
      // `cond ? this.statement(n) : this.expression(n)` is how the walkers dispatch.
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true, allowShortCircuit: true }],
      // `const { tags: _, ...plain } = atom` drops a field on purpose; `_name` is unused on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // `let proxy!: T` read by a callback before its one assignment cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // The guard's tests and bench leave tenant settings and open transactions on
    // pooled connections on purpose: that is what the guard must catch.
    name: 'pgq-audit/guard-leaks-on-purpose',
    files: ['test/guard/**', 'bench/guard.ts'],
    rules: {
      'pgq/no-session-tenant-setting': 'off',
      'pgq/no-release-in-open-transaction': 'off',
    },
  },
);
