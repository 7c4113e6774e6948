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
  /**
   * The value written, where the statement shows it: a literal (NULL and ''
   * clear a custom setting), DEFAULT (`SET x TO DEFAULT`, the same as RESET),
   * a placeholder, a parameter of the enclosing routine, or an expression.
   * Undefined for RESET and RESET ALL.
   */
  value?: SettingValue;
  /** Where set_config's third argument comes from when it is not a literal. */
  levelFrom?: { kind: 'placeholder'; index: number } | { kind: 'routine-parameter'; name: string };
}

export type SettingValue =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'default' }
  | { kind: 'placeholder'; index: number }
  | { kind: 'routine-parameter'; name: string }
  /** `placeholders`: a list of literals and these placeholders (`SET search_path TO $1, public`), the host's to fill. */
  | { kind: 'expression'; placeholders?: number[] };

export interface SettingCast {
  setting: string | undefined;
  /** current_setting(s, true): true; current_setting(s): false; unknown when computed. */
  missingOk: boolean | 'unknown';
  /** The value passes through nullif(..., '') before the cast. */
  nullif: boolean;
  type: string;
  span: Span;
  /**
   * The cast cannot see '': a CASE whose condition tests the setting against
   * '' (or its length) before the branch that casts, or a PL/pgSQL block whose
   * EXCEPTION handler catches the cast's error.
   */
  guard?: 'case' | 'exception-handler';
  /** The cast is (part of) a column's DEFAULT expression: settingDefaults says what an insert does with it. */
  inDefault?: boolean;
}

/** A column DEFAULT that reads a setting: `tenant_id uuid not null default current_setting('app.tenant')::uuid`. */
export interface SettingDefault {
  table: string;
  column: string;
  /** NOT NULL (or PRIMARY KEY) on the column in the same statement; 'unknown' for ALTER COLUMN ... SET DEFAULT. */
  notNull: boolean | 'unknown';
  setting: string | undefined;
  missingOk: boolean | 'unknown';
  /** nullif(..., '') around the read. */
  nullif: boolean;
  /** The type the read is cast to, if it is cast. */
  castType?: string;
  /** The DEFAULT expression. */
  span: Span;
}

/** A call of a function or procedure that is not a built-in the rules know. */
export interface RoutineCall {
  /** Lower-cased, schema-qualified as written (`app.enter_tenant`). */
  name: string;
  /** Positional arguments, then named ones (`p_tenant => $1`) with their name. */
  args: CallArgument[];
  span: Span;
}

export interface CallArgument {
  /** Set for a named argument. */
  name?: string;
  value: SettingValue;
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
  /**
   * A lock taken in a sublink of another table's locking read (`... and exists (select 1 from job_queues ... for update
   * skip locked) for update skip locked`): the tables whose claim it gates. Its rows are a mutex held for the job the
   * outer read picks (a per-queue lock), not jobs claimed of their own.
   */
  gates?: string[];
}

/** How a column is given its new value in UPDATE ... SET. */
export type AssignedValue =
  | { kind: 'increment'; by: number | undefined }
  | { kind: 'literal'; value: string | number | boolean | null }
  /** `$N`: the host binds its value (number: N, for the bound value). */
  | { kind: 'param'; number?: number }
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
      /** The placeholders it uses ($N as N), for their bound values: the states of `CASE ... THEN $5 ELSE $6 END`. */
      paramNumbers?: number[];
      /** The parse node of the one interval whose length a placeholder gives (`make_interval(mins => $1)`), read with the bound values by intervalOf. */
      boundInterval?: object;
      /** A searched CASE (`case when attempts >= max_attempts then 'dead' else 'queued' end`): which rows get which strings. */
      cases?: CaseBranch[];
    };

/** One branch of a searched CASE: the comparisons of its WHEN (none for the ELSE) and the strings its result gives. */
export interface CaseBranch {
  when?: Comparison[];
  strings: string[];
}

