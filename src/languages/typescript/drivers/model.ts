// What a driver module says about its library, in the flow engine's terms
// (flow/types.ts). The engine asks the module of a value's driver (a pool's,
// a connection's, a maker's) what a member, a method call or a `new` of it
// gives; it asks every module in turn for the calls any receiver may make
// (a transaction callback, a query method, a tagged template). Fields are
// data where the library's API is a table of names, functions where it needs
// a look at the call.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver, Span } from '../../../model/index.ts';
import type { PlaceholderStyle } from '../../../sql/index.ts';
import type { ValuesSource } from '../params.ts';
import type { Call, Node } from '../syntax.ts';
import type { BuilderHost, ChainLink, ChainReader, RootOf } from '../builder-sql.ts';
import type { Bound } from '../flow/receivers.ts';
import type { ConfigEntry, Conn, Imports, PoolHook, QueryCall, TableValue, Tx, TypeMeaning, Value } from '../flow/types.ts';

/** What a driver module may ask of the walk at the call it reads. */
export interface DriverContext {
  /** What an expression holds. */
  value(node: Node | null | undefined): Value | undefined;
  /** A connection made now, outside any transaction. */
  checkout(driver: Driver, use: Conn['use'], origin: Conn['origin'], configId?: string): Value;
  newConn(driver: Driver, use: Conn['use'], origin: Conn['origin'], configId?: string): Conn;
  /** `conn` enters the transaction `at` opens (BEGIN, startTransaction()). */
  begin(conn: Conn, at: Node, form: string): void;
  /** `conn` is outside any transaction again (COMMIT, ROLLBACK, a release). */
  end(conn: Conn): void;
  /** `conn` goes back to its pool here (a release site, with the transaction it may leave open). */
  release(conn: Conn, call: Call): void;
  /** One Tx per place that opens it. */
  txAt(key: string, kind: Tx['kind'], form: string, at: Span): Tx;
  /** The config of the pool an ORM is made over: `drizzle(pool)`, `{ client: pool }`, `{ adapter }`. */
  wrappedPool(args: readonly TSESTree.CallExpressionArgument[]): string | undefined;
  /** The config made at `node` (once per node). */
  config(node: Node, driver: Driver, kind: 'pool' | 'client', args: readonly TSESTree.CallExpressionArgument[]): ConfigEntry;
  /** A node read as part of a query here: not a query of its own. */
  consume(node: Node): void;
  /** A table declared in this file at `node`. */
  addTable(node: Node, table: TableValue): void;
  /** The table declared around `node` (a policy in a table's extra config). */
  tableAround(node: Node): TableValue | undefined;
  /** The call runs when the code awaits or returns it (a builder chain sends its query then). */
  awaited(node: Node): boolean;
  /**
   * `node` is a name imported from a module the walk cannot read (a package
   * that is not a driver, a workspace package, a file outside the scan): a
   * value made when that module loaded, before any job, so not a transaction
   * or a connection a job checked out.
   */
  importedUnread(node: Node): boolean;
  /**
   * `this.x`, a constructor parameter a dependency-injection container fills
   * (the class or the parameter is decorated): made when the container
   * starts, before any job, so not a transaction or a connection a job
   * checked out.
   */
  injected(node: Node): boolean;
  /**
   * The transaction callback `at` runs in, when the call that opened it was
   * sent on `receiver` itself, a name bound outside the callback
   * (`db.transaction(async (tx) => { await db.execute(...) })`): that call's
   * method and how the receiver's name is bound. Only calls a driver module
   * reads as a transaction callback.
   */
  openerAround(receiver: Node, at: Node): { method: string; bound: Bound } | undefined;
  /**
   * `node` names a variable of the walked function that still holds its empty
   * start (declared without a value, or as undefined/null/false) on every path
   * here: only functions nested in it assign it (an event handler, which may
   * never run).
   */
  unsetHere(node: Node): boolean;
  readonly imports: Imports;
  /** The driver of names we cannot resolve: the file's only driver, if it imports one. */
  readonly fileDriver: Driver;
  /** The file's text. */
  readonly text: string;
  /** A call's SQL text argument (a string, a template, a name, a query config object). */
  textArg(arg: Node, on: Value | undefined, driver: Driver, placeholders: PlaceholderStyle, call: Call): QueryCall;
  /** A call's tagged-template argument: its template is the SQL. */
  taggedArg(tagged: TSESTree.TaggedTemplateExpression, on: Value | undefined, driver: Driver, call: Call): QueryCall;
}

