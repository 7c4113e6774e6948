// What a driver module tells the flow engine about its API, in the model's
// terms. Data rows where the API is a list of names (makers, annotations,
// checkouts, SQL methods, transaction blocks); hooks where reading it needs
// code (the options of a pool, an ORM). The engine asks the registry
// (drivers/index.ts); it never names a driver.
import type { ConnectionConfig, Driver } from '../../../model/index.ts';
import type { BuiltStatement, ModelRef, SqlWriter } from '../orm/writer.ts';
import type { BoundValues, PlaceholderStyle } from './params.ts';
import type { HostText, SqlTextNames } from './strings.ts';
import type { Binding, ConfigEntry, Conn, ConnKind, EndKind, Factory, FileApi, Maker, PoolBinding, ReadContext, StaticBinding, WalkApi } from './types.ts';
import type { Arg, CallParts, Node } from '../syntax.ts';

/** A call that makes a pool or a connection: its qualified API path (or a pattern of paths). */
export interface MakerRow {
  path: string | RegExp;
  kind: Maker['kind'];
  /** The maker's name for the model; a pattern's last segment when not given. */
  name?: string;
}

/** A method of a pool (or engine) that checks a connection out of it. */
export interface CheckoutRow {
  method: string;
  origin: string;
  /** Its autocommit state, when not the pool's. */
  autocommit?: boolean;
  exitEnds?: EndKind;
}

/** A method whose `with` block is a transaction: `with conn.transaction():`. */
export interface TransactionBlockRow {
  method: string;
  /** Only in files that talk to this driver (a `begin()` means other things elsewhere). */
  onlyInItsFiles?: boolean;
  /** The form a finding names; else `with <receiver>.<method>()`. */
  form?: string;
  /** On a pool or factory, the checkout that opens it opens a new connection inside the transaction. */
  onNewConnection?: boolean;
  /** Also on a cursor: a transaction of the cursor's connection (aiopg's `cur.begin()`). */
  onCursor?: boolean;
}

/** A function that runs SQL on a cursor it is given: `execute_values(cur, sql, rows)`. */
export interface SqlFunctionRow {
  path: string;
  cursorArg: number;
  sqlArg: number;
  sqlKeyword: string;
  /** No cursor: the SQL runs on a connection of its own in a transaction (a Django migration's RunSQL, run by migrate). */
  ownTransaction?: boolean;
  /** Keywords that hold more SQL run the same way (RunSQL's reverse_sql, run by a rollback of the migration). */
  moreSqlKeywords?: readonly string[];
  /** The SQL may be a list or tuple of statements, each a string or a (sql, params) pair (RunSQL's list form). */
  sqlLists?: boolean;
}

/** A method that switches a connection's autocommit: `set_autocommit(True)`, `set_session(autocommit=True)`. */
export interface AutocommitSetterRow {
  method: string;
  /** The argument's keyword; else the first positional argument. */
  keyword?: string;
  /** What the argument means for autocommit when it is not a boolean (psycopg2's isolation levels); else True/False as written. */
  autocommitOf?: (argument: Node | undefined, text: string) => boolean | 'unknown';
}

export interface PythonDriver {
  readonly name: Driver;
  /**
   * A call of the driver's framework that reaches the outside world (Django's mail): `qualified` is the callee's
   * qualified name, `method` the method called, `madeBy` the qualified name of the call that made the receiver
   * (asked only for a method the driver knows: finding it reads the enclosing def).
   */
  sideEffect?(qualified: string | undefined, method: string | undefined, madeBy: () => string | undefined): string | undefined;
  /** Top-level modules whose import means a file talks to this driver... */
  readonly modules: readonly string[];
  /** ...unless it imports these drivers too (the registry's order settles the rest). */
  readonly unlessAlso?: readonly Driver[];
  /** False when importing its modules says nothing of the file's database (boto3 serves every AWS service): only its calls do. */
  readonly claimsFiles?: boolean;
  /** In a file that imports it, a parameter or attribute that runs SQL is such a connection. */
  readonly handedIn?: ConnKind;
  /** What calling one of its session factories gives. */
  readonly sessions?: ConnKind;

