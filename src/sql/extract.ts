// Turns one libpg-query statement node into StatementFacts. Every location
// here is a byte offset into the parsed text; `at` maps it to the caller's
// UTF-16 offsets.
import type {
  AssignedValue,
  CaseBranch,
  ColumnAssignment,
  LockingRead,
  PolicyFact,
  RowSecurityFact,
  RowWrite,
  SettingCast,
  RoleSetting,
  SettingRead,
  SettingValue,
  SettingWrite,
  Span,
  StatementFacts,
  TransactionControl,
} from './facts.ts';
import { caseGuardedCasts, columnDefaults, settingDefault, TEXT_TYPES } from './guards.ts';
import { isNowPlus } from './interval.ts';
import { copyOf } from './copies.ts';
import { collectNames, columnOf, comparedColumnNode, comparisons, expressionDetails, isParam, paramValue, stringsIn, type SpanAt } from './comparisons.ts';
import { functionName, nodeType, relationName, schemaOf } from './nodes.ts';
import { ctesOf, fromListResolver, joinedConditions, joinedOtherRows, withCallerRows } from './sources.ts';
import { constValue, routineCall, valueOf } from './values.ts';

// libpg-query JSON: every node is { NodeType: { ...fields } }; false and zero fields are omitted.
export type Node = Record<string, any>;

