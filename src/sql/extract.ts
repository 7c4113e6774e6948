// Turns one libpg-query statement node into StatementFacts. Every location
// here is a byte offset into the parsed text; `at` maps it to the caller's
// UTF-16 offsets.
import type {
  AssignedValue,
  ColumnAssignment,
  ComparedValue,
  Comparison,
  LockingRead,
  PolicyFact,
  RowSecurityFact,
  RowWrite,
  SettingCast,
  SettingDefault,
  SettingRead,
  SettingWrite,
  Span,
  StatementFacts,
  TransactionControl,
} from './facts.ts';
import { intervalsIn } from './interval.ts';

// libpg-query JSON: every node is { NodeType: { ...fields } }; false and zero fields are omitted.
export type Node = Record<string, any>;

export interface ExtractContext {
  /** Maps a byte offset of the parsed text to a UTF-16 offset of the caller's text. */
  at(byteOffset: number): number;
  /** The statement's own span in the caller's text (fallback for nodes without location). */
  statement: Span;
  /** Byte offset just past the word (identifier or keyword) that starts at `byteOffset`. */
  wordEnd(byteOffset: number): number;
}

const TRANSACTION_KINDS: Record<string, TransactionControl> = {
  TRANS_STMT_BEGIN: 'begin',
  TRANS_STMT_START: 'begin',
  TRANS_STMT_COMMIT: 'commit',
  TRANS_STMT_ROLLBACK: 'rollback',
  TRANS_STMT_SAVEPOINT: 'savepoint',
  TRANS_STMT_RELEASE: 'release',
  TRANS_STMT_ROLLBACK_TO: 'rollback_to',
  TRANS_STMT_PREPARE: 'prepare',
  TRANS_STMT_COMMIT_PREPARED: 'commit_prepared',
  TRANS_STMT_ROLLBACK_PREPARED: 'rollback_prepared',
};

const LOCK_STRENGTH: Record<string, LockingRead['strength']> = {
  LCS_FORUPDATE: 'update',
  LCS_FORNOKEYUPDATE: 'no_key_update',
  LCS_FORSHARE: 'share',
  LCS_FORKEYSHARE: 'key_share',
};

const ROW_SECURITY: Record<string, RowSecurityFact['action']> = {
  AT_EnableRowSecurity: 'enable',
  AT_ForceRowSecurity: 'force',
  AT_DisableRowSecurity: 'disable',
  AT_NoForceRowSecurity: 'no_force',
};

const MIRRORED_OPERATOR: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '<>': '<>', '!=': '!=' };

export function emptyFacts(kind: string, span: Span): StatementFacts {
  return {
    kind,
    span,
    settingWrites: [],
    settingReads: [],
    settingCasts: [],
    deallocateAll: false,
    lockingReads: [],
    rowWrites: [],
    policies: [],
    rowSecurity: [],
  };
}

export function nodeType(node: Node): string {
  return Object.keys(node)[0] ?? 'Unknown';
}

