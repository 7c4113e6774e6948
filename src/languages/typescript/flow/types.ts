// The flow engine's terms: what a name holds (Value), the connections whose
// transaction state the walk follows (Conn), the transactions it sees (Tx),
// and the SQL call a driver module recognises (QueryCall). Driver modules
// speak these terms; none of them names a driver.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { CallbackCall, ConnectionConfig, Driver, Scope, Span, SqlSite } from '../../../model/index.ts';
import type { PlaceholderStyle, StatementFacts } from '../../../sql/index.ts';
import type { HostText } from '../../host-text.ts';
import type { ValuesSource } from '../params.ts';
import type { FunctionNode, Node } from '../syntax.ts';

/** A flow-tracked connection: its transaction state is followed through the function that holds it. */
export interface Conn {
  id: number;
  driver: Driver;
  use: 'pooled-client' | 'dedicated' | 'unknown';
  configId?: string;
  /**
   * How the code got it: checked out of a pool (pg `pool.connect()`, postgres.js
   * `sql.reserve()`), a client of its own, a parameter (the caller's), a
   * connection a callback is given, a runner whose transactions are methods
   * (TypeORM's query runner), or a transaction object (a Prisma adapter's).
   */
  origin: 'checkout' | 'new-client' | 'parameter' | 'task' | 'runner' | 'transaction';
  /** A parameter of a function walked on its own: which function, which parameter (its callers say what state it arrives in). */
  param?: { fn: FunctionNode; index: number };
}

export interface TxInfo {
  id: string;
  form: string;
  /** Where it opened: the BEGIN site or the call that takes the callback. */
  beginSpan: { start: number; end: number };
}

/** A transaction the walk saw open: by BEGIN (flow) or by a callback (sql.begin(fn), db.transaction(fn), ...). */
export interface Tx {
  info: TxInfo;
  kind: 'flow' | 'callback';
  /** The first claim (FOR UPDATE SKIP LOCKED) in the transaction. */
  claim?: { site: SqlSite; statement: StatementFacts; tables: string[] };
  /** A call other than SQL of the transaction ran after the claim: the job's work. */
  work: boolean;
  /** The work was handed the transaction's own connection (or handle): SQL of its own may abort the transaction. */
  workOnConnection?: boolean;
  /** The transaction ends the job: a claim by DELETE, or a later write that sets a final state or deletes the row. */
  finishes: boolean;
  /** Try statements whose block holds the claim or the work (a catch of one may count the failure). */
  tries: Set<TSESTree.TryStatement>;
}

/** Who can tell what a function of a file returns (the file that declares it). */
export interface FunctionOwner {
  /** The model of the module that declares the function: its file names the function across modules. */
  readonly model: { readonly file: string; readonly callbackCalls?: readonly CallbackCall[] };
  returnsOf(fn: FunctionNode, env: unknown): Value | undefined;
  /** A module-level name's value (its own binding or an import), where the owner is a module the walk reads. */
  moduleBinding?(name: string): Value | undefined;
}

/** A table declared in code (Drizzle's `pgTable('jobs', {...})`): its name and columns, for its builders' SQL. */
export interface TableValue {
  name: string;
  /** Property name -> column name. */
  columns: Map<string, string>;
}

