// A write in the body of `FOR r IN SELECT ... FROM jobs WHERE ... LOOP` that
// matches by the loop's row (`update jobs set ... where id = r.id`) writes the
// rows the loop's query found, under the IF tests of r's fields that lead to
// it. A reaper written that way,
//
//   for r in select * from jobs where status = 'running' and lease_end < now() for update skip locked loop
//     if r.attempts >= r.max_attempts then update jobs set status = 'dead' where id = r.id;
//     else update jobs set status = 'queued' where id = r.id; end if;
//   end loop;
//
// means `update jobs set status = 'dead' where status = 'running' and
// lease_end < now() and attempts >= max_attempts` (and the re-queue of the
// others under the limit): this gives the write that WHERE, so the model sees
// the dead sweep and the re-queue it is. The added conditions are placed at the
// write's match on the loop's row.
import type { Node } from './extract.ts';
import { locatedAt, parsedExpression, parsedSelect } from './parsed-expression.ts';

/** The loop a statement of a PL/pgSQL body runs in: the loop's row variable, its query, the IF tests on the way in. */
export interface LoopRows {
  record: string;
  query: string;
  tests: { condition: string; holds: boolean }[];
  /** The body hands the loop's row to the caller (`return next r`): a write of that row gives it to whoever called. */
  returnsRow?: boolean;
}

/** For each query expression of the function's statements inside a `FOR r IN <query>` loop: that loop (the innermost). */
export function loopRowsOf(functions: Node[]): Map<object, LoopRows> {
  const out = new Map<object, LoopRows>();
  const visit = (node: Node, loop: LoopRows | undefined) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((item) => visit(item, loop));
    for (const key in node) {
      const child = node[key];
      if (key === 'PLpgSQL_stmt_fors' && child && typeof child === 'object') {
        // A `%ROWTYPE` variable comes as an unnamed row of one field, the variable.
        const fields = (child.var?.PLpgSQL_row?.fields ?? []) as Node[];
        const record = String(child.var?.PLpgSQL_rec?.refname ?? (fields.length === 1 ? fields[0]?.name : '') ?? '').toLowerCase();
        const query = child.query?.PLpgSQL_expr?.query;
        visit(child.query, loop);
        const dno = child.var?.PLpgSQL_rec?.dno ?? (fields.length === 1 ? fields[0]?.varno : undefined);
        const returnsRow = returnsNext(child.body, record, dno) || undefined;
        visit(child.body, record && typeof query === 'string' ? { record, query, tests: [], returnsRow } : undefined);
        continue;
      }
      if (key === 'PLpgSQL_stmt_if' && child && typeof child === 'object' && loop) {
        const condition = String(child.cond?.PLpgSQL_expr?.query ?? '');
        visit(child.then_body, { ...loop, tests: [...loop.tests, { condition, holds: true }] });
        let failed = [...loop.tests, { condition, holds: false }];
        for (const elsif of (child.elsif_list ?? []) as Node[]) {
          const c = String(elsif?.PLpgSQL_if_elsif?.cond?.PLpgSQL_expr?.query ?? '');
          visit(elsif?.PLpgSQL_if_elsif?.stmts, { ...loop, tests: [...failed, { condition: c, holds: true }] });
          failed = [...failed, { condition: c, holds: false }];
        }
        visit(child.else_body, { ...loop, tests: failed });
        continue;
      }
      if (key === 'PLpgSQL_expr' && loop) out.set(child, loop);
      visit(child, loop);
    }
  };
  visit(functions, undefined);
  return out;
}