export function extractFacts(stmt: Node, ctx: ExtractContext): StatementFacts {
  const kind = nodeType(stmt);
  const facts = emptyFacts(kind, ctx.statement);
  const body = stmt[kind] as Node;
  const spanAt = (location: number | undefined, length = 1): Span => {
    if (location === undefined || location < 0) return ctx.statement;
    const start = ctx.at(location);
    return { start, end: Math.max(start + 1, ctx.at(location + length)) };
  };

  switch (kind) {
    case 'VariableSetStmt':
      facts.settingWrites.push(variableSet(body, ctx.statement));
      break;
    case 'DiscardStmt':
      facts.discard = ({ DISCARD_ALL: 'all', DISCARD_PLANS: 'plans', DISCARD_SEQUENCES: 'sequences', DISCARD_TEMP: 'temp' } as const)[
        body.target as 'DISCARD_ALL'
      ];
      break;
    case 'DeallocateStmt':
      facts.deallocateAll = body.isall === true || body.name === undefined;
      break;
    case 'TransactionStmt':
      facts.transaction = TRANSACTION_KINDS[body.kind as string];
      break;
    case 'CreatePolicyStmt': {
      const policy: PolicyFact = {
        name: body.policy_name,
        table: relationName(body.table),
        settingsRead: [],
        span: ctx.statement,
      };
      facts.policies.push(policy);
      break;
    }
    case 'AlterRoleSetStmt':
    case 'AlterDatabaseSetStmt':
      facts.settingDefaults = [settingDefault(kind, body, ctx.statement)];
      break;
    case 'AlterTableStmt':
      for (const cmd of body.cmds ?? []) {
        const action = ROW_SECURITY[cmd.AlterTableCmd?.subtype];
        if (action) facts.rowSecurity.push({ table: relationName(body.relation), action, span: ctx.statement });
      }
      break;
  }

  // From the start of the cast expression to the end of its type name.
  const castSpan = (node: Node): Span => {
    const starts = [node.location, innerLocation(node.arg)].filter((l) => typeof l === 'number' && l >= 0) as number[];
    if (!starts.length) return ctx.statement;
    const typeLocation = node.typeName?.location ?? -1;
    const typeEnd = typeLocation >= 0 ? ctx.wordEnd(typeLocation) : -1;
    const start = ctx.at(Math.min(...starts));
    return { start, end: typeEnd > 0 ? Math.max(start + 1, ctx.at(typeEnd)) : start + 1 };
  };

  // Expressions anywhere in the statement: set_config, current_setting, casts,
  // row-locking selects, and row writes (also inside CTEs and sublinks).
  walk(body, kind, (node, type, parents) => {
    switch (type) {
      case 'FuncCall': {
        const name = functionName(node);
        if (name === 'set_config') facts.settingWrites.push(setConfig(node, spanAt(node.location, 'set_config'.length)));
        if (name === 'current_setting') facts.settingReads.push(currentSetting(node, spanAt(node.location, 'current_setting'.length)));
        break;
      }
      case 'TypeCast': {
        const cast = settingCast(node, castSpan(node));
        if (cast) facts.settingCasts.push(cast);
        break;
      }
      case 'SelectStmt':
        if (node.lockingClause?.length) facts.lockingReads.push(lockingRead(node, ctx.statement, spanAt));
        break;
      case 'UpdateStmt':
      case 'DeleteStmt':
      case 'InsertStmt':
        facts.rowWrites.push(rowWrite(type, node, spanAt, parents.length === 0 ? ctx.statement : spanAt(node.relation?.location)));
        break;
    }
  });
  for (const policy of facts.policies) policy.settingsRead = facts.settingReads;
  return facts;
}

/** Depth-first walk over typed nodes, skipping nested statements that are not executed here. */
function walk(root: Node, rootType: string, visit: (node: Node, type: string, parents: string[]) => void): void {
  const parents: string[] = [];
  const visitTyped = (node: Node, type: string) => {
    visit(node, type, parents);
    parents.push(type);
    visitFields(node);
    parents.pop();
  };
  const visitFields = (node: Node) => {
    for (const key in node) {
      const value = node[key];
      if (value && typeof value === 'object') visitValue(value);
    }
  };
  const visitValue = (value: any) => {
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item === 'object') visitValue(item);
      return;
    }
    const keys = Object.keys(value);
    if (keys.length === 1 && /^[A-Z]/.test(keys[0]) && value[keys[0]] && typeof value[keys[0]] === 'object') {
      const type = keys[0];
      // SET clauses of CREATE FUNCTION / ALTER ROLE ... SET are not executed now.
      if (type === 'VariableSetStmt') return;
      visitTyped(value[type], type);
    } else {
      visitFields(value);
    }
  };
  visitTyped(root, rootType);
}

function innerLocation(node: Node | undefined): number | undefined {
  if (!node) return undefined;
  const inner = node[nodeType(node)];
  return inner?.location;
}

export function functionName(funcCall: Node): string {
  const parts = (funcCall.funcname ?? []).map((p: Node) => p.String?.sval);
  return String(parts[parts.length - 1] ?? '').toLowerCase();
}

export function relationName(rangeVar: Node | undefined): string {
  return String(rangeVar?.relname ?? '').toLowerCase();
}

function constValue(node: Node | undefined): string | number | boolean | null | undefined {
  const c = node?.A_Const;
  if (!c) {
    // 'x'::text and similar: look through the cast.
    if (node?.TypeCast) return constValue(node.TypeCast.arg);
    return undefined;
  }
  if (c.isnull) return null;
  if (c.sval) return c.sval.sval ?? '';
  if (c.ival) return c.ival.ival ?? 0;
  if (c.fval) return Number(c.fval.fval);
  if (c.boolval) return c.boolval.boolval === true;
  return undefined;
}

