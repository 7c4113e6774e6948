// Values an UPDATE takes from its FROM list: `set available_at = next.visible_at
// from next` where `next` is a CTE of the statement (or a subquery in FROM)
// whose `visible_at` is `now() + interval '30 seconds'`. The assignment means
// the CTE's expression, followed through CTEs that read other CTEs, so a claim
// written as a chain of CTEs is read as the same claim written inline.
import type { Node } from './extract.ts';

/** How many CTEs deep a value is followed. */
const MAX_DEPTH = 4;

type Sources = Map<string, Node>;

/** The CTEs of a WITH clause, by name: their SELECTs; with `outer`, those of the statement a write is a CTE of. */
export function ctesOf(withClause: Node | undefined, outer?: ReadonlyMap<string, Node>): Map<string, Node> {
  const ctes = new Map<string, Node>(outer);
  for (const item of withClause?.ctes ?? []) {
    const cte = item.CommonTableExpr;
    const select = cte?.ctequery?.SelectStmt;
    if (cte?.ctename && select) ctes.set(String(cte.ctename).toLowerCase(), select);
  }
  return ctes;
}

/** The FROM items that are a CTE or a subquery, by the name the query refers to them with. */
function sourcesOf(fromClause: Node[] | undefined, ctes: ReadonlyMap<string, Node>): Sources {
  const sources: Sources = new Map();
  const collect = (item: Node | undefined) => {
    if (item?.RangeVar && !item.RangeVar.schemaname) {
      const select = ctes.get(String(item.RangeVar.relname ?? '').toLowerCase());
      const name = item.RangeVar.alias?.aliasname ?? item.RangeVar.relname;
      if (select && name) sources.set(String(name).toLowerCase(), select);
    } else if (item?.RangeSubselect?.subquery?.SelectStmt && item.RangeSubselect.alias?.aliasname) {
      sources.set(String(item.RangeSubselect.alias.aliasname).toLowerCase(), item.RangeSubselect.subquery.SelectStmt);
    } else if (item?.JoinExpr) {
      collect(item.JoinExpr.larg);
      collect(item.JoinExpr.rarg);
    }
  };
  for (const item of fromClause ?? []) collect(item);
  return sources;
}

/** The expression a SELECT gives its output column `column` (`x + 1 as column`, or `t.column`). */
function outputOf(select: Node, column: string): Node | undefined {
  for (const target of select.targetList ?? []) {
    const res = target.ResTarget;
    if (!res?.val) continue;
    if (res.name !== undefined) {
      if (String(res.name).toLowerCase() === column) return res.val;
      continue;
    }
    const fields = res.val.ColumnRef?.fields;
    if (fields?.[fields.length - 1]?.String?.sval?.toLowerCase() === column) return res.val;
  }
  // `select *` (or `select t.*`) passes every column of its FROM through: the column of that name.
  const star = (select.targetList ?? []).some((t: Node) => t.ResTarget?.val?.ColumnRef?.fields?.some((f: Node) => f.A_Star));
  return star ? { ColumnRef: { fields: [{ String: { sval: column } }] } } : undefined;
}

/** A column reference qualified by a FROM item's name: `next.visible_at`. */
function qualifiedRef(node: Node | undefined): { source: string; column: string } | undefined {
  const fields = node?.ColumnRef?.fields;
  if (fields?.length !== 2) return undefined;
  const [source, column] = fields.map((f: Node) => f.String?.sval);
  return typeof source === 'string' && typeof column === 'string' ? { source: source.toLowerCase(), column: column.toLowerCase() } : undefined;
}

/**
 * Resolves the values of an UPDATE's SET list through its FROM list: a value that is a column of
 * a CTE or subquery of FROM is that column's expression (followed while it is one again).
 */
export function fromListResolver(update: Node, outer?: ReadonlyMap<string, Node>): (value: Node | undefined) => Node | undefined {
  const ctes = ctesOf(update.withClause, outer);
  if (ctes.size === 0 && !(update.fromClause ?? []).some((item: Node) => item.RangeSubselect || item.JoinExpr)) return (value) => value;
  const top = sourcesOf(update.fromClause, ctes);
  return (value) => {
    let node = value;
    let sources = top;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const ref = qualifiedRef(node);
      const select = ref && sources.get(ref.source);
      const output = select && outputOf(select, ref.column);
      if (!output) break;
      node = output;
      sources = sourcesOf(select.fromClause, ctes);
    }
    return node;
  };
}

