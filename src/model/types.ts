// The language-neutral worker model. Front ends (src/languages/*) turn a
// source file into a FileModel; rules read it and never see syntax trees.
import type { Span, SqlAnalysis, StatementFacts } from '../sql/index.ts';

export type { Span };
export type Language = 'sql' | 'typescript' | 'python';

/** Which transaction a SQL site runs in. */
export type Scope =
  | {
      kind: 'transaction';
      /** Identifies one transaction: sites with the same id run in the same one. */
      id: string;
      /** How the transaction is opened, e.g. `BEGIN`, `sql.begin`, psycopg's implicit transaction. */
      form: string;
      /** True where the transaction rolls back when the job fails (the job's work is inside it). */
      rollsBackOnError: boolean;
      /**
       * Set where the front end saw the transaction end by rollback on every
       * path and commit on none (SQLAlchemy's `with engine.connect()` left
       * without commit(), whose connection the pool rolls back): what it
       * wrote, session settings included, is undone at its end.
       */
      neverCommits?: boolean;
    }
  | { kind: 'autocommit' }
  /** Top level of a .sql file: the tool that runs it decides. */
  | { kind: 'script' }
  | { kind: 'unknown' };

/** Which connection a SQL site runs on. */
export type ConnectionUse =
  /** A call on a pool: each call may take any connection of the pool. */
  | { kind: 'pool'; configId?: string }
  /** A connection checked out of a pool (pool.connect(), psycopg `with pool.connection()`). */
  | { kind: 'pooled-client'; configId?: string }
  /** A connection the code opened itself. */
  | { kind: 'dedicated'; configId?: string }
  | { kind: 'unknown'; configId?: string };

export type Driver =
  | 'pg'
  | 'postgres.js'
  | 'kysely'
  | 'knex'
  | 'drizzle'
  | 'slonik'
  | 'pg-promise'
  | 'typeorm'
  | 'prisma'
  | 'sequelize'
  | 'bun'
  | 'neon'
  | 'vercel-postgres'
  | 'supabase'
  | 'psycopg'
  | 'psycopg2'
  | 'asyncpg'
  | 'aiopg'
  | 'databases'
  | 'sqlalchemy'
  | 'django'
  | 'rds-data'
  | 'sql'
  | 'unknown';

/**
 * A host value bound to a placeholder of a site's SQL, where the front end
 * can read it: a literal of the values array/tuple/dict, a parameter of the
 * enclosing host function (its callers choose the value), a member of an
 * imported constant whose value the front end cannot read (`STATES.RUNNING`
 * from a module outside the scanned files, a package's enum: only its name
 * is known), or unknown.
 */
export type HostParam =
  | { kind: 'literal'; value: string | number | boolean | null }
  /** A parameter of the enclosing function; `default` is its literal default value, when it has one (`minutes=LEASE_MINUTES`). */
  | { kind: 'caller-parameter'; name: string; default?: string | number | boolean | null }
  | { kind: 'named'; name: string }
  /** A time the code reads from the clock (`new Date(Date.now() - 5 * 60 * 1000)`): that many seconds from now. */
  | { kind: 'clock'; seconds: number }
  | { kind: 'unknown' };

/**
 * A checkout hook (SQLAlchemy after_begin/checkout, node-postgres pool.on('connect'|'acquire')) has a path that does
 * not reach this site: an earlier return, a condition around it, an except that swallows its error. On that path the
 * connection keeps whatever the previous job's hook wrote.
 */
export interface HookSkip {
  /** Host span of what skips the site (the return, the if, the except). */
  span: Span;
  /** For messages: 'the return on line 12'. */
  how: string;
  /** Settings the hook writes (any value) or clears where the site is skipped, or before it: `*` for DISCARD ALL, `*reset-all` for RESET ALL. */
  writtenElsewhere: string[];
}