function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['true', 't', 'on', 'yes', 'y', '1'].includes(v)) return true;
    if (['false', 'f', 'off', 'no', 'n', '0'].includes(v)) return false;
  }
  if (typeof value === 'number') return value !== 0;
  return undefined;
}

/** A placeholder the analyzer put where a name is composed at run time (`SET {}` with sql.Identifier). */
const PLACEHOLDER_NAME = /^pgq_param_\d+$/;

function variableSet(body: Node, span: Span): SettingWrite {
  const name = body.name && !PLACEHOLDER_NAME.test(body.name) ? String(body.name).toLowerCase() : undefined;
  switch (body.kind) {
    case 'VAR_RESET':
      return { name, level: 'session', via: 'reset', span };
    case 'VAR_RESET_ALL':
      return { name: undefined, level: 'session', via: 'reset_all', span };
    default:
      return { name, level: body.is_local ? 'local' : 'session', via: 'set', span };
  }
}

/** ALTER ROLE r [IN DATABASE d] SET ..., ALTER DATABASE d SET ...: a default stored in pg_db_role_setting. */
function settingDefault(kind: string, body: Node, span: Span): SettingDefault {
  const set = (body.setstmt ?? {}) as Node;
  const role = kind === 'AlterRoleSetStmt' ? roleName(body.role) : undefined;
  const database = kind === 'AlterDatabaseSetStmt' ? body.dbname : body.database;
  const name = set.name && !PLACEHOLDER_NAME.test(set.name) ? String(set.name).toLowerCase() : undefined;
  const values = (set.args ?? []).map((arg: Node) => constValue(arg));
  const value = set.kind === 'VAR_SET_VALUE' && values.length > 0 && values.every((v: unknown) => v !== undefined && v !== null) ? values.join(', ') : undefined;
  const fact: SettingDefault = { name, value, action: set.kind === 'VAR_SET_VALUE' ? 'set' : 'reset', span };
  if (role !== undefined) fact.role = role;
  if (database !== undefined) fact.database = String(database);
  return fact;
}

/** A RoleSpec's name: the role, CURRENT_USER and the like as written; undefined for ALL (no RoleSpec). */
function roleName(spec: Node | undefined): string | undefined {
  if (!spec) return undefined;
  if (spec.roletype === 'ROLESPEC_CSTRING') return String(spec.rolename);
  return String(spec.roletype ?? '').replace(/^ROLESPEC_/, '').toLowerCase();
}

function setConfig(node: Node, span: Span): SettingWrite {
  const [nameArg, , localArg] = node.args ?? [];
  const name = constValue(nameArg);
  const local = asBoolean(constValue(localArg));
  return {
    name: typeof name === 'string' ? name.toLowerCase() : undefined,
    level: local === undefined ? 'unknown' : local ? 'local' : 'session',
    via: 'set_config',
    span,
  };
}

function currentSetting(node: Node, span: Span): SettingRead {
  const [nameArg, missingArg] = node.args ?? [];
  const name = constValue(nameArg);
  const missing = missingArg === undefined ? false : asBoolean(constValue(missingArg));
  return { setting: typeof name === 'string' ? name.toLowerCase() : undefined, missingOk: missing ?? 'unknown', span };
}

/** The internal names of types written with SQL keywords, back to how people write them. */
const TYPE_SPELLING: Record<string, string> = { int4: 'int', int8: 'bigint', int2: 'smallint', bool: 'boolean', float8: 'double precision', float4: 'real' };

function typeNameOf(typeCast: Node): string {
  const names = (typeCast.typeName?.names ?? []).map((n: Node) => n.String?.sval).filter((n: string) => n !== 'pg_catalog');
  const name = names.join('.');
  return TYPE_SPELLING[name] ?? name;
}

const TEXT_TYPES = new Set(['text', 'varchar', 'bpchar', 'name', 'unknown', 'regclass']);

