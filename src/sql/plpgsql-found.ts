// FOUND in a PL/pgSQL body: which statements run only on the path where an
// earlier statement took no row. After `UPDATE ... RETURNING` or a
// `FOR r IN <query> LOOP`, `IF FOUND THEN RETURN; ELSE <wait>; END IF`,
// `IF NOT FOUND THEN <wait>`, `EXIT WHEN FOUND; <wait>` put the wait where
// that statement found, so locked, nothing. PostgreSQL's rules for FOUND
// (docs, "Obtaining the Result Status"): SELECT INTO, PERFORM, UPDATE, INSERT,
// DELETE, MERGE, FETCH, MOVE, RETURN QUERY and the FOR loops set it (a FOR
// loop when it ends: true if it ran at least once); EXECUTE and every other
// statement leave it as it is.
//
// Inside a loop that runs the statement again, the path where it found rows
// must leave the loop (RETURN, EXIT of the outermost loop around it, an error
// no handler of the body catches): otherwise a later round of the loop waits
// with the rows an earlier round locked. What this cannot tell stays unknown
// (no statement is said to have taken nothing).
import type { Node } from './extract.ts';

/** Statements that set FOUND, and the fields holding the query whose rows it reports. */
const SETS_FOUND: Record<string, readonly string[]> = {
  PLpgSQL_stmt_execsql: ['sqlstmt'],
  PLpgSQL_stmt_perform: ['expr'],
  PLpgSQL_stmt_fors: ['query'],
  PLpgSQL_stmt_dynfors: ['query'],
  PLpgSQL_stmt_forc: [],
  PLpgSQL_stmt_fori: [],
  PLpgSQL_stmt_foreach_a: [],
  PLpgSQL_stmt_return_query: ['query', 'dynquery'],
  PLpgSQL_stmt_fetch: [],
};

/** Statements that leave FOUND as it was (EXECUTE changes GET DIAGNOSTICS only). */
const KEEPS_FOUND = new Set(['PLpgSQL_stmt_assign', 'PLpgSQL_stmt_getdiag', 'PLpgSQL_stmt_raise', 'PLpgSQL_stmt_dynexecute', 'PLpgSQL_stmt_assert', 'PLpgSQL_stmt_return_next']);

const LOOPS = new Set(['PLpgSQL_stmt_loop', 'PLpgSQL_stmt_while', 'PLpgSQL_stmt_fori', 'PLpgSQL_stmt_fors', 'PLpgSQL_stmt_dynfors', 'PLpgSQL_stmt_forc', 'PLpgSQL_stmt_foreach_a']);

/** elog level of RAISE EXCEPTION (ERROR); a bare RAISE re-raises. */
export const ERROR_LEVEL = 21;

/** The query expressions (PLpgSQL_expr objects) of a statement that sets FOUND. */
type Setter = readonly object[];

interface Context {
  /** Labels of the loops around (undefined for an unlabelled one), outermost first. */
  loops: (string | undefined)[];
  /** Inside a block with an EXCEPTION clause: an error may be caught and the body go on. */
  guarded: boolean;
}

const FALLTHROUGH = null;

/**
 * For each query expression of the body (the PLpgSQL_expr object of the tree),
 * the query expressions of the statements that took no row on every path that
 * reaches it. Expressions with none are left out.
 */
export function tookNothing(functions: Node[]): Map<object, object[]> {
  const out = new Map<object, object[]>();
  const action = functions[0]?.PLpgSQL_function?.action;
  if (action) walk([action], undefined, [], { loops: [], guarded: false }, out);
  return out;
}

/** Walks one list of statements; `found` is the statement FOUND reports on entry, `exempt` what took nothing on every path here. */
function walk(list: Node[] | undefined, found: Setter | undefined, exempt: object[], ctx: Context, out: Map<object, object[]>): void {
  let current = found;
  let took = exempt;
  for (const item of list ?? []) {
    const type = Object.keys(item ?? {})[0];
    const stmt = type ? item[type] : undefined;
    if (!type || !stmt || typeof stmt !== 'object') continue;
    if (type === 'PLpgSQL_stmt_if') {
      const after = ifStatement(stmt, current, took, ctx, out);
      took = after.took;
      current = setsFound(stmt) ? undefined : current;
      continue;
    }
    if (type === 'PLpgSQL_stmt_exit' && stmt.is_exit && current && foundTest(stmt.cond) === 'found') {
      mark(stmt.cond, took, out);
      // EXIT WHEN FOUND: what follows runs only when nothing was found, if the found path leaves every loop that runs the statement again.
      if (exitsOutermost(stmt, ctx)) took = [...took, ...current];
      continue;
    }
    if (type === 'PLpgSQL_stmt_block') {
      for (const field of Object.keys(stmt)) if (field !== 'body' && field !== 'exceptions') mark(stmt[field], took, out);
      walk(stmt.body, current, took, { ...ctx, guarded: ctx.guarded || !!stmt.exceptions }, out);
      for (const handler of stmt.exceptions?.PLpgSQL_exception_block?.exc_list ?? []) walk(handler.PLpgSQL_exception?.action, undefined, took, ctx, out);
      current = setsFound(stmt) ? undefined : current;
      continue;
    }
    if (LOOPS.has(type)) {
      for (const field of Object.keys(stmt)) if (field !== 'body') mark(stmt[field], took, out);
      walk(stmt.body, undefined, took, { ...ctx, loops: [...ctx.loops, stmt.label] }, out);
      current = type in SETS_FOUND ? queriesOf(type, stmt) : setsFound(stmt) ? undefined : current;
      continue;
    }
    // Any other statement: its own expressions, and the lists inside it (CASE) read with FOUND unknown.
    markOwn(stmt, took, ctx, out);
    if (type in SETS_FOUND) current = queriesOf(type, stmt);
    else if (!KEEPS_FOUND.has(type)) current = undefined;
  }
}

