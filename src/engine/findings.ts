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
  /** An internal error (messageId 'internal-error'): the rule that failed. */
  failedRule?: string;
  /** A project-pass finding that replaces the per-file finding of its rule at its place (ProjectReport.rewords). */
  rewords?: boolean;
}

/**
 * What a result is about when it is not a file: an object of a live database
 * (`pgq-audit db`). Its filePath is then a `db:` pseudo-path, and lines and
 * columns are positions in the object's definition text (`source`).
 */
export interface DatabaseObject {
  /** function, procedure, policy, table, role, database. */
  kind: string;
  /** How reports name it: `function public.enter_tenant(integer)`, `policy tenant_isolation on public.jobs`. */
  display: string;
  /** Its own name: `enter_tenant(integer)`, `tenant_isolation`, `app_worker`. */
  name: string;
  /** The name without the kind: `public.enter_tenant(integer)`, `public.jobs.tenant_isolation`. */
  fullyQualifiedName: string;
  /** A repository-relative stand-in path for formats that need one (SARIF's physicalLocation). */
  artifactPath: string;
}

export interface FileResult {
  filePath: string;
  /** Set when the result is about a database object rather than a file. */
  object?: DatabaseObject;
  messages: Finding[];
  errorCount: number;
  warningCount: number;
  /** The text, where the scan read it; reports that show it read it otherwise (src/report/source.ts). */
  source?: string;
}

export function countSeverities(result: FileResult): FileResult {
  result.errorCount = result.messages.filter((m) => m.severity === 2).length;
  result.warningCount = result.messages.filter((m) => m.severity === 1).length;
  return result;
}

/**
 * A bug of pgq-audit's own, caught where it happened: one rule on one file,
 * or one cross-file rule on one project unit. It costs that rule's findings
 * there and nothing else, and the message says so.
 */
export function internalError(ruleId: string, where: string, error: unknown): Finding {
  return {
    ruleId: null,
    severity: 2,
    message: `Internal error: rule '${ruleId}' failed ${where} (${describeError(error)}), so its findings there are missing; every other rule was run. Please report this bug of pgq-audit.`,
    messageId: 'internal-error',
    failedRule: ruleId,
    span: { start: 0, end: 0 },
    line: 1,
    column: 1,
    endLine: 1,
    endColumn: 1,
  };
}

/** The error and the first frame of its stack: enough to find the bug, short enough for one report line. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const frame = error.stack?.split('\n').find((line) => line.trimStart().startsWith('at '));
  return frame ? `${error.name}: ${error.message}, ${frame.trim()}` : `${error.name}: ${error.message}`;
}