export interface ColumnAssignment {
  column: string;
  value: AssignedValue;
  span: Span;
}

export type ComparedValue =
  | { kind: 'literal'; value: string | number | boolean | null }
  /** `$N`: the host binds its value (number: N, for the bound value). */
  | { kind: 'param'; number?: number }
  | { kind: 'column'; column: string }
  | {
      kind: 'subquery';
      /** Tables of the subquery's FROM (`worker_id in (select id from workers where ...)`). */
      tables?: string[];
      /** The schema each of `tables` is qualified with (null where it is not); left out when none is. */
      schemas?: (string | null)[];
      /** Comparisons of the subquery's own WHERE. */
      where?: Comparison[];
    }
  | {
      kind: 'expression';
      functions: string[];
      /** Seconds of the one constant interval in the expression (`now() - interval '4 hours'`), if there is exactly one. */
      intervalSeconds?: number;
      params?: boolean;
      /** As in AssignedValue: the one interval whose length a placeholder gives. */
      boundInterval?: object;
      /** String constants in the expression, e.g. the list of `status in ('queued', 'failed')`. */
      strings?: string[];
      /** The placeholders it uses ($N as N), for their bound values: the list of `status in ($1, $2)`. */
      paramNumbers?: number[];
      /** `now() - <a length>`: a time before now, also by a length computed per row (`now() - timeout * interval '1 second'`). */
      beforeNow?: boolean;
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
  /** In a subquery that joins its tables on a column: the table the compared column is qualified with (`workers` of `w.last_seen`). */
  table?: string;
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
  /** An INSERT ... SELECT that copies rows of a table (src/sql/copies.ts). */
  copy?: RowCopy;
}