export interface ExtractContext {
  /** Maps a byte offset of the parsed text to a UTF-16 offset of the caller's text. */
  at(byteOffset: number): number;
  /** The statement's own span in the caller's text (fallback for nodes without location). */
  statement: Span;
  /** Byte offset just past the word (identifier or keyword) that starts at `byteOffset`. */
  wordEnd(byteOffset: number): number;
  /** Parameter names of the routine the statement is in ($N is parameters[N-1]); undefined at top level. */
  parameters?: readonly string[];
  /** The statement sits in a PL/pgSQL block whose EXCEPTION handler catches a failed cast. */
  exceptionGuard?: boolean;
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
    case 'CallStmt': {
      // CALL p(...): the FuncCall is stored unwrapped, so the walk below does not see it.
      const call = body.funccall ? routineCall(body.funccall, spanAt(body.funccall.location, Math.max(1, ctx.wordEnd(body.funccall.location) - body.funccall.location)), ctx.parameters) : undefined;
      if (call) (facts.calls ??= []).push(call);
      break;
    }
    case 'TransactionStmt':
      facts.transaction = TRANSACTION_KINDS[body.kind as string];
      if (body.chain === true) facts.chain = true;
      break;
    case 'CreatePolicyStmt': {
      const policy: PolicyFact = {
        name: body.policy_name,
        table: relationName(body.table),
        ...schemaOf(body.table),
        settingsRead: [],
        span: ctx.statement,
      };
      facts.policies.push(policy);
      break;
    }
    case 'AlterRoleSetStmt':
    case 'AlterDatabaseSetStmt':
      facts.roleSettings = [roleSetting(kind, body, ctx.statement)];
      break;
    case 'SelectStmt': {
      // `select now() + ...` alone: the value of a SQL function that computes a time after now (a deadline, a backoff).
      const targets = body.targetList ?? [];
      if (!body.fromClause && targets.length === 1 && isNowPlus(targets[0].ResTarget?.val)) facts.selectsNowPlus = true;
      break;
    }
    case 'CreateStmt': {
      const columns = ((body.tableElts ?? []) as Node[]).filter((e) => e.ColumnDef?.colname).map((e) => String(e.ColumnDef.colname).toLowerCase());
      if (body.relation) facts.createdTable = { table: relationName(body.relation), ...schemaOf(body.relation), columns, ...temporaryOf(body.relation) };
      break;
    }
    case 'CreateTableAsStmt': {
      // Only a TEMP one: the side-effects rule reads its rows as the session's own; its columns are not listed.
      const rel = body.into?.IntoClause?.rel ?? body.into?.rel;
      if (rel?.relpersistence === 't' && body.objtype !== 'OBJECT_MATVIEW') facts.createdTable = { table: relationName(rel), ...schemaOf(rel), columns: [], temporary: true };
      break;
    }
    case 'AlterTableStmt':
      for (const cmd of body.cmds ?? []) {
        const action = ROW_SECURITY[cmd.AlterTableCmd?.subtype];
        if (action) facts.rowSecurity.push({ table: relationName(body.relation), ...schemaOf(body.relation), action, span: ctx.statement });
        if (cmd.AlterTableCmd?.subtype === 'AT_SetNotNull' && cmd.AlterTableCmd.name) {
          (facts.notNullSet ??= []).push({ table: relationName(body.relation), column: String(cmd.AlterTableCmd.name).toLowerCase() });
        }
      }
      break;
  }

  // A DEFAULT expression: from its first node to the end of its outermost type name (or function call).
  function exprSpan(expr: Node, start: number | undefined): Span {
    if (expr.TypeCast) return castSpan(expr.TypeCast);
    if (start === undefined || start < 0) return ctx.statement;
    return spanAt(start, Math.max(1, ctx.wordEnd(start) - start));
  }

  // From the start of the cast expression to the end of its type name.
  function castSpan(node: Node): Span {
    const starts = [node.location, innerLocation(node.arg)].filter((l) => typeof l === 'number' && l >= 0) as number[];
    if (!starts.length) return ctx.statement;
    const typeLocation = node.typeName?.location ?? -1;
    const typeEnd = typeLocation >= 0 ? ctx.wordEnd(typeLocation) : -1;
    const start = ctx.at(Math.min(...starts));
    return { start, end: typeEnd > 0 ? Math.max(start + 1, ctx.at(typeEnd)) : start + 1 };
  }

  // A routine's body is not run by its CREATE: src/sql/routines.ts reads it as the routine's statements.
  if (kind === 'CreateFunctionStmt') return facts;

  // Column DEFAULTs that read a setting: an insert evaluates them later, so the rules weigh them apart.
  const inDefault = new WeakSet<Node>();
  if (kind === 'CreateStmt' || kind === 'AlterTableStmt') {
    for (const found of columnDefaults(kind, body)) {
      const exprStart = innerLocation(found.expr);
      const fact = settingDefault(found, exprSpan(found.expr, exprStart), typeNameOf);
      if (!fact) continue;
      (facts.settingDefaults ??= []).push(fact);
      markTypeCasts(found.expr, inDefault);
    }
  }
  const casts: { node: Node; fact: SettingCast }[] = [];
  let outerCtes: Map<string, Node> | undefined;
  // Locking selects in a sublink of another locking select's WHERE, with the outer read's tables (set on the outer's visit,
  // which the depth-first walk makes before the inner's).
  const gating = new WeakMap<Node, string[]>();

  // Expressions anywhere in the statement: set_config, current_setting, casts,
  // row-locking selects, and row writes (also inside CTEs and sublinks).
  walk(body, kind, (node, type, parents) => {
    switch (type) {
      case 'FuncCall': {
        const name = functionName(node);
        if (name === 'set_config') facts.settingWrites.push(setConfig(node, spanAt(node.location, 'set_config'.length), ctx.parameters));
        else if (name === 'current_setting') facts.settingReads.push(currentSetting(node, spanAt(node.location, 'current_setting'.length)));
        else {
          const call = routineCall(node, spanAt(node.location, Math.max(1, ctx.wordEnd(node.location) - node.location)), ctx.parameters);
          if (call) (facts.calls ??= []).push(call);
        }
        break;
      }
      case 'TypeCast': {
        const cast = settingCast(node, castSpan(node));
        if (cast) {
          if (ctx.exceptionGuard) cast.guard = 'exception-handler';
          if (inDefault.has(node)) cast.inDefault = true;
          facts.settingCasts.push(cast);
          casts.push({ node, fact: cast });
        }
        break;
      }
      case 'SelectStmt':
        if (node.lockingClause?.length) {
          const read = lockingRead(node, ctx.statement, spanAt);
          const gates = gating.get(node);
          if (gates && read.tables.every((t) => !gates.includes(t))) read.gates = gates;
          facts.lockingReads.push(read);
          for (const inner of lockingSublinkSelects(node.whereClause)) if (!gating.has(inner)) gating.set(inner, read.tables);
        }
        break;
      case 'UpdateStmt':
      case 'DeleteStmt':
      case 'InsertStmt':
        // A write in a CTE sees the statement's other CTEs.
        facts.rowWrites.push(rowWrite(type, node, spanAt, parents.length === 0 ? ctx.statement : spanAt(node.relation?.location), parents.length === 0 ? undefined : (outerCtes ??= ctesOf(body.withClause))));
        break;
    }
  });
  // The CASE pass only where there is a cast to guard (most statements have none).
  if (casts.length > 0 && hasCase(body)) {
    const guarded = caseGuardedCasts(body);
    for (const { node, fact } of casts) if (guarded.has(node)) fact.guard = 'case';
  }
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
    // A typed node is an object of one key, its type (`{ FuncCall: {...} }`): found without listing the keys.
    let type: string | undefined;
    for (const key in value) {
      if (type !== undefined) {
        type = undefined;
        break;
      }
      type = key;
    }
    const first = type === undefined ? 0 : type.charCodeAt(0);
    if (type !== undefined && first >= 65 && first <= 90 && value[type] && typeof value[type] === 'object') {
      // SET clauses of CREATE FUNCTION / ALTER ROLE ... SET are not executed now.
      if (type === 'VariableSetStmt') return;
      visitTyped(value[type], type);
    } else {
      visitFields(value);
    }
  };
  visitTyped(root, rootType);
}