  // ---- pools and clients ----
  readonly makers?: readonly MakerRow[];
  readConfig?(call: Node, maker: Maker, ctx: ReadContext): ConfigEntry;
  /** After the file's callbacks were walked: what it prepares, from the entry and the project's pins. */
  finishConfig?(entry: ConfigEntry, file: string): void;
  /** Type annotations of parameters: a pool or a connection of this driver. */
  readonly annotations?: Readonly<Record<string, 'pool' | 'conn'>>;
  /** The config of a pool seen only as an annotated parameter, when the driver's defaults say something. */
  assumedPool?(at: Node): ConnectionConfig;
  /**
   * Its pools across the project (flow/project-pools.ts), for connections
   * handed in as annotated parameters: `mentions` picks the modules to read
   * for its makers; `elsewhere` is text of a module that gets them from code
   * that is no maker (a framework's extension, a maker from a config file), so
   * the makers read are not all.
   */
  readonly projectPools?: { mentions: RegExp; elsewhere?: RegExp };
  /** A call that is not a maker but makes something of this driver (a session factory, a session). */
  staticBinding?(file: FileApi, call: Node): StaticBinding | undefined;
  /** The same, made in a project module this file imports it from. */
  importedBinding?(source: ImportedSource, call: Node, qualified: string): StaticBinding | undefined;
  callBinding?(walk: WalkApi, call: Node): Binding | undefined;

  // ---- checkouts and methods that give a connection ----
  readonly checkouts?: readonly CheckoutRow[];
  /** Other methods of a pool binding (an engine's execution_options): undefined when not a binding. */
  poolMethod?(walk: WalkApi, pool: PoolBinding, method: string, call: CallParts): Binding | undefined;
  factoryMethod?(walk: WalkApi, factory: Factory, method: string, call: CallParts): Binding | undefined;
  /** An attribute of one of its objects that is another (Flask-SQLAlchemy's `db.session`, `db.engine`). */
  attribute?(walk: WalkApi, binding: Binding, attribute: string): Binding | undefined;
  /** A method of a connection that gives a binding (the connection itself, with options). */
  connectionMethod?(walk: WalkApi, conn: Conn, method: string, call: CallParts): Binding | undefined;

  // ---- SQL and transactions ----
  readonly sqlMethods?: {
    connection?: ReadonlySet<string>;
    cursor?: ReadonlySet<string>;
    /** Methods of the pool itself that run SQL on any of its connections, and whether that is in autocommit. */
    pool?: ReadonlySet<string>;
    poolAutocommit?: boolean;
  };
  /** Calls of its own on a pool (a Data API client's execute_statement with or without a transactionId): true when handled. */
  poolCall?(walk: WalkApi, node: Node, pool: PoolBinding, method: string, args: Arg[]): boolean;
  /** False when its connections run SQL only through cursors (psycopg2, Django). */
  runsSqlOnConnection?(conn: Conn): boolean;
  /** Calls of its own on a connection (SQLAlchemy's execute of builders, session.delete): true when handled, false when not SQL. */
  connectionCall?(walk: WalkApi, node: Node, conn: Conn, method: string, args: Arg[], via: 'conn' | 'cursor'): boolean | undefined;
  readonly controlMethods?: readonly string[];
  readonly autocommitSetters?: readonly AutocommitSetterRow[];
  /** Connection attributes the code sets (`conn.prepare_threshold = None`). */
  readonly connectionAttributes?: Readonly<Record<string, (walk: WalkApi, conn: Conn, value: Node) => void>>;
  readonly sqlFunctions?: readonly SqlFunctionRow[];
  readonly transactionBlocks?: readonly TransactionBlockRow[];
  /** A session's pending instance changes are written at commit, flush, its next query (SQLAlchemy's unit of work). */
  readonly unitOfWork?: boolean;
  placeholderStyle?(method: string, host: HostText): PlaceholderStyle | undefined;
  /** `valueOf`: the expression a name stands for (a local assigned once, a module constant). */
  boundValues?(args: Arg[], method: string, text: string, valueOf: (node: Node) => Node | undefined): BoundValues | undefined;
  /** It speaks PostgreSQL alone: SQL it is given that does not parse is a bug of the code. */
  readonly postgresOnly?: boolean;
  /** API paths that build SQL text (psycopg.sql's composables, SQLAlchemy's text()). */
  readonly sqlText?: { readonly [K in keyof SqlTextNames]?: readonly string[] };
  /** Module prefixes whose calls compose SQL or values, not the job's work. */
  readonly notWork?: readonly string[];
  /** Settings objects the framework reads from the deployment once, at start-up (Django's `django.conf.settings`). */
  readonly deploymentSettings?: readonly string[];
  /** The form of a connection's implicit transaction, for origins the driver names. */
  implicitForm?(conn: Omit<Conn, 'id' | 'implicitForm' | 'flow'>): string | undefined;