function settingCast(typeCast: Node, span: Span): SettingCast | undefined {
  const type = typeNameOf(typeCast);
  if (TEXT_TYPES.has(type)) return undefined;
  let arg = typeCast.arg as Node | undefined;
  let nullif = false;
  if (arg?.A_Expr?.kind === 'AEXPR_NULLIF') {
    nullif = true;
    arg = arg.A_Expr.lexpr;
  }
  // coalesce(nullif(current_setting(...), ''), ...) and similar wrappers keep the nullif.
  if (arg?.CoalesceExpr) {
    const first = arg.CoalesceExpr.args?.[0];
    if (first?.A_Expr?.kind === 'AEXPR_NULLIF') {
      nullif = true;
      arg = first.A_Expr.lexpr;
    } else {
      arg = first;
    }
  }
  if (!arg?.FuncCall || functionName(arg.FuncCall) !== 'current_setting') return undefined;
  const read = currentSetting(arg.FuncCall, span);
  return { setting: read.setting, missingOk: read.missingOk, nullif, type, span };
}

function lockingRead(select: Node, fallback: Span, spanAt: (loc: number | undefined, len?: number) => Span): LockingRead {
  const clauses = select.lockingClause.map((l: Node) => l.LockingClause);
  const strongest = clauses[0] ?? {};
  const lockedRels = clauses.flatMap((c: Node) => (c.lockedRels ?? []).map((r: Node) => relationName(r.RangeVar)));
  const fromTables: string[] = [];
  const fromLocations: number[] = [];
  const aliases = new Map<string, string>();
  const collect = (item: Node) => {
    if (item.RangeVar) {
      fromTables.push(relationName(item.RangeVar));
      fromLocations.push(item.RangeVar.location);
      const alias = item.RangeVar.alias?.aliasname;
      if (alias) aliases.set(String(alias).toLowerCase(), relationName(item.RangeVar));
    } else if (item.JoinExpr) {
      collect(item.JoinExpr.larg);
      collect(item.JoinExpr.rarg);
    }
  };
  for (const item of select.fromClause ?? []) collect(item);
  // FOR UPDATE OF names the alias of the FROM item (`from procrastinate_jobs as jobs ... for update of jobs`).
  const locked = lockedRels.map((r: string) => aliases.get(r) ?? r);
  return {
    tables: locked.length ? locked : fromTables,
    strength: LOCK_STRENGTH[strongest.strength] ?? 'update',
    skipLocked: clauses.some((c: Node) => c.waitPolicy === 'LockWaitSkip'),
    nowait: clauses.some((c: Node) => c.waitPolicy === 'LockWaitError'),
    where: comparisons(select.whereClause, spanAt),
    span: fromLocations.length ? spanAt(fromLocations[0]) : fallback,
  };
}

function columnOf(node: Node | undefined): string | undefined {
  const fields = node?.ColumnRef?.fields;
  if (!fields) return undefined;
  const last = fields[fields.length - 1];
  return last?.String?.sval?.toLowerCase();
}

function collectNames(node: Node | undefined, columns: string[], functions: string[]): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) collectNames(item, columns, functions);
    return;
  }
  if (node.ColumnRef) {
    const column = columnOf(node);
    if (column) columns.push(column);
    return;
  }
  if (node.FuncCall) functions.push(functionName(node.FuncCall));
  for (const key in node) if (node[key] && typeof node[key] === 'object') collectNames(node[key], columns, functions);
}

/** A placeholder, also with a cast: `$1`, `$1::bigint`. */
function isParam(node: Node | undefined): boolean {
  return Boolean(node?.ParamRef || node?.TypeCast?.arg?.ParamRef);
}

function hasParam(node: Node | undefined): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasParam);
  if (node.ParamRef) return true;
  for (const key in node) if (node[key] && typeof node[key] === 'object' && hasParam(node[key])) return true;
  return false;
}

function stringsIn(node: Node | undefined, out: string[] = []): string[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const item of node) stringsIn(item, out);
    return out;
  }
  if (node.A_Const?.sval) out.push(String(node.A_Const.sval.sval ?? ''));
  for (const key in node) if (node[key] && typeof node[key] === 'object') stringsIn(node[key], out);
  return out;
}

/** The optional details of an expression value: its one constant interval, its strings, its placeholders. */
function expressionDetails(node: Node | undefined, withStrings: boolean): { intervalSeconds?: number; strings?: string[]; params?: boolean } {
  const details: { intervalSeconds?: number; strings?: string[]; params?: boolean } = {};
  const intervals = intervalsIn(node);
  if (intervals.length === 1) details.intervalSeconds = intervals[0];
  if (withStrings) {
    const strings = stringsIn(node);
    if (strings.length) details.strings = strings;
  }
  if (hasParam(node)) details.params = true;
  return details;
}