export interface SqlSite {
  /** Host span of the SQL text (the string or template) or of the call. */
  span: Span;
  /** Facts of every statement, with spans in the host file. */
  analysis: SqlAnalysis;
  scope: Scope;
  connection: ConnectionUse;
  driver: Driver;
  /**
   * Set when the site runs inside a pool callback: 'configure' runs once per new
   * connection (psycopg_pool configure=, pg-pool onConnect, Knex afterCreate,
   * SQLAlchemy "connect", asyncpg init=), 'checkout' at every checkout
   * (SQLAlchemy "checkout", asyncpg setup=), 'reset' when it is returned
   * (psycopg_pool reset=, SQLAlchemy "checkin"/"reset", asyncpg reset=).
   */
  callback?: { configId: string; role: 'reset' | 'configure' | 'check' | 'checkout'; skipped?: HookSkip };
  /** Values bound to the SQL's placeholders: params[0] is $1 (or the first %s / %(name)s in order). */
  params?: HostParam[];
  /**
   * Placeholders ($N) the host filled with a value of the deployment (the environment, a constant, a helper computing
   * from only these): the same for every job, so no tenant's.
   */
  deploymentValues?: number[];
  /**
   * Placeholders ($N) filled with a value of the current request or job (a ContextVar, a thread-local, the
   * framework's request object), where the front end reads them: in hooks run once per new connection only.
   */
  requestValues?: number[];
  /**
   * The site runs once, when the migration that holds it is applied (a top-level statement or DO block of a migration
   * file): a one-off fix of the rows there at that moment, never a sweep that runs again.
   */
  runsOnce?: boolean;
  /** Name of the enclosing function in the host code, for messages. */
  functionName?: string;
  /** The site is a named (server-side prepared) statement, e.g. node-postgres { name, text }. */
  preparedName?: string;
  /**
   * The site is in a function passed to a call of a project function and runs
   * on one of that callback's parameters: whatever the project function gives
   * its callback there (its checked-out client, its transaction) runs it.
   */
  runsInCallback?: { function: FunctionRef; argument: number; parameter: number };
  /**
   * The site runs on a connection parameter of the function it is in, in the
   * state the caller handed it (this function has not moved it): whatever
   * transaction the callers' connection is in at their calls (`connectionCalls`).
   */
  runsOnParameter?: { function: FunctionRef; parameter: number };
  /** A site of `FileModel.calledSites`: the call of this file that runs it. */
  calledAt?: Span;
  /**
   * The site's connection is not known here (a parameter without a driver's
   * type): it is the one the callers hand in as this parameter, whatever its
   * transaction state (`handedValues` say which connections they hand).
   */
  clientParameter?: ParameterRef;
  /**
   * Settings the `finally` of a try the site is inside resets on the site's
   * own connection, unconditionally and before releasing it (`RESET x`, or
   * '*' for RESET ALL / DISCARD ALL): a session write here is undone on every
   * path before the next job can check the connection out. `call:<routine>`:
   * a routine the finally calls there, whose clears the rules join from the
   * .sql files.
   */
  resetInFinally?: string[];
}

/** A parameter of a project function, or a property of it (`{ client }` of an options object). */
export interface ParameterRef {
  function: FunctionRef;
  parameter: number;
  property?: string;
}

/**
 * What a call hands a parameter of the function it calls (TS/JS): which
 * connection, not its transaction state (`connectionCalls` carry that). A
 * connection of a kind, the caller's own parameter (its callers say), a
 * function of the project (a callback: a call of the parameter holding it
 * runs it), or a value the front end cannot tell.
 */
export interface HandedValue {
  /** The function called: a project function, or whatever function a parameter holds (`run(client)`, `run` a callback parameter). */
  to: { function: FunctionRef } | { heldBy: ParameterRef };
  argument: number;
  /** The value is this property of an object literal argument (`migrate({ client })`). */
  property?: string;
  /** A spread argument: it may be any parameter from `argument` on. */
  rest?: true;
  value:
    | { kind: 'connection'; use: ConnectionUse['kind'] }
    | { kind: 'parameter'; of: ParameterRef }
    | { kind: 'function'; function: FunctionRef }
    | { kind: 'unknown' };
}

/** A function of the project: the module that declares it and where its node starts there. */
export interface FunctionRef {
  module: string;
  at: number;
}

/**
 * A function calling one of its own parameters (the callback its callers pass)
 * with a connection or transaction handle as one argument: what the callback's
 * SQL on that argument runs in.
 */
export interface CallbackCall {
  function: FunctionRef;
  parameter: number;
  /** The argument that is the connection or transaction handle. */
  connectionArgument: number;
  span: Span;
  /** The transaction the handle is in at the call. */
  scope: Scope;
  /** The driver of the handle, where the front end knows it. */
  driver?: Driver;
}

/**
 * A call of a project function that hands it a connection or transaction
 * handle as one argument (TS/JS): the state the callee's parameter arrives
 * in, or where that state comes from when this walk cannot tell it.
 */
export interface ConnectionCall {
  function: FunctionRef;
  argument: number;
  span: Span;
  /** The transaction the handed connection is in at the call (unknown: see the `from` fields). */
  scope: Scope;
  /** The handed connection is a parameter of the calling function, as its own callers hand it in. */
  fromParameter?: { function: FunctionRef; parameter: number };
  /** The handed connection is a parameter of a callback a project function runs (as `runsInCallback`). */
  fromCallback?: { function: FunctionRef; argument: number; parameter: number };
}

export interface ResetCallback {
  role: 'reset' | 'configure' | 'check' | 'checkout';
  name: string;
  span: Span;
  /** The callback switches the connection to autocommit (or commits) before it returns. */
  endsOutsideTransaction: boolean | 'unknown';
  /** The callback was followed to its definition in this file. */
  resolved: boolean;
  /** Where the callback opens the transaction it can return with (the first statement since the last commit). */
  leavesTransactionAt?: Span;
}

