// Each rule of rules/ that reads TypeScript, as an ESLint rule: same id (as
// pgq/<id>), messages, schema and defaults; it runs the rule's check on
// Program:exit against the file's shared model and reports its spans.
import { ESLintUtils, type TSESLint } from '@typescript-eslint/utils';
import { rules as allRules } from '../../rules/index.ts';
import { triggersFor, type Rule } from '../model/index.ts';
import { docsUrl } from '../report/rule-docs.ts';
import { triggerPattern } from '../scan/prefilter.ts';
import { builtFor, takeError, type ModelSettings } from './model.ts';

/** The messageId of the one message a file gets when the front end fails on it. */
export const INTERNAL_ERROR = 'pgqInternalError';

export interface PgqRuleDocs {
  description: string;
  recommended: boolean;
  url?: string;
}

const createRule = ESLintUtils.RuleCreator<PgqRuleDocs>((name) => docsUrl(name));

export type PgqEslintRule = TSESLint.RuleModule<string, [Record<string, unknown>], PgqRuleDocs>;

export function toEslintRule(rule: Rule<any>): PgqEslintRule {
  // The CLI parses a file only when it holds a trigger of some rule; a rule cannot report without its own.
  // ESLint reads TS and JS: the triggers of that language.
  const own = triggersFor(rule.triggers, 'typescript');
  const triggers = own.length > 0 ? triggerPattern(own) : undefined;
  return createRule<[Record<string, unknown>], string>({
    name: rule.id,
    meta: {
      type: 'problem',
      docs: { description: rule.description, recommended: rule.recommended },
      messages: { ...rule.messages, [INTERNAL_ERROR]: 'pgq-audit could not analyse this file, so no pgq rule checked it: {{error}}' },
      ...(rule.hasSuggestions ? { hasSuggestions: true } : {}),
      schema: [rule.schema as never],
      defaultOptions: [rule.defaultOptions],
    },
    create(context, [options]) {
      return {
        'Program:exit'() {
          const { sourceCode } = context;
          if (triggers && !triggers.test(sourceCode.text)) return;
          const settings = (context.settings as { pgq?: ModelSettings }).pgq ?? {};
          const built = builtFor(sourceCode, context.filename, settings);
          const error = takeError(built);
          if (error !== undefined) context.report({ loc: { line: 1, column: 0 }, messageId: INTERNAL_ERROR, data: { error } });
          const file = built.model;
          // One finding per place and message, as the CLI (engine/run-rules.ts): a project function's SQL is
          // recorded once on its own and once more in each transaction a caller hands it (flow/helper-calls.ts).
          const reported = new Set<string>();
          rule.check({
            file,
            options: { ...rule.defaultOptions, ...options },
            report(report) {
              const key = `${report.span.start}:${report.span.end}:${report.messageId}`;
              if (reported.has(key)) return;
              reported.add(key);
              const start = sourceCode.getLocFromIndex(report.span.start);
              const end = sourceCode.getLocFromIndex(Math.max(report.span.end, report.span.start));
              const suggest = report.suggestions?.map((s) => ({
                desc: s.description,
                fix: (fixer: TSESLint.RuleFixer) => fixer.replaceTextRange([s.span.start, s.span.end], s.replacement),
              }));
              context.report({
                loc: { start, end },
                messageId: report.messageId,
                data: report.data,
                ...(suggest && suggest.length > 0 ? { suggest: suggest as never } : {}),
              });
            },
          });
        },
      };
    },
  }) as PgqEslintRule;
}

/** The rules ESLint can run: those of rules/ that read TypeScript. */
export const eslintRules: Record<string, PgqEslintRule> = Object.fromEntries(
  allRules.filter((r) => r.languages.includes('typescript')).map((r) => [r.id, toEslintRule(r)]),
);

export const recommendedRules = allRules.filter((r) => r.languages.includes('typescript') && r.recommended);
