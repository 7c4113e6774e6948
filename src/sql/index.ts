export { analyzeSql, type AnalyzeOptions } from './analyze.ts';
export { loadSqlParser } from './parser.ts';
export { splitStatements } from './lexer.ts';
export type * from './facts.ts';
export type { PlaceholderStyle } from './placeholders.ts';