/** The name parts of a column reference, lower-cased (`jobs.id`: ['jobs', 'id']). */
function refParts(node: Node | undefined): string[] | undefined {
  const fields = node?.ColumnRef?.fields as Node[] | undefined;
  return fields?.map((f) => String(f.String?.sval ?? '*').toLowerCase());
}

/** The AND-ed parts of a condition. */
function conjuncts(node: Node | undefined): Node[] {
  if (!node) return [];
  if (node.BoolExpr?.boolop === 'AND_EXPR') return (node.BoolExpr.args ?? []).flatMap(conjuncts);
  return [node];
}

/** The column references of an expression, not looking into subqueries: their name parts, lower-cased. */
function columnRefs(node: Node | undefined, out: string[][] = []): string[][] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) columnRefs(item, out);
    return out;
  }
  if (node.SubLink) return out;
  const parts = refParts(node);
  if (parts) {
    out.push(parts);
    return out;
  }
  for (const key in node) if (node[key] && typeof node[key] === 'object') columnRefs(node[key], out);
  return out;
}

/** A copy of `node` whose references to the output columns of `sources` are those columns' expressions. */
function substituted(node: Node, sources: Sources, ctes: ReadonlyMap<string, Node>, depth: number): Node {
  if (!node || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => substituted(item, sources, ctes, depth));
  if (node.SubLink) return node;
  const ref = qualifiedRef(node);
  if (ref) {
    const select = sources.get(ref.source);
    const output = select && depth < MAX_DEPTH ? outputOf(select, ref.column) : undefined;
    return select && output ? substituted(output, sourcesOf(select.fromClause, ctes), ctes, depth + 1) : node;
  }
  const copy: Node = {};
  for (const key in node) copy[key] = node[key] && typeof node[key] === 'object' ? substituted(node[key], sources, ctes, depth) : node[key];
  return copy;
}

/**
 * The conditions a SELECT puts on the rows of `table` it reads (its WHERE and inner-join ON conjuncts that
 * compare the table's columns with values, with the values of its CTEs and subqueries resolved), when it
 * reads them directly or through its one FROM item, a CTE that does; undefined when it does not read them.
 */
function conditionsOn(select: Node, table: string, ctes: ReadonlyMap<string, Node>, depth: number): Node[] | undefined {
  const candidates = conjuncts(select.whereClause);
  let found: { name: string; through: Node[] } | undefined;
  let joined = false;
  const visit = (item: Node | undefined, inner: boolean) => {
    if (found || !item) return;
    if (item.RangeVar) {
      const rel = String(item.RangeVar.relname ?? '').toLowerCase();
      const name = String(item.RangeVar.alias?.aliasname ?? rel).toLowerCase();
      const cte = item.RangeVar.schemaname ? undefined : ctes.get(rel);
      if (!cte && rel === table) found = { name, through: [] };
      else if (cte && !joined && depth < MAX_DEPTH) {
        const through = conditionsOn(cte, table, ctes, depth + 1);
        if (through) found = { name, through };
      }
    } else if (item.JoinExpr) {
      joined = true;
      const join = item.JoinExpr;
      const innerJoin = inner && (join.jointype === undefined || join.jointype === 'JOIN_INNER');
      if (innerJoin) candidates.push(...conjuncts(join.quals));
      visit(join.larg, innerJoin || (inner && join.jointype === 'JOIN_LEFT'));
      visit(join.rarg, innerJoin || (inner && join.jointype === 'JOIN_RIGHT'));
    }
  };
  const from = select.fromClause ?? [];
  if (from.length !== 1) joined = true;
  for (const item of from) visit(item, true);
  if (!found) return undefined;
  const { name, through } = found;
  const sources = sourcesOf(from, ctes);
  // A conjunct is about the table's rows when it names its columns, and every other column it names is a value a CTE or subquery gives.
  const ofTable = (parts: string[]) => (parts.length === 1 ? !joined : parts[parts.length - 2] === name);
  // Also a column of the table compared with a value computed from other rows' columns (`started_at < now() - f.timeout *
  // interval '1 second'`): not a join, a per-row length.
  const valueOfOthers = (c: Node) => {
    const expr = c.A_Expr;
    if (expr?.kind !== 'AEXPR_OP') return false;
    const own = [expr.lexpr, expr.rexpr].find((side) => refParts(side) && ofTable(refParts(side)!));
    const other = own === expr.lexpr ? expr.rexpr : expr.lexpr;
    return own !== undefined && !other?.ColumnRef && !other?.SubLink && columnRefs(other).every((parts) => !ofTable(parts));
  };
  const kept = candidates.filter((c) => {
    const refs = columnRefs(c);
    return (refs.some(ofTable) && refs.every((parts) => ofTable(parts) || (parts.length === 2 && parts[0] !== name && sources.has(parts[0])))) || valueOfOthers(c);
  });
  return [...through, ...kept.map((c) => substituted(c, sources, ctes, depth))];
}

