// Table and schema names that stand in holes of SQL text: named after the
// expression that fills them, so statements that interpolate the same name are
// statements on the same table (flow/sites.ts, flow/returned-sql.ts).
import type { SqlAnalysis } from '../../sql/index.ts';
import type { Node } from './syntax.ts';

/**
 * A hole where a table or schema name stands (`UPDATE ${schema}.${table} SET
 * ...`) reads as the analyzer's `pgq_param_N`: name it after the expression
 * instead (`${table}`, `${this_table}`), so the claim and the finish that
 * interpolate the same names are statements on the same table (each hole has
 * a number of its own: the same `${schema}` read as a new schema in every
 * statement). A hole that holds a table the walk read (Drizzle's `pgTable('jobs',
 * ...)`) is that table's name, as its builders name it.
 */
export function nameHoleTables(analysis: SqlAnalysis, holes: ReadonlyMap<number, Node>, source: string, declared: (node: Node) => string | undefined): void {
  if (holes.size === 0) return;
  const rename = (table: string): string => {
    const match = /^(?:(.*)\.)?pgq_param_(\d+)$/.exec(table);
    const node = match ? holes.get(Number(match[2])) : undefined;
    if (!match || !node) return table;
    const name = declared(node) ?? `\${${source.slice(node.range[0], node.range[1]).replace(/\s+/g, '').replace(/\./g, '_')}}`;
    return match[1] ? `${match[1]}.${name}` : name;
  };
  const renameSchema = <S extends string | null | undefined>(schema: S): S => (schema ? (rename(schema) as S) : schema);
  for (const statement of analysis.statements) {
    for (const w of statement.rowWrites) {
      w.table = rename(w.table);
      w.schema = renameSchema(w.schema);
    }
    for (const l of statement.lockingReads) {
      l.tables = l.tables.map(rename);
      if (l.schemas) l.schemas = l.schemas.map(renameSchema);
    }
    for (const p of statement.policies) {
      p.table = rename(p.table);
      p.schema = renameSchema(p.schema);
    }
    for (const r of statement.rowSecurity) {
      r.table = rename(r.table);
      r.schema = renameSchema(r.schema);
    }
  }
}
