// An INSERT that copies rows of a table: `insert into jobs (payload, attempt)
// select payload, attempt + 1 from jobs where id = $1`, or from a CTE that
// moves them (`with moved as (delete from jobs where id = $1 returning *)
// insert into jobs (...) select ..., attempt + 1 from moved`). Read column by
// column, as an UPDATE's SET list is: a queue that retries a job as a new row
// counts the attempt in the copy (src/model/queue-copies.ts).
import type { AssignedValue, ColumnAssignment, Comparison, RowCopy, Span } from './facts.ts';
import type { Node } from './extract.ts';

export interface CopyReaders {
  /** What an expression assigns to a column (`attempt + 1` to `attempt`: an increment). */
  value(column: string, node: Node | undefined): AssignedValue;
  /** The comparisons of a WHERE. */
  where(node: Node | undefined): Comparison[];
  span(location: number | undefined, length: number): Span;
}

/** The rows an INSERT ... SELECT copies, when it names its columns and selects one value for each from one table. */
export function copyOf(insert: Node, readers: CopyReaders): RowCopy | undefined {
  const select = insert.selectStmt?.SelectStmt;
  const cols: Node[] = insert.cols ?? [];
  const targets: Node[] = select?.targetList ?? [];
  if (!select || select.valuesLists || (select.op && select.op !== 'SETOP_NONE') || cols.length === 0 || cols.length !== targets.length) return undefined;
  const from = select.fromClause?.length === 1 ? select.fromClause[0]?.RangeVar : undefined;
  if (!from) return undefined;
  const where = readers.where(select.whereClause);
  // A CTE of the statement that moves or changes the rows and returns them: the copy is of its table, under its WHERE too.
  let source: Node = from;
  if (!from.schemaname) {
    const name = String(from.relname ?? '').toLowerCase();
    const cte = (insert.withClause?.ctes ?? []).find((c: Node) => String(c.CommonTableExpr?.ctename ?? '').toLowerCase() === name)?.CommonTableExpr;
    if (cte) {
      const query = cte.ctequery ?? {};
      const write = query.DeleteStmt ?? query.UpdateStmt;
      const inner = write ? write.relation : query.SelectStmt?.fromClause?.length === 1 ? query.SelectStmt.fromClause[0]?.RangeVar : undefined;
      if (!inner || (write && !(write.returningClause?.exprs?.length ?? write.returningList?.length))) return undefined;
      source = inner;
      where.push(...readers.where((write ?? query.SelectStmt).whereClause));
    }
  }
  const values: ColumnAssignment[] = cols.map((col, i) => {
    const column = String(col.ResTarget?.name ?? '').toLowerCase();
    const target = targets[i]?.ResTarget;
    return { column, value: readers.value(column, target?.val), span: readers.span(target?.location, column.length) };
  });
  return { from: String(source.relname ?? '').toLowerCase(), ...(source.schemaname && { schema: String(source.schemaname).toLowerCase() }), values, where };
}
