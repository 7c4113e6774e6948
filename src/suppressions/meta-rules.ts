// The diagnostics of pgq-audit's own suppression comments. They are not rules
// of rules/ (nothing to configure per language), but they are reported like
// findings, listed by `pgq-audit rules`, and have doc pages.
import type { Severity } from '../model/index.ts';

export interface MetaRule {
  id: string;
  description: string;
  defaultSeverity: Exclude<Severity, 'off'>;
  messages: Record<string, string>;
}

export const DIRECTIVE = 'pgq-audit-ignore-next-line';

export const invalidSuppression: MetaRule = {
  id: 'invalid-suppression',
  description: 'Require a known rule id and a reason in every pgq-audit-ignore-next-line comment, and eslint-disable comments for pgq/ rules that ESLint would honour',
  defaultSeverity: 'error',
  messages: {
    missingReason:
      "This suppression of {{rules}} has no reason, so it suppresses nothing. Say why the finding does not apply after ' -- ': `pgq-audit-ignore-next-line {{rules}} -- <reason>`.",
    noRule: 'This suppression names no rule, so it suppresses nothing. Write `pgq-audit-ignore-next-line <rule-id> -- <reason>`.',
    unknownRule: "Unknown rule '{{rule}}' in this suppression, so it suppresses nothing. Valid rules: {{valid}}.",
    unknownDirective: "Unknown directive '{{directive}}'. The valid directive is {{valid}} <rule-id> -- <reason>.",
    lineComment:
      'ESLint reads {{directive}} only in a block comment, so this line comment suppresses nothing for {{rules}}, in ESLint or here. Write `/* {{directive}} {{rules}} */`, or `// eslint-disable-next-line {{rules}}` above the finding.',
    multiLine: 'An eslint-disable-line comment that spans several lines is ignored by ESLint, so it suppresses nothing here either. Keep it on one line, or put `// eslint-disable-next-line` above the finding.',
  },
};

export const unusedSuppression: MetaRule = {
  id: 'unused-suppression',
  description: 'Disallow pgq-audit-ignore-next-line and eslint-disable comments for pgq/ rules that suppress nothing',
  defaultSeverity: 'warn',
  messages: {
    unused: 'This suppression of pgq/{{rule}} suppresses nothing: no pgq/{{rule}} finding starts on line {{line}}. Remove it, or move it to the line above the finding.',
    unusedLine: 'This eslint-disable-line of pgq/{{rule}} suppresses nothing: no pgq/{{rule}} finding starts on this line. Remove it, or move it to the line of the finding.',
    unusedRange: 'This eslint-disable of pgq/{{rule}} suppresses nothing: no pgq/{{rule}} finding starts after it before an eslint-enable. Remove it.',
    unusedEnable: 'This eslint-enable of pgq/{{rule}} re-enables nothing: no eslint-disable of pgq/{{rule}} is in force above it. Remove it.',
  },
};

export const metaRules: readonly MetaRule[] = [invalidSuppression, unusedSuppression];
