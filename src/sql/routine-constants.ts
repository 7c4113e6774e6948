// A PL/pgSQL variable set once by its declaration and never assigned after
// (`now_ts timestamptz := now();`, `stale interval := interval '15 minutes';`,
// `lease_end timestamptz := now_ts + interval '5 minutes';`) holds the value of
// that expression wherever the body names it. Queue functions take their clock
// and their lengths this way: `where lock_expires_at < now_ts` is a test of an
// expired lease exactly as `< now()` is, and `locked_until = lease_end` gives a
// 5-minute lease. The parser reads such a name as a column; this gives the
// statement the reading PostgreSQL gives it, the declaration's expression in
// place of the name.
//
// Only what stays one value is read so: a variable that an assignment, an
// INTO, a FOR loop or GET DIAGNOSTICS writes may hold anything by the time a
// statement runs, and a default that reads a table (a subquery) or a name that
// is neither a parameter nor another such variable is left as it is.
import type { Node } from './extract.ts';
import { locatedAt, parsedExpression } from './parsed-expression.ts';
import { writtenColumns } from './routine-parameters.ts';

/** The variables of a PL/pgSQL function that keep their declared value, each with the parsed expression. */
export function constantVariables(functions: Node[], parameters: readonly string[]): ReadonlyMap<string, Node> {
  const fn = functions[0]?.PLpgSQL_function;
  const datums = (fn?.datums ?? []) as Node[];
  const written = writtenVariables(functions, datums);
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const datum of datums) {
    const name = String(datum?.PLpgSQL_var?.refname ?? datum?.PLpgSQL_rec?.refname ?? datum?.PLpgSQL_row?.refname ?? '').toLowerCase();
    if (!name) continue;
    if (seen.has(name)) twice.add(name);
    seen.add(name);
  }
  const constants = new Map<string, Node>();
  for (const datum of datums) {
    const variable = datum?.PLpgSQL_var;
    const query = variable?.default_val?.PLpgSQL_expr?.query;
    const name = String(variable?.refname ?? '').toLowerCase();
    // A name declared in two blocks means two variables: which one a statement sees is not read here.
    if (typeof query !== 'string' || !name || written.has(name) || twice.has(name) || parameters.includes(name)) continue;
    const expression = parsedExpression(query);
    if (!expression || !onlyKnownNames(expression, parameters, constants)) continue;
    constants.set(name, withVariables(expression, constants));
  }
  return constants;
}

/** The statement with each unqualified name of a constant variable as the variable's expression; the same tree when none. */
export function constantsInStatement(stmt: Node, constants: ReadonlyMap<string, Node>): Node {
  if (constants.size === 0) return stmt;
  const columns = writtenColumns(stmt);
  const usable = new Map([...constants].filter(([name]) => !columns.has(name)));
  return usable.size === 0 ? stmt : withVariables(stmt, usable);
}

/** An expression of constants, calls, parameters and earlier constant variables: no subquery, no other name. */
function onlyKnownNames(node: Node, parameters: readonly string[], constants: ReadonlyMap<string, Node>): boolean {
  if (!node || typeof node !== 'object') return true;
  if (Array.isArray(node)) return node.every((item) => onlyKnownNames(item, parameters, constants));
  if (node.SubLink) return false;
  if (node.ColumnRef) {
    const name = bareName(node);
    return name !== undefined && (parameters.includes(name) || constants.has(name));
  }
  for (const key in node) if (node[key] && typeof node[key] === 'object' && !onlyKnownNames(node[key], parameters, constants)) return false;
  return true;
}

function bareName(node: Node): string | undefined {
  const fields = node.ColumnRef?.fields as Node[] | undefined;
  const name = fields?.length === 1 ? fields[0]?.String?.sval : undefined;
  return typeof name === 'string' ? name.toLowerCase() : undefined;
}

/** A copy of the tree with each bare name of `constants` replaced by its expression, placed where the name stood. */
function withVariables(node: Node, constants: ReadonlyMap<string, Node>): Node {
  if (!node || typeof node !== 'object') return node;
  if (Array.isArray(node)) {
    let copy: Node[] | undefined;
    node.forEach((item, i) => {
      const next = withVariables(item, constants);
      if (next !== item) (copy ??= [...node])[i] = next;
    });
    return copy ?? node;
  }
  if (node.ColumnRef) {
    const name = bareName(node);
    const expression = name === undefined ? undefined : constants.get(name);
    return expression ? locatedAt(expression, node.ColumnRef.location) : node;
  }
  let copy: Node | undefined;
  for (const key in node) {
    const value = node[key];
    if (!value || typeof value !== 'object') continue;
    const next = withVariables(value, constants);
    if (next !== value) (copy ??= { ...node })[key] = next;
  }
  return copy ?? node;
}

/** Names an assignment, an INTO, a loop or GET DIAGNOSTICS writes, anywhere in the function. */
function writtenVariables(functions: Node[], datums: Node[]): Set<string> {
  const out = new Set<string>();
  const nameOf = (datum: Node | undefined) => String(datum?.PLpgSQL_var?.refname ?? datum?.PLpgSQL_rec?.refname ?? datum?.PLpgSQL_row?.refname ?? '').toLowerCase();
  const addTarget = (target: Node | undefined) => {
    if (typeof target === 'number') return void out.add(nameOf(datums[target]));
    if (!target || typeof target !== 'object') return;
    const name = nameOf(target);
    if (name) out.add(name);
    for (const field of (target.PLpgSQL_row?.fields ?? []) as Node[]) if (typeof field?.name === 'string') out.add(field.name.toLowerCase());
  };
  const visit = (node: Node) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    for (const key in node) {
      const child = node[key];
      if (key === 'PLpgSQL_diag_item') addTarget(child?.target);
      if (key.startsWith('PLpgSQL_stmt') && child && typeof child === 'object') {
        addTarget(child.target);
        addTarget(child.var);
        addTarget(child.varno);
      }
      if (key !== 'datums') visit(child);
    }
  };
  visit(functions);
  out.delete('');
  return out;
}