/** IF FOUND / IF NOT FOUND after a statement: its branches, and what took nothing after the IF. */
function ifStatement(stmt: Node, current: Setter | undefined, took: object[], ctx: Context, out: Map<object, object[]>): { took: object[] } {
  mark(stmt.cond, took, out);
  const elsifs = ((stmt.elsif_list ?? []) as Node[]).map((e) => e.PLpgSQL_if_elsif ?? {});
  for (const e of elsifs) mark(e.cond, took, out);
  const test = current ? foundTest(stmt.cond) : undefined;
  const others: (Node[] | null)[] = [...elsifs.map((e) => (e.stmts ?? []) as Node[]), stmt.else_body ? (stmt.else_body as Node[]) : FALLTHROUGH];
  if (!test || !current) {
    for (const branch of [stmt.then_body, ...others]) if (branch) walk(branch, current, took, ctx, out);
    return { took };
  }
  const foundBranches = test === 'found' ? [stmt.then_body ?? []] : others;
  const noneBranches = test === 'found' ? others : [stmt.then_body ?? []];
  // Every path where the statement found rows leaves: nothing after them comes back to what runs when it found none.
  const foundLeaves = foundBranches.every((b) => b !== FALLTHROUGH && leaves(b, ctx));
  // Outside any loop the statement ran once: the branch taken when it found nothing is reached only then.
  const noneExempt = foundLeaves || ctx.loops.length === 0 ? [...took, ...current] : took;
  for (const branch of foundBranches) if (branch) walk(branch, current, took, ctx, out);
  for (const branch of noneBranches) if (branch) walk(branch, current, noneExempt, ctx, out);
  return { took: foundLeaves ? [...took, ...current] : took };
}

/** `FOUND` or `NOT FOUND` (in parentheses or not); undefined for any other condition. */
function foundTest(cond: Node | undefined): 'found' | 'not found' | undefined {
  const text = String(cond?.PLpgSQL_expr?.query ?? '')
    .replace(/[()]/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ');
  return text === 'found' ? 'found' : text === 'not found' ? 'not found' : undefined;
}

/** The list always ends by leaving every loop around it: RETURN, an error nothing in the body catches, EXIT of the outermost loop. */
function leaves(list: Node[], ctx: Context): boolean {
  const last = list[list.length - 1];
  const type = last ? Object.keys(last)[0] : undefined;
  const stmt = type ? last[type] : undefined;
  if (!type || !stmt) return false;
  if (type === 'PLpgSQL_stmt_return') return true;
  if (type === 'PLpgSQL_stmt_raise') return !ctx.guarded && (stmt.elog_level === undefined || stmt.elog_level >= ERROR_LEVEL);
  if (type === 'PLpgSQL_stmt_exit') return !!stmt.is_exit && !stmt.cond && exitsOutermost(stmt, ctx);
  if (type === 'PLpgSQL_stmt_if') {
    const branches = [stmt.then_body ?? [], ...((stmt.elsif_list ?? []) as Node[]).map((e) => e.PLpgSQL_if_elsif?.stmts ?? []), stmt.else_body];
    return branches.every((b) => !!b && leaves(b, ctx));
  }
  return false;
}

/** An EXIT that leaves the outermost loop around it (unlabelled in a single loop, or naming the outermost). */
function exitsOutermost(stmt: Node, ctx: Context): boolean {
  if (ctx.loops.length === 0) return false;
  return stmt.label === undefined ? ctx.loops.length === 1 : ctx.loops[0] === stmt.label;
}

/** The statement (or one inside it) sets FOUND. */
function setsFound(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(setsFound);
  for (const [key, child] of Object.entries(value)) {
    if (key in SETS_FOUND || (key.startsWith('PLpgSQL_stmt') && !KEEPS_FOUND.has(key) && !CONTROL.has(key))) return true;
    if (setsFound(child)) return true;
  }
  return false;
}

/** Statements that hold others or move control, and set nothing themselves. */
const CONTROL = new Set(['PLpgSQL_stmt_block', 'PLpgSQL_stmt_if', 'PLpgSQL_stmt_case', 'PLpgSQL_stmt_loop', 'PLpgSQL_stmt_while', 'PLpgSQL_stmt_exit', 'PLpgSQL_stmt_return']);

function queriesOf(type: string, stmt: Node): Setter {
  return (SETS_FOUND[type] ?? []).map((field) => stmt[field]?.PLpgSQL_expr).filter((e): e is object => !!e);
}

/** A statement's expressions, and its nested lists (a CASE's) walked with FOUND unknown. */
function markOwn(stmt: Node, took: object[], ctx: Context, out: Map<object, object[]>): void {
  for (const value of Object.values(stmt)) {
    if (Array.isArray(value) && value.some((v) => v && typeof v === 'object' && Object.keys(v)[0]?.startsWith('PLpgSQL_stmt'))) walk(value, undefined, took, ctx, out);
    else if (Array.isArray(value) && value.some((v) => v?.PLpgSQL_case_when)) {
      for (const when of value) {
        mark(when.PLpgSQL_case_when?.expr, took, out);
        walk(when.PLpgSQL_case_when?.stmts, undefined, took, ctx, out);
      }
    } else mark(value, took, out);
  }
}

/** Records `took` for every query expression under `value`. */
function mark(value: unknown, took: object[], out: Map<object, object[]>): void {
  if (took.length === 0 || !value || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) mark(v, took, out);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key === 'PLpgSQL_expr' && child && typeof child === 'object') out.set(child, took);
    else mark(child, took, out);
  }
}
