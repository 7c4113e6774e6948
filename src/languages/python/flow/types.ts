// What the flow engine and the driver modules share: connection configs as
// the code builds them, the values a walk binds names to, and the interface
// a driver module fills in (driver-api.ts). Types only: nothing here
// names a driver.
import type { ConnectionConfig, ConnectionUse, Driver, FileModel, ResetCallback, Span } from '../../../model/index.ts';
import type { Arg, Node } from '../syntax.ts';
import type { Imports } from './imports.ts';
import type { ModuleSource } from './project.ts';

/** What a call to a pool class or a connect function makes. */
export interface Maker {
  kind: 'pool' | 'connect';
  driver: Driver;
  /** The callee as the driver names it (`ConnectionPool`, `create_engine`). */
  name: string;
}

/** When the driver starts preparing a query, as the code sets it: a count, off (null), the default, or unreadable. */
export type Threshold = { kind: 'default' } | { kind: 'value'; value: number | null; where: string } | { kind: 'unknown'; why: string };

export interface ConfigEntry {
  config: ConnectionConfig;
  maker: Maker;
  threshold: Threshold;
  /** Where the code turns prepared statements off after connecting (in a configure callback, on the connection). */
  thresholdOff?: string;
  /** Callback arguments (reset=, configure=, check=, listeners) to follow to their definitions. */
  callbackArgs: CallbackArg[];
  /** The DBAPI under an engine (SQLAlchemy's URL): what its event listeners' connections are. */
  dbapi?: Driver;
}

export interface CallbackArg {
  role: ResetCallback['role'];
  /** The callback expression, or the decorated def of a listener. */
  node: Node;
  /** Which positional parameter receives the connection (0 unless said). */
  connParam?: number;
  /** The connection it receives, when not the pool's own (an engine listener's DBAPI connection). */
  connDriver?: Driver;
  /** Its autocommit state when the callback starts, when not the pool's. */
  autocommit?: boolean | 'unknown';
  /** It runs inside a transaction that is already open: the form of that transaction. */
  inTransaction?: string;
  /** What the callback is, for the model's name: the event. */
  event?: string;
  /**
   * The pool runs it in a worker thread or task of its own (psycopg_pool opens every connection there), not in the
   * job that asked for the connection: a ContextVar or thread-local it reads holds the worker's value, no job's.
   */
  inPoolWorker?: boolean;
}

/** What reading a maker's arguments needs from the file it is in. */
export interface ReadContext {
  text: string;
  /** An expression a name stands for (module constant or single local assignment). */
  valueOf(node: Node): Node | undefined;
  qualify(node: Node): string | undefined;
  /** A class of this file that mentions prepare_threshold (a connection_class we cannot vouch for). */
  classSetsThreshold(node: Node): boolean;
}

export interface Flow {
  autocommit: boolean | 'unknown';
  /** Which implicit transaction: bumped at every commit or rollback. */
  serial: number;
  /** A statement ran since the last commit or rollback, so a transaction is open (autocommit off). */
  dirty: boolean | 'unknown';
  /** The statement that opened the open transaction. */
  dirtyAt?: Span;
  /** Open transaction blocks (and BEGIN sent in autocommit), outermost first. */
  explicit: { id: string; form: string }[];
  /** After paths that disagree on the implicit transaction (an except handler): the serials it may be. */
  maybe?: number[];
}

/**
 * Where a connection came from. The engine's own: 'connect' (a connect
 * call), 'parameter' (handed in, origin unknown), 'callback' (a pool's
 * callback gets it). Driver modules add theirs ('pool.connection',
 * 'sa.session', 'acquire', ...).
 */
export type Origin = string;

/** How a transaction left open ends where the code ends it implicitly: a `with` block's exit, close(). */
export type EndKind = 'commit' | 'rollback' | 'unknown';

export interface Conn {
  /** Unique within the file. */
  id: string;
  driver: Driver;
  use: ConnectionUse;
  entry?: ConfigEntry;
  origin: Origin;
  /** `inPoolWorker`: the pool runs the callback in a worker of its own, not in the job that asked for a connection. */
  callback?: { configId: string; role: ResetCallback['role']; inPoolWorker?: boolean };
  flow: Flow;
  /** The form of its implicit transaction, as a finding names it (the driver module says). */
  implicitForm: string;
  /** What leaving `with <this connection>` does to an open transaction: psycopg commits, SQLAlchemy rolls back. */
  exitEnds?: EndKind;
  /** A connection or Session other code uses too (Django's, a scoped_session, a module's): any call may commit it. */
  shared?: boolean;
  /**
   * The thread's connection, which every function of the project reaches by name (Django's `connection`):
   * a function called inside its transaction runs its SQL on it, in that transaction, without being handed it.
   */
  threadBound?: boolean;
}

