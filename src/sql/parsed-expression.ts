// A PL/pgSQL expression as PostgreSQL runs it (`SELECT <expression>`), parsed into the same nodes as a statement's,
// and a copy of such nodes placed where a statement names them: the routine readings (routine-constants.ts,
// plpgsql-loops.ts) put a declaration's value or a loop's condition into a statement they then read.
import type { Node } from './extract.ts';
import { parseStatements } from './parser.ts';

/** The one SELECT of `query`, or undefined. */
export function parsedSelect(query: string): Node | undefined {
  const result = parseStatements(query);
  return result.ok && result.statements.length === 1 ? result.statements[0].stmt?.SelectStmt : undefined;
}

/** The expression `text` is, when it is one: a single target that reads no table (no FROM, no WHERE). */
export function parsedExpression(text: string): Node | undefined {
  const select = parsedSelect(`SELECT ${text}`);
  const targets = select?.targetList as Node[] | undefined;
  if (!select || targets?.length !== 1 || select.fromClause || select.whereClause) return undefined;
  return targets[0]?.ResTarget?.val;
}

/** A copy of the nodes with every location at `location`: what they report stays inside the statement they are put in. */
export function locatedAt(node: Node, location: number | undefined): Node {
  if (!node || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => locatedAt(item, location));
  const copy: Node = {};
  for (const key in node) copy[key] = key === 'location' ? location : locatedAt(node[key], location);
  return copy;
}
