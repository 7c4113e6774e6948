import type { Span, Suggestion } from '../model/index.ts';

/** One message about one file, in ESLint's shape (ruleId is the bare rule id here; reporters add `pgq/`). */
export interface Finding {
  ruleId: string | null;
  severity: 1 | 2;
  message: string;
  messageId?: string;
  span: Span;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  fatal?: boolean;
  suggestions?: Suggestion[];
}

export interface FileResult {
  filePath: string;
  messages: Finding[];
  errorCount: number;
  warningCount: number;
  /** The text, kept for code frames in stylish output. */
  source?: string;
}

export function countSeverities(result: FileResult): FileResult {
  result.errorCount = result.messages.filter((m) => m.severity === 2).length;
  result.warningCount = result.messages.filter((m) => m.severity === 1).length;
  return result;
}