/**
 * The conditions a write on `table` takes from the CTEs and subqueries of its FROM (UPDATE) or USING
 * (DELETE) list that it matches by a column of the table (`where jobs.id = picked.id`), where they read
 * the same table: `picked` selecting `from jobs where token = $3` makes the write's rows those with that token.
 */
export function joinedConditions(write: Node, from: Node[] | undefined, outer?: ReadonlyMap<string, Node>): Node[] {
  const ctes = ctesOf(write.withClause, outer);
  const sources = sourcesOf(from, ctes);
  if (sources.size === 0) return [];
  const table = String(write.relation?.relname ?? '').toLowerCase();
  const self = String(write.relation?.alias?.aliasname ?? table).toLowerCase();
  const out: Node[] = [];
  const used = new Set<string>();
  for (const c of conjuncts(write.whereClause)) {
    const expr = c.A_Expr;
    if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '=') continue;
    const left = refParts(expr.lexpr);
    const right = refParts(expr.rexpr);
    if (!left || !right) continue;
    for (const [mine, theirs] of [
      [left, right],
      [right, left],
    ]) {
      const column = mine[mine.length - 1];
      const isMine = mine.length === 1 || mine[mine.length - 2] === self;
      if (!isMine || theirs.length !== 2 || theirs[1] !== column || used.has(theirs[0])) continue;
      const select = sources.get(theirs[0]);
      // The source's column is the table's own column of that name.
      if (!select || !outputOf(select, column)?.ColumnRef) continue;
      const conditions = conditionsOn(select, table, ctes, 0);
      if (!conditions) continue;
      used.add(theirs[0]);
      out.push(...conditions);
    }
  }
  return out;
}

/**
 * The rows of another table a write matches its own column against through a CTE or subquery of its FROM
 * (UPDATE) or USING (DELETE) list: `with stale as (delete from workers where beat < now() - interval '15
 * minutes' returning id) update jobs set status = 'ready' from stale s where jobs.worker_id = s.id`. Each
 * is given as `worker_id in (select ... from workers where beat < ...)`, the shape the reading of a
 * write's WHERE knows (a SubLink built of the statement's own nodes, so every span stays the user's).
 */
export function joinedOtherRows(write: Node, from: Node[] | undefined): Node[] {
  const table = String(write.relation?.relname ?? '').toLowerCase();
  const self = String(write.relation?.alias?.aliasname ?? table).toLowerCase();
  // Each source's one table and the condition on its rows: a CTE that selects from, deletes from or updates one table, or a subquery that selects from one.
  const rowsOf = (query: Node | undefined): { relation: Node; where: Node | undefined } | undefined => {
    const dml = query?.DeleteStmt ?? query?.UpdateStmt;
    if (dml?.relation) return { relation: dml.relation, where: dml.whereClause };
    const select = query?.SelectStmt;
    const only = select?.fromClause?.length === 1 ? select.fromClause[0].RangeVar : undefined;
    return only ? { relation: only, where: select.whereClause } : undefined;
  };
  const ctes = new Map<string, Node>();
  for (const item of write.withClause?.ctes ?? []) if (item.CommonTableExpr?.ctename) ctes.set(String(item.CommonTableExpr.ctename).toLowerCase(), item.CommonTableExpr.ctequery);
  const sources = new Map<string, { relation: Node; where: Node | undefined }>();
  for (const item of from ?? []) {
    const ref = item.RangeVar && !item.RangeVar.schemaname ? item.RangeVar : undefined;
    const rows = ref ? rowsOf(ctes.get(String(ref.relname ?? '').toLowerCase())) : rowsOf(item.RangeSubselect?.subquery);
    const name = ref ? (ref.alias?.aliasname ?? ref.relname) : item.RangeSubselect?.alias?.aliasname;
    if (rows?.where && name && String(rows.relation.relname ?? '').toLowerCase() !== table) sources.set(String(name).toLowerCase(), rows);
  }
  if (sources.size === 0) return [];
  const out: Node[] = [];
  for (const c of conjuncts(write.whereClause)) {
    const expr = c.A_Expr;
    if (expr?.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '=') continue;
    for (const [mine, theirs] of [
      [expr.lexpr, expr.rexpr],
      [expr.rexpr, expr.lexpr],
    ]) {
      const own = refParts(mine);
      const other = refParts(theirs);
      if (!own || !other || other.length !== 2 || (own.length !== 1 && own[own.length - 2] !== self)) continue;
      const rows = sources.get(other[0]);
      if (!rows) continue;
      const subselect = { SelectStmt: { fromClause: [{ RangeVar: rows.relation }], whereClause: rows.where } };
      out.push({ SubLink: { subLinkType: 'ANY_SUBLINK', testexpr: mine, subselect, location: expr.location } });
      break;
    }
  }
  return out;
}