export interface ConnectionConfig {
  id: string;
  driver: Driver;
  kind: 'pool' | 'client';
  span: Span;
  /**
   * Whether the driver caches server-side prepared statements on this
   * connection: psycopg's prepare_threshold (default 5), node-postgres
   * named queries, postgres.js `prepare`.
   */
  preparedStatements: 'yes' | 'no' | 'unknown';
  /** Why preparedStatements has that value, for messages. */
  preparedReason?: string;
  autocommit: boolean | 'unknown';
  /**
   * Whether one job's session state can reach another job through this pool
   * or client: 'shared' (the default: a long-lived pool serving every tenant),
   * 'single-connection' (a one-connection script or migration client, e.g.
   * postgres(url, { max: 1 }) used by a script), 'per-tenant' (a pool built for
   * one tenant and never shared), 'no-reuse' (SQLAlchemy NullPool, a client
   * closed after one job). Undefined: not known, read as 'shared'.
   */
  reuse?: 'shared' | 'single-connection' | 'per-tenant' | 'no-reuse';
  /**
   * Absolute path of the module that makes this pool or client, when it is not
   * the model's own file (`import { pool } from './db'`): `span` is then where
   * it enters this file (the import), not where it is made.
   */
  definedIn?: string;
  /** The reset run on every return, where it is known: the driver's own (asyncpg's RESET ALL ..., Slonik's DISCARD ALL), or a reset callback's unconditional DISCARD ALL / RESET ALL. */
  driverReset?: { statements: string[]; reason: string };
  callbacks: ResetCallback[];
  /**
   * Statements after which the driver drops its own prepared-statement cache
   * in time, so they do not break it (psycopg >= 3.3.5 with prepare_threshold=0
   * and DISCARD ALL).
   */
  driverClearsCache?: ('DISCARD ALL' | 'DEALLOCATE ALL')[];
}

/** node-postgres `client.release()` reached with a transaction possibly open. */
export interface ReleaseSite {
  span: Span;
  /** The BEGIN this release can be reached from without COMMIT or ROLLBACK, if any. */
  openTransaction?: { beginSpan: Span; reason: 'error-path' | 'no-end' };
  /**
   * The release can be reached on the error path of a call that was handed the
   * client outside any transaction (`return await fn(client)` in a `try` whose
   * `finally` releases), with no COMMIT or ROLLBACK between: the client goes
   * back in whatever transaction that call's error leaves it (see `OpenOnThrow`).
   */
  afterCall?: CallHanding;
}

/** A call that hands a connection on: to a project function, or to the function a parameter holds (a callback), as one argument. */
export interface CallHanding {
  to: HandedValue['to'];
  argument: number;
  /** The connection is that property of an object literal argument (`runJob({ client, job })`). */
  property?: string;
  span: Span;
}

/**
 * A function that may throw with the connection it was handed as `parameter`
 * inside a transaction (TS/JS): one a BEGIN of its own opened (`begin`), or the
 * one the error of a call it hands the connection to leaves open (`via`, a call
 * no try of the function is around). What the release rule joins to a
 * wrapper's `afterCall`.
 */
export interface OpenOnThrow {
  function: FunctionRef;
  parameter: number;
  /** The connection is that property of the parameter (`({ client }) => ...`, `options.client`). */
  property?: string;
  begin?: Span;
  via?: CallHanding;
}

/** A one-transaction job handler: what the rules of queue design look at. */
export interface JobTransaction {
  scopeId: string;
  span: Span;
  /**
   * The transaction has a handler that records the failure where the job's
   * rollback cannot take it back: in a separate transaction, or in the job's
   * own when the handler goes on and that transaction commits.
   */
  failureCountedOutside: boolean;
  /**
   * A handler of the job's try counts the failure on the claim's own
   * connection while the claim's transaction may still be open (before its
   * ROLLBACK): the count rolls back with the job, or fails in the aborted
   * transaction. The span of that write.
   */
  failureCountedInside?: Span;
  /**
   * That handler goes on with the claim's transaction open (no throw, no
   * ROLLBACK), and the job's work ran SQL on it: no ROLLBACK takes the count
   * back, but a failure of the work's SQL aborts the transaction, the count
   * fails, and the COMMIT that ends it rolls back.
   */
  failureCountedGoesOn?: boolean;
}

/** An outside-world call (HTTP, mail, broker, sleep) and the transaction it happens in. */
export interface SideEffectCall {
  span: Span;
  callee: string;
  scope: Scope;
  /** A project function that calls out, not the call itself: the chain of calls from the callee (first) to the outside world. */
  through?: string[];
  /**
   * A helper of the file walked in place of the call (`self._batch(conn)`): its def's extent and where in it the
   * call out is. Its own statements run before the call out when they come before that point, wherever the def is.
   */
  inHelper?: { from: number; to: number; at: number };
  /** Made in a project function of the file walked at this call, in the caller's transaction (TS/JS): where it runs in that transaction's order. */
  calledAt?: Span;
}

