// Statement facts: what the SQL analyzer tells the model about one statement.
// Offsets are UTF-16 offsets into the text given to analyzeSql().

export interface Span {
  start: number;
  end: number;
}

/** Whether a setting write lasts for the transaction or the session. */
export type SettingLevel = 'local' | 'session' | 'unknown';

export interface SettingWrite {
  /** Setting name, lower-cased; undefined when it is computed at run time. */
  name: string | undefined;
  level: SettingLevel;
  via: 'set' | 'set_config' | 'reset' | 'reset_all';
  span: Span;
  /**
   * Where a name that is not a literal comes from: a host placeholder ($N is
   * index N, 1-based; the host front end may know its value from
   * SqlSite.params), or a parameter of the routine the statement is in
   * (a generic setter: its callers choose the name).
   */
  nameFrom?: { kind: 'placeholder'; index: number } | { kind: 'routine-parameter'; name: string };
}

export interface SettingCast {
  setting: string | undefined;
  /** current_setting(s, true): true; current_setting(s): false; unknown when computed. */
  missingOk: boolean | 'unknown';
  /** The value passes through nullif(..., '') before the cast. */
  nullif: boolean;
  type: string;
  span: Span;
}

export interface SettingRead {
  setting: string | undefined;
  missingOk: boolean | 'unknown';
  span: Span;
}

export type TransactionControl =
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'savepoint'
  | 'release'
  | 'rollback_to'
  | 'prepare'
  | 'commit_prepared'
  | 'rollback_prepared';

export interface LockingRead {
  tables: string[];
  /** The schema each of `tables` is qualified with (`from billing.jobs`), null where the name is unqualified. */
  schemas?: (string | null)[];
  strength: 'update' | 'no_key_update' | 'share' | 'key_share';
  skipLocked: boolean;
  nowait: boolean;
  /** Comparisons of the locking SELECT's own WHERE (a claim's predicate). */
  where: Comparison[];
  span: Span;
}

/** How a column is given its new value in UPDATE ... SET. */
export type AssignedValue =
  | { kind: 'increment'; by: number | undefined }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'param' }
  | {
      kind: 'expression';
      columns: string[];
      functions: string[];
      /** Seconds of the one constant interval in the expression (`now() + interval '30 seconds'`), if there is exactly one. */
      intervalSeconds?: number;
      /** String constants in the expression, e.g. the states of a CASE. */
      strings?: string[];
      /** The expression uses a placeholder (its value is set by the caller). */
      params?: boolean;
    };

export interface ColumnAssignment {
  column: string;
  value: AssignedValue;
  span: Span;
}

export type ComparedValue =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'param' }
  | { kind: 'column'; column: string }
  | {
      kind: 'subquery';
      /** Tables of the subquery's FROM (`worker_id in (select id from workers where ...)`). */
      tables?: string[];
      /** Comparisons of the subquery's own WHERE. */
      where?: Comparison[];
    }
  | {
      kind: 'expression';
      functions: string[];
      /** Seconds of the one constant interval in the expression (`now() - interval '4 hours'`), if there is exactly one. */
      intervalSeconds?: number;
      params?: boolean;
      /** String constants in the expression, e.g. the list of `status in ('queued', 'failed')`. */
      strings?: string[];
    };

export interface Comparison {
  /** The column compared; '' for `exists (subquery)` (op 'exists'). */
  column: string;
  /** Operator with the column on the left: `locked_until < now()` and `now() > locked_until` both read '<'. */
  op: string;
  value: ComparedValue;
  /** The comparison sits under an OR (it does not restrict every row the statement touches). */
  underOr: boolean;
  /** The comparison sits under a NOT (`not exists (...)`, `worker_id not in (...)`); such comparisons are also underOr. */
  negated?: boolean;
  span: Span;
}

export interface RowWrite {
  op: 'update' | 'delete' | 'insert';
  table: string;
  /** The schema the table is qualified with (`update billing.jobs`); undefined when unqualified. */
  schema?: string;
  assignments: ColumnAssignment[];
  where: Comparison[];
  returning: boolean;
  span: Span;
}

export interface PolicyFact {
  name: string;
  table: string;
  /** The schema the table is qualified with; undefined when unqualified. */
  schema?: string;
  settingsRead: SettingRead[];
  span: Span;
}

export interface RowSecurityFact {
  table: string;
  /** The schema the table is qualified with; undefined when unqualified. */
  schema?: string;
  action: 'enable' | 'force' | 'disable' | 'no_force';
  span: Span;
}

export interface StatementFacts {
  /** libpg-query node type of the statement, e.g. 'UpdateStmt'. */
  kind: string;
  span: Span;
  settingWrites: SettingWrite[];
  settingReads: SettingRead[];
  settingCasts: SettingCast[];
  discard?: 'all' | 'plans' | 'sequences' | 'temp';
  deallocateAll: boolean;
  transaction?: TransactionControl;
  lockingReads: LockingRead[];
  rowWrites: RowWrite[];
  policies: PolicyFact[];
  rowSecurity: RowSecurityFact[];
  /** Set when the statement was found inside a function, procedure or DO body. */
  routine?: RoutineInfo;
  /** Where the statement sits in its PL/pgSQL body: in a loop, in a block with an EXCEPTION clause, in a handler. */
  plpgsql?: PlpgsqlPlace;
  /** Functions the statement calls, by their name as written (lower-case, with the schema: `net.http_post`); builtins that only compute a value (now, count, format, ...) are left out. */
  calls?: { name: string; span: Span }[];
}

export interface PlpgsqlPlace {
  /** Inside a FOR/WHILE/LOOP body (`for job in select ... loop`); the loop's own query is not. */
  inLoop: boolean;
  /** Ids of the enclosing BEGIN ... EXCEPTION blocks whose protected part holds the statement, innermost last. */
  guardedBy: number[];
  /** Id of the BEGIN ... EXCEPTION block whose handler holds the statement. */
  handlerOf?: number;
}

export interface RoutineInfo {
  name: string;
  kind: 'function' | 'procedure' | 'do';
  language: string;
}

export interface SqlSyntaxError {
  message: string;
  span: Span;
}

export interface SqlAnalysis {
  statements: StatementFacts[];
  errors: SqlSyntaxError[];
}