/** A value the caller gives: placeholders (and constants), no column of any row. */
function fromCaller(node: Node | undefined): boolean {
  return node !== undefined && columnRefs(node).length === 0 && JSON.stringify(node).includes('"ParamRef"');
}

/**
 * The columns of the caller's own rows a write joins, by `alias.column`: `from unnest($1::uuid[], $2::text[]) as
 * r(id, worker)` (each argument of unnest one column), `rows from (unnest($1), unnest($2)) as r(id, worker)`, a
 * function of placeholders only (`jsonb_to_recordset($1) as r(id uuid, worker text)`: every column is its value), and
 * `(values ($1, $2), ...) as r(id, worker)`. Each column stands for the values the caller passed.
 */
function callerColumns(from: Node[] | undefined): Map<string, Node> {
  const columns = new Map<string, Node>();
  const name = (n: Node) => String(n.String?.sval ?? n.ColumnDef?.colname ?? '').toLowerCase();
  for (const item of from ?? []) {
    const range = item.RangeFunction;
    const values = item.RangeSubselect?.subquery?.SelectStmt?.valuesLists as Node[] | undefined;
    const alias = range?.alias ?? item.RangeSubselect?.alias;
    if (!alias?.aliasname) continue;
    const names: string[] = [...(alias.colnames ?? []), ...(range?.coldeflist ?? [])].map(name);
    const given: (Node | undefined)[] = [];
    if (range) {
      for (const entry of range.functions ?? []) {
        const call = entry.List?.items?.[0]?.FuncCall;
        const args: Node[] = call?.args ?? [];
        if (call?.funcname?.at(-1)?.String?.sval === 'unnest') given.push(...args.map((a) => (fromCaller(a) ? a : undefined)));
        else if (call && args.every(fromCaller) && args.length > 0) given.push(...names.map(() => ({ FuncCall: call })));
        else given.push(undefined);
      }
    } else if (values?.length) {
      const rows = values.map((row) => (row.List?.items ?? []) as Node[]);
      rows[0].forEach((cell, i) => given.push(rows.every((row) => fromCaller(row[i])) ? cell : undefined));
    }
    names.forEach((column, i) => {
      const value = given[i];
      if (column && value) columns.set(`${String(alias.aliasname).toLowerCase()}.${column}`, value);
    });
  }
  return columns;
}

/**
 * A write's WHERE with each reference to a column of the caller's rows (see callerColumns) replaced by the value it
 * stands for: `jobs.locked_by = r.worker` reads as `locked_by = $2`, the worker's own value, and `jobs.id = r.id` as the
 * ids the caller holds. Subqueries keep their own references.
 */
export function withCallerRows(where: Node | undefined, from: Node[] | undefined): Node | undefined {
  const columns = callerColumns(from);
  if (columns.size === 0 || !where) return where;
  const replace = (node: Node): Node => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map(replace);
    if (node.SubLink) return node;
    const ref = qualifiedRef(node);
    if (ref) return columns.get(`${ref.source}.${ref.column}`) ?? node;
    const copy: Node = {};
    for (const key in node) copy[key] = node[key] && typeof node[key] === 'object' ? replace(node[key]) : node[key];
    return copy;
  };
  return replace(where);
}
