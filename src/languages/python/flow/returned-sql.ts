// SQL a function returns: query-builder methods (`def build_dequeue_query(self) -> str: return f"""..."""`)
// whose text is run by code of another module, or by none this scan reads. A statement that writes or locks
// rows and that no call of this file runs is a site of its own, at the return: on a connection and in a
// transaction the code does not show (unknown), so the rules that read statements alone (the queue's claims,
// finishes, heartbeats and sweeps) see it, and those that need a scope stay quiet.
import type { SqlSite } from '../../../model/index.ts';
import { placeholderStyle } from '../drivers/index.ts';
import { children, type Node } from '../syntax.ts';
import { numberPlaceholders } from './params.ts';
import { analyzeHostText } from './sql-sites.ts';
import { resolveText, type ResolveContext } from './strings.ts';
import type { Driver } from '../../../model/index.ts';

export interface ReturnedSqlFile {
  readonly text: string;
  readonly driverOfFile: Driver;
  readonly sites: readonly SqlSite[];
  /** Offsets of return values a call of the file read as its SQL. */
  readonly consumed: ReadonlySet<number>;
  resolveContext(): ResolveContext;
  /** A def's own binding and return statements (DefIndex.ownStatements). */
  ownStatements(def: Node): readonly Node[];
}

/** The sites of SQL the defs return and no site of the file already holds. */
export function returnedSqlSites(file: ReturnedSqlFile, defs: readonly Node[], nameOf: (def: Node) => string): SqlSite[] {
  const out: SqlSite[] = [];
  const taken = file.sites.map((s) => s.span);
  const ctx = file.resolveContext();
  for (const def of defs) {
    const returns = file.ownStatements(def).filter((node) => node.name === 'ReturnStatement');
    for (const statement of returns) {
      const expr = children(statement).find((c) => c.name !== 'return');
      // A call of the file that runs it holds its statements (strings.ts `returned`).
      if (!expr || file.consumed.has(expr.from)) continue;
      const resolved = resolveText(expr, ctx);
      // Text with no SQL keyword first is not a statement (a message, a name).
      if (!resolved || !/^\s*(\(|--|with|select|update|delete|insert|merge)\b/i.test(resolved.text)) continue;
      const at = resolved.pinned ?? resolved.span;
      if (taken.some((s) => s.start < at.end && at.start < s.end)) continue;
      const { host } = numberPlaceholders(resolved, placeholderStyle(file.driverOfFile, 'execute', resolved));
      const analysis = analyzeHostText(host);
      const statements = analysis.statements.filter((s) => s.rowWrites.length > 0 || s.lockingReads.length > 0);
      if (statements.length === 0) continue;
      out.push({
        span: at,
        analysis: { statements, errors: [] },
        scope: { kind: 'unknown' },
        connection: { kind: 'unknown' },
        driver: file.driverOfFile,
        functionName: nameOf(def),
      });
    }
  }
  return out;
}