/** The locking SELECTs inside the sublinks of a WHERE clause (`exists (select ... for update skip locked)`). */
function lockingSublinkSelects(where: unknown): Node[] {
  const out: Node[] = [];
  const visit = (node: unknown, inSublink: boolean) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, inSublink);
      return;
    }
    const record = node as Node;
    if (record.SubLink) return visit(record.SubLink.subselect, true);
    if (record.SelectStmt && inSublink && record.SelectStmt.lockingClause?.length) out.push(record.SelectStmt);
    for (const key in record) visit(record[key], inSublink);
  };
  visit(where, false);
  return out;
}

function markTypeCasts(node: unknown, into: WeakSet<Node>): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) markTypeCasts(item, into);
    return;
  }
  const record = node as Node;
  if (record.TypeCast) into.add(record.TypeCast);
  for (const key in record) markTypeCasts(record[key], into);
}

/** Cheap test before the CASE pass: most statements have none. */
function hasCase(node: unknown): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasCase);
  const record = node as Node;
  if (record.CaseExpr) return true;
  for (const key in record) if (record[key] && typeof record[key] === 'object' && hasCase(record[key])) return true;
  return false;
}

function innerLocation(node: Node | undefined): number | undefined {
  if (!node) return undefined;
  const inner = node[nodeType(node)];
  return inner?.location;
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
    case 'VAR_SET_DEFAULT':
      return { name, level: body.is_local ? 'local' : 'session', via: 'set', span, value: { kind: 'default' } };
    default:
      return { name, level: body.is_local ? 'local' : 'session', via: 'set', span, ...setValue(body) };
  }
}

/** The value of SET name = v[, v...]: literals joined as PostgreSQL lists them, else unknown. */
function setValue(body: Node): { value?: SettingValue } {
  const args = (body.args ?? []) as Node[];
  if (body.kind !== 'VAR_SET_VALUE' || args.length === 0) return {};
  const values = args.map((a) => constValue(a));
  if (values.every((v) => v !== undefined)) return { value: { kind: 'literal', value: values.length === 1 ? values[0]! : values.join(', ') } };
  if (args.length === 1 && args[0].ParamRef) return { value: { kind: 'placeholder', index: args[0].ParamRef.number } };
  // A list of literals and placeholders: which values the host filled in.
  if (args.every((a, k) => values[k] !== undefined || a.ParamRef)) {
    return { value: { kind: 'expression', placeholders: args.flatMap((a) => (a.ParamRef ? [a.ParamRef.number as number] : [])) } };
  }
  return { value: { kind: 'expression' } };
}

