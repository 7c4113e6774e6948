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
  /** The text, kept for code frames in stylish output. */
  source?: string;
}

export function countSeverities(result: FileResult): FileResult {
  result.errorCount = result.messages.filter((m) => m.severity === 2).length;
  result.warningCount = result.messages.filter((m) => m.severity === 1).length;
  return result;
}