/**
 * A table as a live database's catalog describes it. Only `pgq-audit db`
 * fills it: no SQL text says who owns a table or whether a role bypasses
 * row level security.
 */
export interface CatalogTable {
  /** schema.table, as the catalog names it. */
  name: string;
  rowSecurity: boolean;
  forceRowSecurity: boolean;
  owner: string;
  /** The table's policies, with the settings each reads (as the SQL analyzer read their USING and WITH CHECK). */
  policies: { name: string; settingsRead: string[] }[];
  /**
   * Set when the role the app runs as (`pgq-audit db --role`) has the owner's
   * privileges: it is the owner, or a member of the owner role that inherits
   * them (`via` names that role). PostgreSQL applies no policy to the owner
   * unless row level security is forced.
   */
  ownedByAppRole?: { role: string; via?: string };
  /** Where the finding goes in the object's text. */
  span: Span;
}

/** The role the app runs as (`pgq-audit db --role`), as the catalog describes it. */
export interface CatalogRole {
  name: string;
  superuser: boolean;
  bypassRls: boolean;
  /** Tables with row level security enabled, with their policies and the settings each reads. */
  rlsTables: { name: string; policies: { name: string; settingsRead: string[] }[] }[];
  span: Span;
}

export interface CatalogFacts {
  tables: CatalogTable[];
  roles: CatalogRole[];
}

export interface FileModel {
  file: string;
  language: Language;
  text: string;
  sites: SqlSite[];
  /**
   * SQL a project function sends on the transaction a call of this file hands it (TS/JS; Python: a
   * function of another module walked at the call with the caller's connection), as it runs there: in
   * that transaction's scope, at `calledAt` in its order (spans of another module's SQL are the call's). The function's own site, in whatever state its callers hand it, is in `sites` of its
   * module: the rules that join what one transaction does (its claim, its count, its locks) read these
   * too, the others read each statement once.
   */
  calledSites?: SqlSite[];
  connections: ConnectionConfig[];
  releases: ReleaseSite[];
  jobTransactions: JobTransaction[];
  sideEffects: SideEffectCall[];
  /** Inline suppression comments (pgq-audit-ignore-next-line), collected by the front end. */
  comments: CommentDirective[];
  /** Set when the file could not be parsed at all: one fatal diagnostic, no rules run. */
  fatal?: { message: string; span: Span };
  /** Set when the front end chose not to analyse the file (a .sql file that is not PostgreSQL, Python 2): one warning, no rules run. */
  skipped?: { message: string; span: Span; messageId?: 'not-postgresql' | 'not-python3' };
  /** Statements in a newer PostgreSQL's syntax than the parser reads (valid where the file runs): one note, not a parse error. */
  notRead?: { message: string; span: Span };
  /** Statements of the file's own SQL that did not parse (the others are still analysed). */
  sqlErrors: { message: string; span: Span }[];
  /** Said after the parse error of a file: what the file was read as, and how to leave it out. */
  parseErrorHint?: string;
  /**
   * Other project files the front end read to build this model (absolute
   * paths, sorted): the TS/JS or Python module an imported pool or client is
   * defined in, Django's settings.py. A cached model holds only while they
   * are unchanged too.
   */
  dependencies?: string[];
  /** Catalog facts of a database object (pgq-audit db only). */
  catalog?: CatalogFacts;
  /** Calls of a function's own callback parameter with a connection (TS/JS). */
  callbackCalls?: CallbackCall[];
  /** Calls of project functions that hand them a connection (TS/JS). */
  connectionCalls?: ConnectionCall[];
  /** What calls of project functions, and of functions parameters hold, hand their parameters (TS/JS). */
  handedValues?: HandedValue[];
  /** Project functions passed to calls the front end cannot follow: they are called with arguments it does not see (TS/JS). */
  escapedFunctions?: FunctionRef[];
  /** Functions that may throw with a connection they were handed still in a transaction (TS/JS). */
  openOnThrow?: OpenOnThrow[];
}

export interface CommentDirective {
  /** Host span of the comment. */
  span: Span;
  text: string;
}

export function emptyFileModel(file: string, language: Language, text: string): FileModel {
  return { file, language, text, sites: [], connections: [], releases: [], jobTransactions: [], sideEffects: [], comments: [], sqlErrors: [] };
}

/** Every statement of every site, with the site it belongs to. */
export function* statementsOf(model: FileModel): Generator<{ site: SqlSite; statement: StatementFacts }> {
  for (const site of model.sites) for (const statement of site.analysis.statements) yield { site, statement };
}
