// Casts of current_setting() that cannot see '': under a CASE whose condition
// tests the setting against '' first, and the column DEFAULTs that read a
// setting (what an insert does with them depends on the column, not the cast).
import type { SettingDefault, Span } from './facts.ts';
import type { Node } from './extract.ts';
import { constValue } from './values.ts';

/** Casts to these keep '' as it is: they cannot fail on it. */
export const TEXT_TYPES = new Set(['text', 'varchar', 'bpchar', 'name', 'unknown', 'regclass']);

function each(node: unknown, visit: (node: Node, type: string) => boolean | void): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) each(item, visit);
    return;
  }
  const keys = Object.keys(node);
  if (keys.length === 1 && /^[A-Z]/.test(keys[0])) {
    const inner = (node as Node)[keys[0]];
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
      if (visit(inner, keys[0]) === false) return;
      for (const key in inner) each(inner[key], visit);
      return;
    }
  }
  for (const key in node as Node) each((node as Node)[key], visit);
}

function settingName(funcCall: Node): string | undefined {
  const value = constValue(funcCall.args?.[0]);
  return typeof value === 'string' ? value.toLowerCase() : undefined;
}

function isCurrentSetting(node: Node | undefined): boolean {
  const parts = node?.FuncCall?.funcname as Node[] | undefined;
  return String(parts?.[parts.length - 1]?.String?.sval ?? '').toLowerCase() === 'current_setting';
}

/** The settings a condition tests for '' (`s = ''`, `s <> ''`, `length(s) > 0`, `coalesce(s, '') = ''`, `nullif(s, '') is null`, `s ~ '...'`). */
function settingsTestedForEmpty(condition: Node | undefined, caseArg?: Node): Set<string> {
  const tested = new Set<string>();
  const readsIn = (node: unknown): string[] => {
    const names: string[] = [];
    each(node, (inner, type) => {
      if (type === 'FuncCall' && isCurrentSetting({ FuncCall: inner })) {
        const name = settingName(inner);
        if (name) names.push(name);
      }
    });
    return names;
  };
  const hasEmptyString = (node: unknown): boolean => {
    let found = false;
    each(node, (inner, type) => {
      if (type === 'A_Const' && inner.sval && (inner.sval.sval ?? '') === '') found = true;
    });
    return found;
  };
  // CASE current_setting('x', true) WHEN '' THEN ...
  if (caseArg && hasEmptyString(condition)) for (const name of readsIn(caseArg)) tested.add(name);
  each(condition, (inner, type) => {
    if (type === 'A_Expr') {
      const op = String(inner.name?.[0]?.String?.sval ?? '');
      const comparesEmpty = ['=', '<>', '!=', '>', '<'].includes(op) && (hasEmptyString(inner.lexpr) || hasEmptyString(inner.rexpr));
      const matches = ['~', '~*', '!~', '!~*'].includes(op) || inner.kind === 'AEXPR_SIMILAR' || inner.kind === 'AEXPR_LIKE';
      if (comparesEmpty || matches) for (const name of readsIn(inner)) tested.add(name);
    } else if (type === 'FuncCall') {
      const parts = (inner.funcname ?? []) as Node[];
      const fn = String(parts[parts.length - 1]?.String?.sval ?? '').toLowerCase();
      if (['length', 'char_length', 'octet_length', 'character_length'].includes(fn)) for (const name of readsIn(inner)) tested.add(name);
    } else if (type === 'NullTest' && inner.arg?.A_Expr?.kind === 'AEXPR_NULLIF') {
      for (const name of readsIn(inner.arg)) tested.add(name);
    }
  });
  return tested;
}

/**
 * TypeCast nodes (the inner objects) of current_setting(s) that sit in a
 * branch of a CASE whose earlier condition tested s against ''.
 */
