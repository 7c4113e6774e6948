export { analyzeSql, type AnalyzeOptions } from './analyze.ts';
export { loadSqlParser, startLoadingSqlParser } from './parser.ts';
export { splitStatements } from './lexer.ts';
export type * from './facts.ts';
export { transactionEffect } from './facts.ts';
export { transactionEffectOfText } from './control.ts';
export type { Hole, PlaceholderStyle } from './placeholders.ts';
export { intervalOf, type BindParam } from './interval.ts';
