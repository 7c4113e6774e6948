export { readDirectives, type FileDirectives, type SuppressionDirective } from './directives.ts';
export { applySuppressions, type SuppressionOptions } from './apply.ts';
export { metaRules, invalidSuppression, unusedSuppression, DIRECTIVE, type MetaRule } from './meta-rules.ts';
