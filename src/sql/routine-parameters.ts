// A routine's input parameters, named in its body, are values its caller
// gives, exactly as `$1` is: `where id = p_job_id and locked_by = p_worker`
// matches one job by the caller's id and token, `locked_at < now() -
// _timeout` compares with a cutoff the caller chooses. The parser reads such a
// name as a column, so a finish by id in a PL/pgSQL function looked like a
// join of two columns and a sweep's cutoff like a column of the row. This
// gives the statement facts the reading PostgreSQL gives: the name is the
// parameter's placeholder `$N`.
//
// PL/pgSQL resolves an unqualified name to its variable (a name that is also a
// column of the statement is an error by default, `variable_conflict =
// error`); a SQL-language body resolves it to the column first. So a name the
// statement also writes as a column (`set status = ...`, `insert into jobs
// (status, ...)`) stays a column, and so does a qualified name (`jobs.id`),
// unless it is qualified by the routine's own name (`claim_job.p_id`).
import { columnOf } from './comparisons.ts';
import type { Node } from './extract.ts';

/** The statement with each reference to an input parameter as its placeholder; the same tree when there is none. */
export function parametersAsPlaceholders(stmt: Node, parameters: readonly string[], routineName: string): Node {
  if (!parameters.some(Boolean)) return stmt;
  // The parser hands out a remembered tree for a text met before (parser.ts): the same statement of the same
  // routine, defined again by each update script of an extension, is rewritten once.
  const key = `${routineName}\0${parameters.join('\0')}`;
  let rewritten = rewrittenTrees.get(stmt);
  if (!rewritten) rewrittenTrees.set(stmt, (rewritten = new Map()));
  let tree = rewritten.get(key);
  if (tree === undefined) rewritten.set(key, (tree = rewriteParameters(stmt, parameters, routineName)));
  return tree;
}

/** Each parsed statement's rewrites, by routine name and parameters. */
const rewrittenTrees = new WeakMap<Node, Map<string, Node>>();

function rewriteParameters(stmt: Node, parameters: readonly string[], routineName: string): Node {
  const columns = writtenColumns(stmt);
  const numbers = new Map<string, number>();
  for (const [i, name] of parameters.entries()) if (name && !columns.has(name) && !numbers.has(name)) numbers.set(name, i + 1);
  if (numbers.size === 0) return stmt;
  const bare = routineName.split('.').pop()?.toLowerCase() ?? '';
  const numberOf = (node: Node): number | undefined => {
    const fields: Node[] | undefined = node.ColumnRef?.fields;
    if (!fields || fields.length > 2 || !fields.every((f) => typeof f?.String?.sval === 'string')) return undefined;
    if (fields.length === 2 && String(fields[0].String.sval).toLowerCase() !== bare) return undefined;
    return numbers.get(String(fields[fields.length - 1].String.sval).toLowerCase());
  };
  const rewrite = (node: Node): Node => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) {
      let copy: Node[] | undefined;
      node.forEach((item, i) => {
        const next = rewrite(item);
        if (next !== item) (copy ??= [...node])[i] = next;
      });
      return copy ?? node;
    }
    if (node.ColumnRef) {
      const number = numberOf(node);
      return number === undefined ? node : { ParamRef: { number, location: node.ColumnRef.location } };
    }
    let copy: Node | undefined;
    for (const key in node) {
      const value = node[key];
      if (!value || typeof value !== 'object') continue;
      const next = rewrite(value);
      if (next !== value) (copy ??= { ...node })[key] = next;
    }
    return copy ?? node;
  };
  return rewrite(stmt);
}

/**
 * The names a statement surely uses as columns: SET, INSERT and ON CONFLICT column lists, and a name compared with
 * itself (`attempts = attempts`: one side at least is the column), anywhere in it (CTEs included).
 */
export function writtenColumns(node: Node, out = new Set<string>()): Set<string> {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) writtenColumns(item, out);
    return out;
  }
  // Tested field by field: this runs on every node of a routine's statements.
  if (node.UpdateStmt) addTargetNames(node.UpdateStmt.targetList, out);
  if (node.InsertStmt) addTargetNames(node.InsertStmt.cols, out);
  if (node.OnConflictClause) addTargetNames(node.OnConflictClause.targetList, out);
  if (node.A_Expr) {
    const left = bareName(node.A_Expr.lexpr);
    if (left !== undefined && left === bareName(node.A_Expr.rexpr)) out.add(left);
  }
  for (const key in node) if (node[key] && typeof node[key] === 'object') writtenColumns(node[key], out);
  return out;
}

function addTargetNames(list: Node[] | undefined, out: Set<string>): void {
  for (const target of list ?? []) {
    const name = target?.ResTarget?.name;
    if (typeof name === 'string') out.add(name.toLowerCase());
  }
}

/** An unqualified column name (`attempts`, not `jobs.attempts`). */
function bareName(node: Node | undefined): string | undefined {
  return node?.ColumnRef?.fields?.length === 1 ? columnOf(node) : undefined;
}