/** A `return next <the loop's row>` in the body (by the variable's number, or its name as the expression). */
function returnsNext(body: Node, record: string, dno: number | undefined): boolean {
  let found = false;
  const visit = (node: Node) => {
    if (found || !node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    const next = node.PLpgSQL_stmt_return_next;
    if (next) {
      const expr = String(next.expr?.PLpgSQL_expr?.query ?? '').trim().toLowerCase();
      found = (dno !== undefined && next.retvarno === dno) || (record !== '' && expr === record);
      return;
    }
    for (const key in node) visit(node[key]);
  };
  visit(body);
  return found;
}

/**
 * The UPDATE or DELETE with the loop's WHERE and the IF tests of the row's fields added to its own, where it writes the
 * loop query's one table by a column of the loop's row (`where id = r.id`); the same tree otherwise. `prepare` gives a
 * parsed piece the reading the statement gets (the routine's constants).
 */
export function withLoopRows(stmt: Node, loop: LoopRows, prepare: (node: Node) => Node): Node {
  const type = stmt.UpdateStmt ? 'UpdateStmt' : stmt.DeleteStmt ? 'DeleteStmt' : undefined;
  if (!type) return stmt;
  const write = stmt[type];
  const select = parsedSelect(loop.query);
  if (!select) return stmt;
  const from = (select.fromClause ?? []) as Node[];
  const source = from.length === 1 ? from[0]?.RangeVar : undefined;
  if (!source || String(source.relname).toLowerCase() !== String(write.relation?.relname ?? '').toLowerCase()) return stmt;
  const match = rowMatch(write.whereClause, loop.record);
  if (match === undefined) return stmt;
  const added: Node[] = [];
  if (select.whereClause) added.push(prepare(select.whereClause));
  for (const test of loop.tests) {
    const condition = parsedExpression(test.condition);
    // Only a test of the row's own fields says which rows the write takes; a test of anything else is left out.
    const fields = condition ? ofRecordOnly(condition, loop.record) : undefined;
    if (fields) added.push(test.holds ? prepare(fields) : negated(prepare(fields)));
  }
  // The function returns each row it wrote (`update ... where id = r.id; return next r;`): as `returning *` does.
  const returns = loop.returnsRow === true && type === 'UpdateStmt' && !write.returningList;
  if (added.length === 0 && !returns) return stmt;
  const where = added.length === 0 ? write.whereClause : { BoolExpr: { boolop: 'AND_EXPR', args: [write.whereClause, ...added.map((n) => locatedAt(n, match))], location: match } };
  const returning = returns ? { returningList: [{ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }], location: match } }, location: match } }] } : {};
  return { ...stmt, [type]: { ...write, whereClause: where, ...returning } };
}

/** Where the WHERE compares a column with the same field of the loop's row (`id = r.id`, `jobs.id = r.id`): its location. */
function rowMatch(where: Node | undefined, record: string): number | undefined {
  if (!where || typeof where !== 'object') return undefined;
  if (where.BoolExpr?.boolop === 'AND_EXPR') {
    for (const arg of where.BoolExpr.args ?? []) {
      const at = rowMatch(arg, record);
      if (at !== undefined) return at;
    }
    return undefined;
  }
  const expr = where.A_Expr;
  if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '=') return undefined;
  for (const [column, field] of [
    [expr.lexpr, expr.rexpr],
    [expr.rexpr, expr.lexpr],
  ]) {
    const f = names(field);
    const c = names(column);
    if (f?.length === 2 && f[0] === record && c && c[0] !== record && c[c.length - 1] === f[1]) return expr.location;
  }
  return undefined;
}

function names(node: Node | undefined): string[] | undefined {
  const fields = node?.ColumnRef?.fields as Node[] | undefined;
  if (!fields?.every((f) => typeof f?.String?.sval === 'string')) return undefined;
  return fields.map((f) => String(f.String.sval).toLowerCase());
}

/** The condition with `r.x` as the column `x`, when every name in it is a field of the row; undefined otherwise. */
function ofRecordOnly(node: Node, record: string): Node | undefined {
  let ok = true;
  const rewrite = (n: Node): Node => {
    if (!n || typeof n !== 'object') return n;
    if (Array.isArray(n)) return n.map(rewrite);
    if (n.SubLink) ok = false;
    if (n.ColumnRef) {
      const f = names(n);
      if (f?.length !== 2 || f[0] !== record) ok = false;
      return f?.length === 2 ? { ColumnRef: { fields: [{ String: { sval: f[1] } }], location: n.ColumnRef.location } } : n;
    }
    const copy: Node = {};
    for (const key in n) copy[key] = rewrite(n[key]);
    return copy;
  };
  const out = rewrite(node);
  return ok ? out : undefined;
}

const FLIPPED: Record<string, string> = { '<': '>=', '>=': '<', '>': '<=', '<=': '>', '=': '<>', '<>': '=', '!=': '=' };

/** NOT of a condition, pushed in: `a >= b` is `a < b`, `x is not null` is `x is null`, NOT (p AND q) is NOT p OR NOT q. */
function negated(node: Node): Node {
  const bool = node.BoolExpr;
  if (bool?.boolop === 'AND_EXPR' || bool?.boolop === 'OR_EXPR')
    return { BoolExpr: { ...bool, boolop: bool.boolop === 'AND_EXPR' ? 'OR_EXPR' : 'AND_EXPR', args: (bool.args ?? []).map(negated) } };
  if (bool?.boolop === 'NOT_EXPR' && bool.args?.length === 1) return bool.args[0];
  const op = node.A_Expr?.kind === 'AEXPR_OP' ? FLIPPED[String(node.A_Expr.name?.[0]?.String?.sval ?? '')] : undefined;
  if (op) return { A_Expr: { ...node.A_Expr, name: [{ String: { sval: op } }] } };
  if (node.NullTest) return { NullTest: { ...node.NullTest, nulltesttype: node.NullTest.nulltesttype === 'IS_NULL' ? 'IS_NOT_NULL' : 'IS_NULL' } };
  return { BoolExpr: { boolop: 'NOT_EXPR', args: [node] } };
}