/** ALTER ROLE r [IN DATABASE d] SET ..., ALTER DATABASE d SET ...: a default stored in pg_db_role_setting. */
function roleSetting(kind: string, body: Node, span: Span): RoleSetting {
  const set = (body.setstmt ?? {}) as Node;
  const role = kind === 'AlterRoleSetStmt' ? roleName(body.role) : undefined;
  const database = kind === 'AlterDatabaseSetStmt' ? body.dbname : body.database;
  const name = set.name && !PLACEHOLDER_NAME.test(set.name) ? String(set.name).toLowerCase() : undefined;
  const values = (set.args ?? []).map((arg: Node) => constValue(arg));
  const value = set.kind === 'VAR_SET_VALUE' && values.length > 0 && values.every((v: unknown) => v !== undefined && v !== null) ? values.join(', ') : undefined;
  const fact: RoleSetting = { name, value, action: set.kind === 'VAR_SET_VALUE' ? 'set' : 'reset', span };
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

function setConfig(node: Node, span: Span, parameters: readonly string[] | undefined): SettingWrite {
  const [nameArg, valueArg, localArg] = node.args ?? [];
  const name = constValue(nameArg);
  const local = asBoolean(constValue(localArg));
  const write: SettingWrite = {
    name: typeof name === 'string' ? name.toLowerCase() : undefined,
    level: local === undefined ? 'unknown' : local ? 'local' : 'session',
    via: 'set_config',
    span,
  };
  if (write.name === undefined) {
    const from = valueOf(nameArg, parameters);
    if (from.kind === 'placeholder' || from.kind === 'routine-parameter') write.nameFrom = from.kind === 'placeholder' ? { kind: 'placeholder', index: from.index } : { kind: 'routine-parameter', name: from.name };
  }
  if (valueArg) write.value = valueOf(valueArg, parameters);
  if (local === undefined && localArg) {
    const from = valueOf(localArg, parameters);
    if (from.kind === 'placeholder') write.levelFrom = { kind: 'placeholder', index: from.index };
    else if (from.kind === 'routine-parameter') write.levelFrom = { kind: 'routine-parameter', name: from.name };
  }
  return write;
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
  // `text[]` is an array type: '' is not a valid array literal any more than a valid integer.
  const array = (typeCast.typeName?.arrayBounds ?? []).length > 0 ? '[]' : '';
  return (TYPE_SPELLING[name] ?? name) + array;
}


function settingCast(typeCast: Node, span: Span): SettingCast | undefined {
  const type = typeNameOf(typeCast);
  if (TEXT_TYPES.has(type)) return undefined;
  let arg = typeCast.arg as Node | undefined;
  // current_setting(...)::text::int casts '' just the same.
  while (arg?.TypeCast && TEXT_TYPES.has(typeNameOf(arg.TypeCast))) arg = arg.TypeCast.arg;
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

function lockingRead(select: Node, fallback: Span, spanAt: SpanAt): LockingRead {
  const clauses = select.lockingClause.map((l: Node) => l.LockingClause);
  const strongest = clauses[0] ?? {};
  const lockedRels = clauses.flatMap((c: Node) => (c.lockedRels ?? []).map((r: Node) => relationName(r.RangeVar)));
  const fromTables: string[] = [];
  const fromSchemas: (string | null)[] = [];
  const fromLocations: number[] = [];
  const aliases = new Map<string, string>();
  // FOR UPDATE OF takes unqualified names: the schema comes from the FROM item it names.
  const schemaByName = new Map<string, string | null>();
  const collect = (item: Node) => {
    if (item.RangeVar) {
      const table = relationName(item.RangeVar);
      const schema = schemaOf(item.RangeVar).schema ?? null;
      fromTables.push(table);
      fromSchemas.push(schema);
      fromLocations.push(item.RangeVar.location);
      if (!schemaByName.has(table)) schemaByName.set(table, schema);
      const alias = item.RangeVar.alias?.aliasname;
      if (alias) aliases.set(String(alias).toLowerCase(), table);
    } else if (item.JoinExpr) {
      collect(item.JoinExpr.larg);
      collect(item.JoinExpr.rarg);
    }
  };
  for (const item of select.fromClause ?? []) collect(item);
  // FOR UPDATE OF names the alias of the FROM item (`from procrastinate_jobs as jobs ... for update of jobs`).
  const locked = lockedRels.map((r: string) => aliases.get(r) ?? r);
  const schemas = locked.length ? locked.map((t: string) => schemaByName.get(t) ?? null) : fromSchemas;
  return {
    tables: locked.length ? locked : fromTables,
    ...(schemas.some((s: string | null) => s !== null) ? { schemas } : {}),
    strength: LOCK_STRENGTH[strongest.strength] ?? 'update',
    skipLocked: clauses.some((c: Node) => c.waitPolicy === 'LockWaitSkip'),
    nowait: clauses.some((c: Node) => c.waitPolicy === 'LockWaitError'),
    // The rows locked are the statement's own: all of FROM, or those FOR UPDATE OF names (by alias or name).
    where: comparisons(select.whereClause, spanAt, 0, new Set(lockedRels.length ? [...lockedRels, ...locked] : [...fromTables, ...aliases.keys()])),
    span: fromLocations.length ? spanAt(fromLocations[0]) : fallback,
  };
}

function assignedValue(column: string, value: Node | undefined, spanAt?: SpanAt): AssignedValue {
  const literal = constValue(value);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  if (isParam(value)) return paramValue(value);
  const expr = value?.A_Expr;
  if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '+') {
    // Also through the value a NULL counts as: `attempt_count = coalesce(attempt_count, 0) + 1`.
    const own = (side: Node) => columnOf(comparedColumnNode(side));
    const [self, other] = own(expr.lexpr) === column ? [expr.lexpr, expr.rexpr] : [expr.rexpr, expr.lexpr];
    if (own(self) === column) {
      const by = constValue(other);
      return { kind: 'increment', by: typeof by === 'number' ? by : undefined };
    }
  }
  // A count down (`retries_remaining = retries_remaining - 1`): an increment by a negative amount.
  if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '-' && columnOf(expr.lexpr) === column) {
    const by = constValue(expr.rexpr);
    if (typeof by === 'number' && by > 0) return { kind: 'increment', by: -by };
  }
  const columns: string[] = [];
  const functions: string[] = [];
  // `worker_id = coalesce($1, worker_id)`: the caller's value, or the column left as it is; nothing computed from it.
  const kept = keptUnlessGiven(value, column);
  collectNames(kept ?? value, columns, functions);
  const cases = spanAt ? caseBranches(value, spanAt) : undefined;
  return { kind: 'expression', columns, functions, ...expressionDetails(value, true), ...(cases ? { cases } : {}) };
}

