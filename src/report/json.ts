// ESLint's JSON formatter shape. Other tools read it: keep it stable.
import type { FileResult } from '../engine/findings.ts';

export function formatJson(results: readonly FileResult[]): string {
  return JSON.stringify(
    results.map((result) => ({
      filePath: result.filePath,
      messages: result.messages.map((m) => ({
        ruleId: m.ruleId === null ? null : `pgq/${m.ruleId}`,
        severity: m.severity,
        message: m.message,
        line: m.line,
        column: m.column,
        endLine: m.endLine,
        endColumn: m.endColumn,
        ...(m.fatal ? { fatal: true } : {}),
        ...(m.messageId ? { messageId: m.messageId } : {}),
      })),
      errorCount: result.errorCount,
      warningCount: result.warningCount,
      fatalErrorCount: result.messages.filter((m) => m.fatal).length,
      fixableErrorCount: 0,
      fixableWarningCount: 0,
    })),
  );
}