/** What a connection of some origin is: the origin, and what leaving `with` it does. */
export interface ConnKind {
  origin: Origin;
  exitEnds?: EndKind;
}

/** What a name holds in a walk. */
export type Binding =
  /** A pool, or an engine (`autocommit`: an engine's execution_options(isolation_level=...)). */
  | { kind: 'pool'; entry?: ConfigEntry; driver: Driver; autocommit?: boolean | 'unknown' }
  | { kind: 'conn'; conn: Conn }
  | { kind: 'cursor'; conn: Conn }
  /** A session factory (calling it gives a session), or a scoped one (also a session itself). */
  | { kind: 'factory'; entry?: ConfigEntry; scoped: boolean; driver: Driver };

export type Factory = Extract<Binding, { kind: 'factory' }>;
export type PoolBinding = Extract<Binding, { kind: 'pool' }>;

/** A module-level or class-level name bound to a pool or a connection made by a call. */
export type StaticBinding =
  | { kind: 'pool'; entry: ConfigEntry }
  | { kind: 'connect'; entry: ConfigEntry }
  | { kind: 'factory'; entry?: ConfigEntry; scoped: boolean; driver: Driver }
  /** `session = Session(engine)` at module level: one session for every job. */
  | { kind: 'session'; entry?: ConfigEntry; driver: Driver };

/** The file being read, as driver modules see it. */
export interface FileApi {
  readonly model: FileModel;
  /** Records files besides this one the analysis read, each once: a cached analysis holds while none changes. */
  dependOn(paths: readonly string[]): void;
  readonly text: string;
  readonly tree: { topNode: Node };
  readonly imports: Imports;
  readonly constants: Map<string, Node>;
  readonly entries: Map<number, ConfigEntry>;
  readonly globals: Map<string, StaticBinding>;
  readonly readContext: ReadContext;
  /** The driver the file talks to (by its imports), or 'unknown'. */
  readonly driverOfFile: Driver;
  qualify(node: Node): string | undefined;
  /** A dotted name through the file's imports. */
  qualifyName(name: string): string | undefined;
  /** What a name imported from a project module is bound to there. */
  importedStatic(name: string): StaticBinding | undefined;
  resolveDef(expr: Node, at: Node): Node | undefined;
  /** The value of a name assigned once in the def that contains `node`. */
  localValue(node: Node): Node | undefined;
  /** The expression `x.name` stands for (a class attribute, an attribute set once, a property's one return). */
  memberValue(node: Node): Node | undefined;
  /** A project module this file imports from, parsed; its path becomes a dependency. */
  projectModule(module: string, level: number, from?: string): ModuleSource | undefined;
  /** A new connection, numbered within the file. */
  newConnection(props: Omit<Conn, 'id' | 'implicitForm'>): Conn;
  /** Walks a callback def with the connection it is given (as parameter number `connParam`). */
  walkCallback(def: Node, conn: Conn, connParam: number, name: string): void;
  /** Per-file state of a driver module (made once per file). */
  driverState<T>(driver: Driver, make: () => T): T;
}

/** A walk over one body, as driver modules see it. */
export interface WalkApi {
  readonly file: FileApi;
  readonly text: string;
  readonly env: Map<string, unknown>;
  readonly conns: Set<Conn>;
  /** The connections of the `with` blocks open here, outermost first. */
  readonly contexts: readonly Conn[];
  readonly info: { def?: Node; name?: string };
  lookup(name: string): Binding | undefined;
  receiver(node: Node, create: boolean): Binding | undefined;
  valueBinding(node: Node, entering: boolean): Binding | undefined;
  newConn(driver: Driver, use: ConnectionUse, origin: Origin, entry?: ConfigEntry, autocommit?: boolean | 'unknown', exitEnds?: EndKind): Conn;
  /** The session a factory gives here: a new one, or the scoped one of this walk. */
  sessionOf(factory: { entry?: ConfigEntry; scoped: boolean; driver: Driver }): Conn;
  /** A SQL site for SQL written in the code; returns its statements. */
  sqlSite(sqlNode: Node | undefined, conn: Conn | undefined, args?: Arg[], method?: string): { transaction?: string }[] | undefined;
  /** A SQL site for SQL the front end wrote for ORM code. */
  builtSite(built: import('../orm/writer.ts').BuiltStatement, conn: Conn | undefined): { transaction?: string }[];
  /** Transaction control sent as SQL, then each statement's own effect on the transaction. */
  afterStatements(conn: Conn, statements: { transaction?: string }[] | undefined, at: Span): void;
  /** Writes the pending changes of instances read on this session (a unit of work). */
  flushInstances(conn: Conn): void;
  instanceOf(node: Node): import('../orm/writer.ts').ModelRef | undefined;
  ormContext(): import('../orm/writer.ts').OrmContext;
  /** A callback walk: the driver turned statement preparing off in it. */
  preparedOff?: string;
}