/** A method call that may send SQL, as a query row sees it. */
export interface QueryInput {
  call: Call;
  method: string;
  /** The receiver: `client` of `client.query(...)`. */
  object: Node;
  arg0: Node | undefined;
  /** What the receiver holds, and its driver. */
  on: Value | undefined;
  onDriver: Driver | undefined;
  /** The receiver's driver, or the file's. */
  driver: Driver;
  ctx: DriverContext;
}

/** Calls that send SQL: `methods` the method names ('*' any), `read` the query or undefined. */
export interface QueryRow {
  methods: ReadonlySet<string> | '*';
  /** Read before the call's text argument is required (`sql`...`.execute(db)`). */
  withoutText?: boolean;
  read(q: QueryInput): QueryCall | undefined;
}

/** A call that takes a callback the driver runs on a connection or in a transaction. */
export interface CallbackInput {
  method: string;
  on: Value | undefined;
  call: Call;
  fileDriver: Driver;
}

export interface CallbackUse {
  /**
   * 'tx': the callback runs in a transaction; 'conn': on one connection; 'same-tx': in the transaction it is called on;
   * 'client': it is given the client itself, outside any transaction (a Prisma extension's `(client) => ...`).
   */
  kind: 'tx' | 'conn' | 'same-tx' | 'client';
  driver: Driver;
  /** How the transaction is written, for messages; default `<receiver>.<method>`. */
  form?: string;
}

/** The file's sites and configs after the walk, for a driver that places what the walk could not. */
export interface FileFacts {
  file: string;
  sites: import('../../../model/index.ts').SqlSite[];
  configs: ConfigEntry[];
  configById(id: string | undefined): ConfigEntry | undefined;
}

