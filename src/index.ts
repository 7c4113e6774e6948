// Programmatic API.
export { scan, type ScanOptions, type ScanResult } from './scan/scan.ts';
export { analyzeSql, loadSqlParser } from './sql/index.ts';
export { lintDatabase, type LintDatabaseOptions, type LintDatabaseResult } from './db/index.ts';
export { rules } from '../rules/index.ts';
export type { FileResult, Finding } from './engine/findings.ts';
export type * from './model/index.ts';
