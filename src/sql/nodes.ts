// Names read off libpg-query nodes, shared by the statement facts and their comparisons.
import type { Node } from './extract.ts';

export function nodeType(node: Node): string {
  return Object.keys(node)[0] ?? 'Unknown';
}

export function functionName(funcCall: Node): string {
  const parts = (funcCall.funcname ?? []).map((p: Node) => p.String?.sval);
  return String(parts[parts.length - 1] ?? '').toLowerCase();
}

export function relationName(rangeVar: Node | undefined): string {
  return String(rangeVar?.relname ?? '').toLowerCase();
}

/** The schema a relation is qualified with (`billing.jobs`), for spreading into a fact: nothing when unqualified. */
export function schemaOf(rangeVar: Node | undefined): { schema?: string } {
  const schema = rangeVar?.schemaname;
  return schema ? { schema: String(schema).toLowerCase() } : {};
}