export type Value =
  /** The module object of a driver (`import pg from 'pg'`, `import * as pg`, `require('pg')`). */
  | { kind: 'module'; driver: Driver }
  /**
   * A class or factory: a call or `new` of it makes a pool ('pool') or a
   * client ('client'); any other word is the driver module's to read (its `make`).
   */
  | { kind: 'maker'; driver: Driver; makes: string }
  /** A function of the project: a call of it is what it returns. */
  | { kind: 'function'; node: FunctionNode; owner: FunctionOwner; env: unknown }
  /** `import * as db from './db'`, a CommonJS module.exports object, a driver's namespace object: its members. */
  | { kind: 'namespace'; member(name: string): Value | undefined }
  /** A wrapper over a pool that runs no SQL itself (a Prisma driver adapter, a Kysely dialect): runs on the pool it wraps. */
  | { kind: 'adapter'; configId?: string }
  /** A table declared in code. */
  | { kind: 'table'; table: TableValue }
  /** An SQL template tag that makes a fragment, not a query (kysely/drizzle/slonik `sql`, `Prisma.sql`). */
  | { kind: 'tag'; driver: Driver }
  /**
   * A pool: each call may run on any of its connections (postgres.js `sql` is one). `orTx`: a parameter
   * whose declared type the driver's transaction handle also satisfies (Kysely's `Transaction` extends
   * `Kysely`): its callers may hand a transaction, so no call on it is known to run in autocommit; `param`
   * says which parameter of a function walked on its own it is (its callers say what they hand it).
   */
  | { kind: 'pool'; driver: Driver; configId?: string; orTx?: true; param?: { fn: FunctionNode; index: number } }
  | { kind: 'conn'; conn: Conn }
  /** The handle a transaction callback is given. */
  | { kind: 'tx'; driver: Driver; tx: Tx; configId?: string }
  /** A handle before its callback: Kysely's `db.transaction()` before `.execute(fn)`. */
  | { kind: 'builder'; driver: Driver; of: 'transaction' | 'connection'; configId?: string }
  /** A handle whose driver is known but whose use we cannot tell (a parameter typed `Knex | Knex.Transaction`): its calls are the driver's, in no transaction we can name. */
  | { kind: 'opaque'; driver: Driver };

/** What a type a driver exports stands for: `pg.PoolClient`, postgres.js `TransactionSql`, `Knex.Transaction`. */
export type TypeMeaning = { driver: Driver; what: 'pool' | 'client' | 'checked-out' | 'tx'; orTx?: true };

export interface Imports {
  names: Map<string, Value>;
  /** Drivers the file imports (the first one is the file's driver for calls on names we cannot resolve). */
  drivers: Driver[];
  /** Type names imported from a driver: `PoolClient` from pg, `TransactionSql` from postgres. */
  types: Map<string, { driver: Driver; name: string }>;
  /** Names imported from other modules (maybe the project's own): resolved when the walk needs them. */
  project: Map<string, ProjectImport>;
}

export interface ProjectImport {
  specifier: string;
  /** The exported name; 'default', '*' (the namespace) or 'module.exports' (a CommonJS require of the whole). */
  imported: string;
  /** The import's specifier in this file: where configs that come through it are placed. */
  at: { start: number; end: number };
  typeOnly: boolean;
}

/** A pool's or client's config as the file collects it. */
export interface ConfigEntry {
  config: ConnectionConfig;
  /** An option says the driver prepares nothing (postgres.js `prepare: false`). */
  prepareOff?: boolean;
  /** Named (prepared) queries that run on this config. */
  namedQueries: { name: string; span: Span }[];
  /** Transactions opened on this config by callback, where the driver asks to know them (postgres.js sql.begin). */
  transactions: Span[];
  /** Made in another module of the project: its facts were read there. */
  imported?: boolean;
  /** A pool of one connection (`max: 1`): a script client when the code that makes it ends it. */
  oneConnection?: boolean;
}

/** A function a pool runs on its connections. */
export interface PoolHook {
  /** The function, or the name of one, the pool runs. */
  fn: Node;
  role: 'configure' | 'checkout' | 'reset';
  /** How the code names it, for messages: 'onConnect', "pool.on('connect')", 'afterCreate'. */
  name: string;
}

/** A call that sends SQL, as a driver module reads it. */
export interface QueryCall {
  /** The node holding the SQL text: a string, a template, a name, or a tagged template's quasi. */
  text: Node;
  tagged?: boolean;
  on: Value | undefined;
  driver: Driver;
  placeholders: PlaceholderStyle;
  at: Node;
  preparedName?: string;
  /** A query config reached through a name: the site is reported at the name. */
  pinnedTo?: { start: number; end: number };
  /** Where the values of the placeholders are. */
  values?: ValuesSource;
  /** SQL the front end wrote for a call that is not SQL text (an RPC, an ORM builder), mapped to the call. */
  synthesized?: HostText;
  /** Where it runs, when the call says it itself (schema declarations: the migration tool's script). */
  scope?: Scope;
}

export function driverOfValue(v: Value | undefined): Driver | undefined {
  if (!v) return undefined;
  if (v.kind === 'conn') return v.conn.driver;
  return 'driver' in v ? v.driver : undefined;
}

export type { Node, FunctionNode };