export function caseGuardedCasts(root: Node): WeakSet<Node> {
  const guarded = new WeakSet<Node>();
  each(root, (node, type) => {
    if (type !== 'CaseExpr') return;
    const tested = new Set<string>();
    const mark = (branch: unknown) => {
      each(branch, (inner, innerType) => {
        if (innerType !== 'TypeCast') return;
        let arg = inner.arg as Node | undefined;
        while (arg?.TypeCast) arg = arg.TypeCast.arg;
        if (isCurrentSetting(arg) && tested.has(settingName(arg!.FuncCall) ?? '')) guarded.add(inner);
      });
    };
    for (const when of (node.args ?? []) as Node[]) {
      const caseWhen = when.CaseWhen;
      if (!caseWhen) continue;
      for (const name of settingsTestedForEmpty(caseWhen.expr, node.arg)) tested.add(name);
      mark(caseWhen.result);
    }
    mark(node.defresult);
  });
  return guarded;
}

/** The DEFAULT expressions of a CREATE TABLE or ALTER TABLE, with their column and whether it is NOT NULL. */
export function columnDefaults(kind: string, body: Node): { table: string; column: string; notNull: boolean | 'unknown'; expr: Node; location: number | undefined }[] {
  const out: { table: string; column: string; notNull: boolean | 'unknown'; expr: Node; location: number | undefined }[] = [];
  const table = String(body.relation?.relname ?? '').toLowerCase();
  const fromColumnDef = (def: Node | undefined) => {
    if (!def) return;
    const constraints = ((def.constraints ?? []) as Node[]).map((c) => c.Constraint).filter(Boolean);
    const notNull = constraints.some((c) => c.contype === 'CONSTR_NOTNULL' || c.contype === 'CONSTR_PRIMARY') || def.is_not_null === true;
    for (const c of constraints) {
      if (c.contype === 'CONSTR_DEFAULT' && c.raw_expr) out.push({ table, column: String(def.colname ?? '').toLowerCase(), notNull, expr: c.raw_expr, location: c.location });
    }
  };
  if (kind === 'CreateStmt') {
    const primaryKeyColumns = new Set<string>();
    for (const element of (body.tableElts ?? []) as Node[]) {
      const c = element.Constraint;
      if (c?.contype === 'CONSTR_PRIMARY') for (const key of (c.keys ?? []) as Node[]) primaryKeyColumns.add(String(key.String?.sval ?? '').toLowerCase());
    }
    for (const element of (body.tableElts ?? []) as Node[]) fromColumnDef(element.ColumnDef);
    for (const d of out) if (primaryKeyColumns.has(d.column)) d.notNull = true;
  } else if (kind === 'AlterTableStmt') {
    for (const cmd of (body.cmds ?? []) as Node[]) {
      const c = cmd.AlterTableCmd;
      if (c?.subtype === 'AT_AddColumn') fromColumnDef(c.def?.ColumnDef);
      else if (c?.subtype === 'AT_ColumnDefault' && c.def) out.push({ table, column: String(c.name ?? '').toLowerCase(), notNull: 'unknown', expr: c.def, location: undefined });
    }
  }
  return out;
}

/** What a DEFAULT expression reads: one current_setting, under an optional nullif and cast. */
export function settingDefault(
  found: { table: string; column: string; notNull: boolean | 'unknown'; expr: Node },
  span: Span,
  typeName: (typeCast: Node) => string,
): SettingDefault | undefined {
  let expr: Node | undefined = found.expr;
  let castType: string | undefined;
  while (expr?.TypeCast) {
    const type = typeName(expr.TypeCast);
    if (castType === undefined && !TEXT_TYPES.has(type)) castType = type;
    expr = expr.TypeCast.arg;
  }
  let nullif = false;
  if (expr?.A_Expr?.kind === 'AEXPR_NULLIF') {
    nullif = true;
    expr = expr.A_Expr.lexpr;
  }
  while (expr?.TypeCast) expr = expr.TypeCast.arg;
  if (!isCurrentSetting(expr)) return undefined;
  const call = expr!.FuncCall;
  const missing = call.args?.[1];
  const missingValue = missing === undefined ? false : constValue(missing);
  const missingOk = typeof missingValue === 'boolean' ? missingValue : missingValue === 'true' || missingValue === 'on' ? true : missingValue === 'false' || missingValue === 'off' ? false : 'unknown';
  return { table: found.table, column: found.column, notNull: found.notNull, setting: settingName(call), missingOk, nullif, ...(castType ? { castType } : {}), span };
}
