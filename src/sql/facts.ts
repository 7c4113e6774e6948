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
  | { kind: 'subquery' }
  | {
      kind: 'expression';
      functions: string[];
      /** Seconds of the one constant interval in the expression (`now() - interval '4 hours'`), if there is exactly one. */
      intervalSeconds?: number;
      params?: boolean;
    };

export interface Comparison {
  column: string;
  /** Operator with the column on the left: `locked_until < now()` and `now() > locked_until` both read '<'. */
  op: string;
  value: ComparedValue;
  /** The comparison sits under an OR (it does not restrict every row the statement touches). */
  underOr: boolean;
  span: Span;
}

export interface RowWrite {
  op: 'update' | 'delete' | 'insert';
  table: string;
  assignments: ColumnAssignment[];
  where: Comparison[];
  returning: boolean;
  span: Span;
}

export interface PolicyFact {
  name: string;
  table: string;
  settingsRead: SettingRead[];
  span: Span;
}

export interface RowSecurityFact {
  table: string;
  action: 'enable' | 'force' | 'disable' | 'no_force';
  span: Span;
}

/**
 * A default of a setting stored in the catalog (pg_db_role_setting):
 * `ALTER ROLE r [IN DATABASE d] SET s = v`, `ALTER DATABASE d SET s = v`,
 * `ALTER ROLE ALL SET s = v`, or their RESET. Every new connection of the
 * role (or to the database) starts with it, and RESET, RESET ALL, DISCARD ALL
 * and the end of a SET LOCAL transaction return the setting to it.
 */
export interface SettingDefault {
  /** Setting name, lower-cased; undefined for RESET ALL. */
  name: string | undefined;
  /** The value as written (list values joined with ', '); undefined for RESET or a value that is not a constant. */
  value: string | undefined;
  /** The role it is a default of; undefined for every role (ALTER ROLE ALL, ALTER DATABASE). */
  role?: string;
  /** The database it applies in; undefined for every database. */
  database?: string;
  /** 'set' stores a default; 'reset' (RESET, RESET ALL, SET ... TO DEFAULT) removes one. */
  action: 'set' | 'reset';
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
  /** ALTER ROLE / ALTER DATABASE ... SET: defaults stored in the catalog (absent when there are none). */
  settingDefaults?: SettingDefault[];
  /** Set when the statement was found inside a function, procedure or DO body. */
  routine?: RoutineInfo;
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