function assignedValue(column: string, value: Node | undefined): AssignedValue {
  const literal = constValue(value);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  if (isParam(value)) return { kind: 'param' };
  const expr = value?.A_Expr;
  if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '+') {
    const [self, other] = columnOf(expr.lexpr) === column ? [expr.lexpr, expr.rexpr] : [expr.rexpr, expr.lexpr];
    if (columnOf(self) === column) {
      const by = constValue(other);
      return { kind: 'increment', by: typeof by === 'number' ? by : undefined };
    }
  }
  const columns: string[] = [];
  const functions: string[] = [];
  collectNames(value, columns, functions);
  return { kind: 'expression', columns, functions, ...expressionDetails(value, true) };
}

function comparedValue(node: Node | undefined): ComparedValue {
  const literal = constValue(node);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  if (isParam(node)) return { kind: 'param' };
  if (node?.SubLink) return { kind: 'subquery' };
  const column = columnOf(node);
  if (column) return { kind: 'column', column };
  const columns: string[] = [];
  const functions: string[] = [];
  collectNames(node, columns, functions);
  return { kind: 'expression', functions, ...expressionDetails(node, false) };
}

function comparisons(where: Node | undefined, spanAt: (loc: number | undefined, len?: number) => Span): Comparison[] {
  const out: Comparison[] = [];
  const visit = (node: Node | undefined, underOr: boolean) => {
    if (!node) return;
    if (node.BoolExpr) {
      const or = node.BoolExpr.boolop === 'OR_EXPR' || node.BoolExpr.boolop === 'NOT_EXPR';
      for (const arg of node.BoolExpr.args ?? []) visit(arg, underOr || or);
      return;
    }
    const expr = node.A_Expr;
    if (expr && (expr.kind === 'AEXPR_OP' || expr.kind === 'AEXPR_IN' || expr.kind === 'AEXPR_OP_ANY')) {
      const op = expr.kind === 'AEXPR_IN' ? 'in' : String(expr.name?.[0]?.String?.sval ?? '');
      const left = columnOf(expr.lexpr);
      const right = columnOf(expr.rexpr);
      if (left) out.push({ column: left, op, value: comparedValue(expr.rexpr), underOr, span: spanAt(expr.lexpr.ColumnRef.location, left.length) });
      else if (right && MIRRORED_OPERATOR[op])
        out.push({ column: right, op: MIRRORED_OPERATOR[op], value: comparedValue(expr.lexpr), underOr, span: spanAt(expr.rexpr.ColumnRef.location, right.length) });
      return;
    }
    // column IN (SELECT ...), column = ANY (SELECT ...)
    const sublink = node.SubLink;
    if (sublink?.subLinkType === 'ANY_SUBLINK') {
      const column = columnOf(sublink.testexpr);
      if (column) out.push({ column, op: 'in', value: { kind: 'subquery' }, underOr, span: spanAt(sublink.testexpr.ColumnRef.location, column.length) });
      return;
    }
    if (node.NullTest) {
      const column = columnOf(node.NullTest.arg);
      if (column)
        out.push({
          column,
          op: node.NullTest.nulltesttype === 'IS_NOT_NULL' ? 'is not null' : 'is null',
          value: { kind: 'literal', value: null },
          underOr,
          span: spanAt(node.NullTest.arg.ColumnRef.location, column.length),
        });
    }
  };
  visit(where, false);
  return out;
}

function rowWrite(type: string, node: Node, spanAt: (loc: number | undefined, len?: number) => Span, span: Span): RowWrite {
  const op = type === 'UpdateStmt' ? 'update' : type === 'DeleteStmt' ? 'delete' : 'insert';
  const assignments: ColumnAssignment[] = [];
  if (op === 'update') {
    for (const target of node.targetList ?? []) {
      const res = target.ResTarget;
      if (!res?.name) continue;
      const column = String(res.name).toLowerCase();
      assignments.push({ column, value: assignedValue(column, res.val), span: spanAt(res.location, column.length) });
    }
  }
  return {
    op,
    table: relationName(node.relation),
    assignments,
    where: comparisons(node.whereClause, spanAt),
    returning: Boolean(node.returningClause?.exprs?.length ?? node.returningList?.length),
    span,
  };
}