/** The other arguments of a COALESCE whose last argument is the assigned column itself; undefined for any other value. */
function keptUnlessGiven(value: Node | undefined, column: string): Node[] | undefined {
  let node = value;
  while (node?.TypeCast) node = node.TypeCast.arg;
  const args = node?.CoalesceExpr?.args as Node[] | undefined;
  if (!args || args.length < 2) return undefined;
  const last = args[args.length - 1];
  return last?.ColumnRef && columnOf(last) === column ? args.slice(0, -1) : undefined;
}

/** The branches of a searched CASE (also cast, `case ... end::job_state`): each WHEN's comparisons and the strings its result gives; the ELSE last, without `when`. */
function caseBranches(value: Node | undefined, spanAt: SpanAt): CaseBranch[] | undefined {
  let node = value;
  while (node?.TypeCast) node = node.TypeCast.arg;
  const expr = node?.CaseExpr;
  if (!expr || expr.arg) return undefined;
  const branches: CaseBranch[] = [];
  for (const item of expr.args ?? []) {
    const when = item.CaseWhen;
    if (!when) return undefined;
    branches.push({ when: comparisons(when.expr, spanAt), strings: stringsIn(when.result) });
  }
  branches.push({ strings: stringsIn(expr.defresult) });
  return branches;
}

/** The names a statement's own rows are referred to by: the table's and its alias. */
function namesOf(relation: Node | undefined): Set<string> {
  const names = new Set([relationName(relation)]);
  if (relation?.alias?.aliasname) names.add(String(relation.alias.aliasname).toLowerCase());
  return names;
}

const withCopy = (copy: RowWrite['copy']) => (copy ? { copy } : {});

function rowWrite(type: string, node: Node, spanAt: SpanAt, span: Span, outerCtes?: ReadonlyMap<string, Node>): RowWrite {
  const op = type === 'UpdateStmt' ? 'update' : type === 'DeleteStmt' ? 'delete' : 'insert';
  const assignments: ColumnAssignment[] = [];
  const from = op === 'update' ? node.fromClause : node.usingClause;
  if (op === 'update') {
    const resolve = fromListResolver(node, outerCtes);
    for (const target of node.targetList ?? []) {
      const res = target.ResTarget;
      if (!res?.name) continue;
      const column = String(res.name).toLowerCase();
      assignments.push({ column, value: assignedValue(column, resolve(res.val), spanAt), span: spanAt(res.location, column.length) });
    }
  }
  return {
    op,
    table: relationName(node.relation),
    ...schemaOf(node.relation),
    assignments,
    // Also what a CTE or subquery the write joins by the table's own column says of the same rows.
    where: [...comparisons(withCallerRows(node.whereClause, from), spanAt, 0, namesOf(node.relation)), ...[...joinedConditions(node, from, outerCtes), ...joinedOtherRows(node, from)].flatMap((c) => comparisons(c, spanAt))],
    returning: Boolean(node.returningClause?.exprs?.length ?? node.returningList?.length),
    span,
    ...withCopy(op === 'insert' ? copyOf(node, { value: assignedValue, where: (w) => comparisons(w, spanAt), span: spanAt }) : undefined),
  };
}

/** A TEMP table's relation (`relpersistence` 't'): its rows are the session's own. */
function temporaryOf(relation: Node): { temporary?: true } {
  return relation.relpersistence === 't' ? { temporary: true } : {};
}