export interface DriverModel {
  driver: Driver;
  /** The module specifiers that are this driver: exact names, prefixes, or a pattern. */
  modules: { names?: readonly string[]; prefixes?: readonly string[]; pattern?: RegExp };
  /**
   * Names whose import says a module of the project is this driver's, whatever
   * its path: a client the driver generates into the project (Prisma's
   * `PrismaClient` from `'../generated/client'`, or a workspace package that
   * re-exports it). The names `exports` knows are read as the driver's there.
   */
  generatedExports?: readonly string[];
  /** What the module's exported names are ('default', '*' for the namespace object). */
  exports: Readonly<Record<string, Value>>;
  /** An export that depends on the specifier or on more than its name: read before `exports`. */
  exportOf?(imported: string, specifier: string): Value | undefined;
  /** What the types the module exports stand for. */
  types?: Readonly<Record<string, TypeMeaning['what']>>;
  /** Pool methods whose promise gives a checked-out connection: the type `Awaited<ReturnType<Sql['reserve']>>` is one. */
  checkoutMethods?: readonly string[];
  /**
   * Pool types of `types`/`typeOf` that the driver's transaction handle also satisfies (Kysely's
   * `Transaction<DB>` extends `Kysely<DB>`): a parameter declared so may be handed a transaction.
   */
  txSatisfies?: readonly string[];
  /** A type that depends on more than its name (`Knex` but not `Knex.Knex`): read before `types`. */
  typeOf?(exported: string, qualified: boolean): TypeMeaning['what'] | undefined;
  /**
   * Functions the driver's own runner calls with one of its values: Knex runs a migration's exported
   * `up`/`down` and a seed's `seed` with its instance. An untyped first parameter of such an export is
   * that value when the body uses it through one of `uses`, the driver's own members (so another
   * tool's `up(pgm)` is not taken for it).
   */
  runnerExports?: { names: readonly string[]; uses: readonly string[]; value: Value };
  /** Globals the runtime gives (Bun's `Bun`). */
  globals?: ReadonlyMap<string, Value>;
  /** A member of one of this driver's values: `pg.Pool`, `Bun.sql`, `dataSource.manager`. */
  member?(object: Value, name: string): Value | undefined;
  /** What a method call on one of its values gives: `pool.connect()`, `sql.reserve()`, `knex.transaction()`. */
  method?(on: Value, method: string, call: Call, ctx: DriverContext): Value | undefined;
  /** A call or `new` of one of its makers whose `makes` is not 'pool' or 'client'. */
  make?(maker: Extract<Value, { kind: 'maker' }>, node: TSESTree.NewExpression | TSESTree.CallExpression, ctx: DriverContext): Value | undefined;
  /** Its pools are made over another pool (`drizzle(pool)`): they take that pool's config. */
  wrapsPool?: boolean;
  /** Options of a pool or client read into its config (`prepare: false`). */
  readOptions?(options: TSESTree.ObjectExpression, entry: ConfigEntry): void;
  /** Hooks given in a pool's options: connect, checkout, reset callbacks. */
  optionHooks?(options: TSESTree.ObjectExpression): PoolHook[];
  /** Hooks given by event: `pool.on('connect', fn)`. */
  events?: readonly { methods: readonly string[]; event: string; role: PoolHook['role'] }[];
  /** After the walk: whether a config of this driver caches prepared statements, and why. */
  prepared?(entry: ConfigEntry, line: (s: Span) => number): void;
  /** Its configs want the transactions opened on them by callback (postgres.js: where its retry cannot help). */
  tracksCallbackTransactions?: boolean;
  /** Callback calls: `sql.begin(fn)`, `db.transaction(fn)`, `db.task(fn)`. */
  callback?(input: CallbackInput): CallbackUse | undefined;
  /** A call whose array argument's queries run in one transaction: `prisma.$transaction([...])`. */
  arrayTransaction?(method: string, on: Value): boolean;
  /** A method called on one of its connections: BEGIN by method, COMMIT, release. */
  connectionMethod?(conn: Conn, method: string, call: Call, ctx: DriverContext): void;
  /** Calls that send SQL. */
  queries?: readonly QueryRow[];
  /** A tagged template that sends SQL by the tag's name (`prisma.$executeRaw`...``). */
  taggedQuery?(node: TSESTree.TaggedTemplateExpression, tag: Node, ctx: DriverContext): QueryCall | undefined;
  /** Its pools, connections and transactions are tags: `sql`...`` sends the query. */
  tagRunsQuery?: boolean;
  /** A tag the walk cannot resolve, in a file that imports this driver, is taken as its query tag. */
  bareTagsRunQueries?: boolean;
  /** Schema declared in code as SQL (Drizzle's pgPolicy): a query, null for a declaration it cannot read, undefined if none. */
  declaration?(call: Call, ctx: DriverContext): QueryCall | null | undefined;
  /** A builder chain as the SQL it sends. */
  builder?: ChainReader;
  /** What a builder chain runs on when its root is a name imported from a module the walk cannot read: this driver's, by the chain's shape. */
  builderRoot?(root: Node, links: readonly ChainLink[], host: BuilderHost): RootOf | undefined;
  /** Where the values of a text call are, when the driver has its own way ('none': nowhere). */
  values?(call: Call, second: Node, rest: Node[]): ValuesSource | 'none' | undefined;
  /** Query config objects: `{ text, values, name }` (node-postgres), `new PreparedStatement({...})` (pg-promise). */
  queryConfig?: { text?: string; values?: string; name?: string; classes?: readonly string[] };
  /** Holes of the driver's own formatting in SQL text (pg-promise's `${name}`). */
  holes?(text: string): Span[];
  /** After the walk, for what only the whole file shows. */
  finish?(facts: FileFacts): void;
}