  // ---- ORM ----
  readonly orm?: DriverOrm;

  /** The per-file part, for files that import it. */
  forFile?(file: FileApi): FileDriver | undefined;
}

export interface DriverOrm {
  /** Instances are read with this ORM in every file that does not claim another one. */
  readonly byDefault?: boolean;
  claims?(file: FileApi): boolean;
  /** A query reading one row the code keeps: the statement and the connection it runs on. */
  readInstance(walk: WalkApi, expr: Node): { built: BuiltStatement; conn: Conn | undefined } | undefined;
  /**
   * An instance the code is handed rather than reads (`self` in a model's own
   * method, a parameter annotated with the model): the connection its save()
   * writes on, where the ORM knows it without the read (Django's default
   * connection). undefined where it does not (a session only its reader knows).
   */
  handedInstance?(walk: WalkApi): { conn: Conn | undefined } | undefined;
  /** Assigned attributes are written at save() (Django), else at the session's next flush. */
  readonly writesAtSave?: boolean;
  /** 'query' for the end of a query chain this ORM writes, 'step' for a call inside one, 'none' for neither (and no other ORM's). */
  chain?(walk: WalkApi, node: Node, root: Node, first: string, outer: boolean): 'query' | 'step' | 'none' | undefined;
  /** The end of a query chain: its SQL site. */
  query?(walk: WalkApi, node: Node): void;
  /** Other ORM calls (a manager's chain, instance.save()): true when handled. */
  call?(walk: WalkApi, node: Node): boolean;
  /** Writes a query the code builds as a value (a scalar subquery) into SQL being written: false when it is none. */
  subquery?(w: SqlWriter, node: Node): boolean;
  /** A table the code holds in a name, an attribute or a parameter that no model names (`self._table`, a Core Table handed in). */
  heldModel?(walk: WalkApi, node: Node, named: (n: Node) => ModelRef | undefined): ModelRef | undefined;
  /** A query kept unevaluated in a name (a Django queryset): it runs, and takes its locks, where the code iterates it. */
  lazyQuery?(walk: WalkApi, value: Node): boolean;
}

/** Per-file hooks of a driver. */
export interface FileDriver {
  /** After the file's static bindings: read listeners that add callbacks to its configs. */
  prepare?(): void;
  /** After the pools' callbacks: walk the driver's own callbacks (signals). */
  walkCallbacks?(): void;
  finish?(): void;
  /** A connection an expression names (`django.db.connection`). */
  connectionOf?(expr: Node, walk: WalkApi): Conn | undefined;
  /** A `with` item that is a transaction on a connection (`transaction.atomic()`). */
  transactionBlock?(expr: Node, walk: WalkApi): { conn: Conn; form: string } | undefined;
  /** A method on a receiver the walk cannot see (`with pool.connection()` on a pool made elsewhere). */
  unseenReceiverMethod?(walk: WalkApi, method: string, entering: boolean): Binding | undefined;
  /**
   * The thread's connections (Conn.threadBound) in a transaction the walk's def opened by its decorator
   * (`@transaction.atomic`), put in the walk's env before it hands them to a function it walks in place.
   */
  threadTransactions?(walk: WalkApi): void;
}

/** A project module another file imports a binding from. */
export interface ImportedSource {
  text: string;
  qualify(node: Node): string | undefined;
  /** The binding of another name of that module (a session factory's engine). */
  bindingOf(name: string): StaticBinding | undefined;
  /** The module binds this name (a constant or an import). */
  hasName(name: string): boolean;
}