/** The rows an INSERT ... SELECT copies: from which table, under which WHERE, and each column's value. */
export interface RowCopy {
  /** The table copied (through a CTE that moves its rows: `with moved as (delete from jobs ... returning *)`). */
  from: string;
  schema?: string;
  /** Each inserted column with the value the SELECT gives it (`attempt + 1` into `attempt`: an increment). */
  values: ColumnAssignment[];
  /** The SELECT's WHERE, and the moving CTE's. */
  where: Comparison[];
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

/**
 * A default of a setting stored in the catalog (pg_db_role_setting):
 * `ALTER ROLE r [IN DATABASE d] SET s = v`, `ALTER DATABASE d SET s = v`,
 * `ALTER ROLE ALL SET s = v`, or their RESET. Every new connection of the
 * role (or to the database) starts with it, and RESET, RESET ALL, DISCARD ALL
 * and the end of a SET LOCAL transaction return the setting to it.
 */
export interface RoleSetting {
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
  /** ALTER ROLE / ALTER DATABASE ... SET: defaults stored in the catalog, what new sessions of that role get (absent when there are none). */
  roleSettings?: RoleSetting[];
  /** Set when the statement was found inside a function, procedure or DO body. */
  routine?: RoutineInfo;
  /** Where the statement sits in its PL/pgSQL body: in a loop, in a block with an EXCEPTION clause, in a handler. */
  plpgsql?: PlpgsqlPlace;
  /** COMMIT AND CHAIN / ROLLBACK AND CHAIN: the transaction ends and a new one opens at once. */
  chain?: boolean;
  /** Calls of routines that are not built-ins (set_config, now, count, ... are left out). */
  calls?: RoutineCall[];
  /** Column defaults that read a setting (CREATE TABLE, ALTER TABLE ... ADD COLUMN / SET DEFAULT). */
  settingDefaults?: SettingDefault[];
  /** ALTER TABLE ... ALTER COLUMN ... SET NOT NULL: columns made NOT NULL after they were created. */
  notNullSet?: { table: string; column: string }[];
  /**
   * CREATE TABLE: the table and its column names (lower-cased), read for a queue's shape. `temporary`: a TEMP table
   * (also one CREATE TEMP TABLE ... AS makes, whose columns are not listed), the session's own rows.
   */
  createdTable?: { table: string; schema?: string; columns: string[]; temporary?: true };
  /** Set on statements built at run time by EXECUTE in PL/pgSQL (format(...), ||): read from the format string. */
  dynamic?: boolean;
  /** A SELECT without FROM of one value, now() plus an amount: in a SQL function's body, the function returns a time after now. */
  selectsNowPlus?: boolean;
  /** The definition itself: set on CREATE FUNCTION / PROCEDURE (and DO) statements. */
  defines?: RoutineInfo;
}

export interface PlpgsqlPlace {
  /** Inside a FOR/WHILE/LOOP body (`for job in select ... loop`); the loop's own query is not. */
  inLoop: boolean;
  /** Ids of the enclosing BEGIN ... EXCEPTION blocks whose protected part holds the statement, innermost last. */
  guardedBy: number[];
  /** Id of the BEGIN ... EXCEPTION block whose handler holds the statement. */
  handlerOf?: number;
  /**
   * Spans of earlier statements of the body that lock or write rows and took none on every path to this one: it
   * runs in their `IF NOT FOUND` branch, after `EXIT WHEN FOUND`, or in the ELSE of `IF FOUND THEN RETURN`
   * (src/sql/plpgsql-found.ts). A wait there holds none of their locks.
   */
  tookNothing?: Span[];
  /**
   * Tests of the routine's own parameters (never assigned in its body) that every enclosing `IF ... THEN` makes
   * before the statement runs (`IF p_lock_wait > 0 THEN`): it runs only for calls whose arguments pass them all.
   */
  onlyIf?: ParameterTest[];
  /**
   * The next statement of its list is `RAISE EXCEPTION` (an ERROR): the transaction, or the block's subtransaction,
   * is rolled back, and with it what the statement did to the session's settings.
   */
  raisesNext?: boolean;
}

/** `IF name > 0`, `IF name >= 1`, `IF name <> 0`, `IF name IS NOT NULL`, `IF name` (a boolean). */
export interface ParameterTest {
  parameter: string;
  test: '>' | '>=' | '<>' | 'is not null' | 'is true';
  than?: number;
}

export interface RoutineInfo {
  name: string;
  kind: 'function' | 'procedure' | 'do';
  language: string;
  /** Parameter names in order, lower-cased ('' for an unnamed one): $N in a SQL body is parameters[N-1]. */
  parameters?: string[];
  /** Default values of the parameters that have one, by position: literals only. */
  parameterDefaults?: (SettingValue | undefined)[];
  /** The CREATE statement, in the caller's text. */
  span?: Span;
}

/** What a transaction-control statement does to the session's transaction. */
export type TransactionEffect = 'opens' | 'ends' | 'ends-and-opens' | 'none';

/**
 * BEGIN opens; COMMIT, END, ROLLBACK, ABORT and PREPARE TRANSACTION end;
 * `... AND CHAIN` ends and opens a new one; SAVEPOINT, RELEASE and ROLLBACK
 * TO SAVEPOINT stay inside the transaction; COMMIT/ROLLBACK PREPARED act on
 * another (prepared) transaction.
 */
export function transactionEffect(statement: Pick<StatementFacts, 'transaction' | 'chain'>): TransactionEffect {
  switch (statement.transaction) {
    case 'begin':
      return 'opens';
    case 'commit':
    case 'rollback':
      return statement.chain ? 'ends-and-opens' : 'ends';
    case 'prepare':
      return 'ends';
    default:
      return 'none';
  }
}

export interface SqlSyntaxError {
  message: string;
  span: Span;
}

export interface SqlAnalysis {
  statements: StatementFacts[];
  errors: SqlSyntaxError[];
  /** Statements and routine bodies left unparsed because they can carry no fact (AnalyzeOptions.onlyFacts). */
  skipped?: number;
}
