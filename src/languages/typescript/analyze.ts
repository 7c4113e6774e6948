// The walk over one TS/JS file: which names hold pools, connections and
// transaction handles, where SQL is sent on them, and in which transaction.
// Module code and every function are walked once, in source order, following
// each connection's transaction state along the paths of the function
// (branches, loops, try/catch/finally, return, throw).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { isAbsolute } from 'node:path';
import { emptyFileModel, type ConnectionUse, type Driver, type FileModel, type Scope, type SqlSite } from '../../model/index.ts';
import type { PlaceholderStyle, RowWrite, SqlAnalysis, StatementFacts } from '../../sql/index.ts';
import { RUNNING_STATUS, STATUS_COLUMN } from '../../model/queue.ts';
import type { FrontEndOptions } from '../types.ts';
import { finishConfigs, makeConfig, type ConfigEntry } from './connections.ts';
import { pgApi, postgresApi, readImports, valueOfType, type Conn, type Imports, type TxInfo, type TypeMeaning, type Value } from './drivers.ts';
import { allNone, State, txOf, type Atom, type Tx } from './flow.ts';
import { builtQuery, readTable, type TableValue } from './builders.ts';
import { policyText } from './policies.ts';
import { readExport, readExportedType } from './exports.ts';
import { eventHook, FunctionIndex, optionHooks, reuseOf, type PoolHook } from './pool-facts.ts';
import { MAX_IMPORT_DEPTH, MAX_MODULES_PER_FILE, ModuleCache, resolveProjectModule } from './modules.ts';
import { typescriptSideEffect } from './side-effects.ts';
import { classifyValue, holeExpressions, hostParams, type ValuesSource } from './params.ts';
import { analyzeHostText, pgPromiseHoles, PG_PROMISE_METHODS, PRISMA_TAG_METHODS, PRISMA_UNSAFE_METHODS, SLONIK_METHODS } from './sql-sites.ts';
import { HostTextBuilder } from '../host-text.ts';
import { constantInit, resolveText, templateText, type HostText, type ResolveContext } from './strings.ts';
import {
  annotatedType,
  callbackArg,
  children,
  dottedName,
  isFunction,
  methodOf,
  objectProperty,
  patternNames,
  propertyName,
  span,
  stringValue,
  unwrap,
  type Call,
  type FunctionNode,
  type Node,
} from './syntax.ts';

interface SiteMeta {
  site: SqlSite;
  tx?: Tx;
  /** Try statements whose block holds the site. */
  inTry: TSESTree.TryStatement[];
  /** Try statements whose catch clause holds the site. */
  inHandler: TSESTree.TryStatement[];
  /** Transactions the site's connection may be in at the site (a catch after a BEGIN: still open, or already ended). */
  mayBeIn?: Tx[];
}

interface TryFrame {
  node: TSESTree.TryStatement;
  phase: 'block' | 'handler';
  throws: State[];
  returns: State[];
}

/** Calls that are not the job's work: they run no code of the job. */
const PURE_GLOBALS = new Set(['console', 'JSON', 'Math', 'Number', 'String', 'Boolean', 'Date', 'Object', 'Array', 'Promise', 'Symbol', 'BigInt', 'Buffer', 'parseInt', 'parseFloat', 'isNaN', 'structuredClone', 'Error', 'TypeError', 'RangeError', 'assert', 'Reflect', 'Intl', 'URL', 'crypto', 'process']);
const PURE_METHODS = new Set([
  'map', 'filter', 'forEach', 'reduce', 'find', 'findIndex', 'some', 'every', 'includes', 'indexOf', 'push', 'pop', 'shift', 'unshift', 'slice', 'splice', 'join', 'split',
  'toString', 'toJSON', 'toISOString', 'trim', 'at', 'keys', 'values', 'entries', 'get', 'set', 'has', 'add', 'delete', 'concat', 'flat', 'flatMap', 'sort', 'reverse',
  'startsWith', 'endsWith', 'replace', 'replaceAll', 'toLowerCase', 'toUpperCase', 'padStart', 'padEnd', 'getTime', 'valueOf', 'then', 'catch', 'finally',
  'log', 'info', 'debug', 'warn', 'error', 'trace', 'fatal', 'child', 'release', 'end', 'connect', 'commit', 'rollback', 'emit', 'on', 'once', 'off',
]);
const LOGGER_NAMES = /^(console|log|logger|this\.log|this\.logger|pino|winston|debug)$/;

class Env {
  readonly vars = new Map<string, Value | undefined>();
  /** Names of `vars` that are parameters of the function this scope is the body of (its callers choose them). */
  readonly params = new Set<string>();
  constructor(readonly parent?: Env) {}

  isParameter(name: string): boolean {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return env.params.has(name);
    return false;
  }

  lookup(name: string): { found: boolean; value?: Value } {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return { found: true, value: env.vars.get(name) };
    return { found: false };
  }

  assign(name: string, value: Value | undefined): void {
    for (let env: Env | undefined = this; env; env = env.parent) {
      if (env.vars.has(name)) {
        env.vars.set(name, value);
        return;
      }
    }
    this.vars.set(name, value);
  }
}

/** How many pools of one file get their reuse read (see reuseOf). */
const MAX_REUSE_READS = 32;

interface ConstEntry {
  init: Node;
  scope: [number, number];
}

/** What the analysis of one file may do beyond the file: read the project modules it imports. */
export interface AnalysisContext {
  /** How many more levels of project imports may be followed from this file. */
  importDepth: number;
  /** Parses an imported module (the front end's parser); undefined where it does not parse. */
  parse?: (text: string, file: string) => TSESTree.Program | undefined;
}

export function analyzeTypeScript(model: FileModel, program: TSESTree.Program, options: FrontEndOptions, parse?: AnalysisContext['parse']): void {
  const file = new TsFile(model, program, options, { importDepth: MAX_IMPORT_DEPTH, parse });
  file.run();
  const dependencies = file.dependencies();
  if (dependencies.length > 0) model.dependencies = dependencies;
}

/** What imported modules export, once per process per file version and import depth. */
const moduleCache = new ModuleCache<TsFile>();

export class TsFile {
  readonly text: string;
  readonly imports: Imports;
  readonly configs: ConfigEntry[] = [];
  readonly configByNode = new Map<Node, ConfigEntry>();
  readonly made = new Map<Node, Value | undefined>();
  readonly metas: SiteMeta[] = [];
  readonly txs: Tx[] = [];
  readonly txByKey = new Map<string, Tx>();
  readonly consumed = new WeakSet<Node>();
  readonly awaited = new WeakSet<Node>();
  readonly constants = new Map<string, ConstEntry[]>();
  readonly resolveContext: ResolveContext;
  readonly queryFunctions: readonly string[];
  /** The driver of names we cannot resolve: the file's only driver, if it imports one. */
  readonly fileDriver: Driver;
  /** Functions walked already (a call may walk a hoisted declaration before its place). */
  readonly walked = new Set<FunctionNode>();
  /** What each function returns, as far as the walk could tell. */
  readonly returns = new Map<FunctionNode, (Value | undefined)[]>();
  /** Modules of the project read for this file, by path (undefined: read, but nothing known). */
  readonly modules = new Map<string, TsFile | undefined>();
  /** Functions a pool runs on its connections (connect, checkout hooks), with the pool's config. */
  readonly hooks = new Map<FunctionNode, { configId: string; role: 'configure' | 'checkout' | 'reset' }>();
  readonly functions: FunctionIndex;
  /** Drizzle tables made in this file (`pgTable(...)`), for the policies declared in them. */
  readonly tables: { node: Node; table: TableValue }[] = [];
  private readonly importValues = new Map<string, Value | undefined>();
  private readonly exportValues = new Map<string, Value | undefined>();
  private moduleEnv?: Env;
  moduleWalk?: Walk;
  private connCount = 0;

  constructor(
    readonly model: FileModel,
    readonly program: TSESTree.Program,
    readonly options: FrontEndOptions,
    readonly context: AnalysisContext,
  ) {
    this.text = model.text;
    this.functions = new FunctionIndex(program);
    this.imports = readImports(program);
    this.queryFunctions = options.queryFunctions ?? [];
    this.fileDriver = this.imports.drivers.length === 1 ? this.imports.drivers[0] : 'unknown';
    indexConstants(program, this.constants);
    this.resolveContext = {
      source: this.text,
      constant: (name, at) => {
        let best: ConstEntry | undefined;
        for (const entry of this.constants.get(name) ?? []) {
          if (entry.scope[0] <= at.range[0] && at.range[1] <= entry.scope[1] && (!best || entry.scope[0] >= best.scope[0])) best = entry;
        }
        return best?.init;
      },
    };
  }

  run(): void {
    const moduleEnv = new Env();
    const walk = new Walk(this, moduleEnv, new State(), { name: undefined });
    this.moduleEnv = moduleEnv;
    this.moduleWalk = walk;
    walk.prebind(this.program.body);
    walk.statements(this.program.body);
    this.finish();
  }

  // ---- the project's modules -------------------------------------------------------

  /** The value of a name imported from another module, when that module is the project's and says. */
  importedValue(name: string): Value | undefined {
    if (this.importValues.has(name)) return this.importValues.get(name);
    const entry = this.imports.project.get(name);
    let value: Value | undefined;
    if (entry && !entry.typeOnly) {
      const module = this.module(entry.specifier);
      if (module) value = this.adopt(entry.imported === '*' ? module.namespace() : module.exported(entry.imported), module, entry.at);
    }
    this.importValues.set(name, value);
    return value;
  }

  /** The analysed module a specifier of this file names, if it is one of the project's and may be read. */
  module(specifier: string): TsFile | undefined {
    if (this.context.importDepth <= 0 || !this.context.parse || !isAbsolute(this.model.file)) return undefined;
    const path = resolveProjectModule(this.model.file, specifier);
    if (!path || path === this.model.file) return undefined;
    if (this.modules.has(path)) return this.modules.get(path);
    if (this.modules.size >= MAX_MODULES_PER_FILE) return undefined;
    const depth = this.context.importDepth - 1;
    const parse = this.context.parse;
    const module = moduleCache.get(path, String(depth), (text: string) => {
      const program = parse(text, path);
      if (!program) return undefined;
      const file = new TsFile(emptyFileModel(path, 'typescript', text), program, this.options, { importDepth: depth, parse });
      file.run();
      return file;
    });
    this.modules.set(path, module);
    return module;
  }

  /** Every file this file's model depends on besides itself: the modules read, and theirs. */
  dependencies(): string[] {
    const out = new Set<string>();
    const visit = (file: TsFile) => {
      for (const [path, module] of file.modules) {
        if (out.has(path)) continue;
        out.add(path);
        if (module) visit(module);
      }
    };
    visit(this);
    out.delete(this.model.file);
    return [...out].sort();
  }

  /** The module object (`import * as db`): every export by name. */
  namespace(): Value {
    return { kind: 'namespace', member: (name) => this.exported(name) };
  }

  /** What this module exports as `name` ('default', or 'module.exports' for a CommonJS require of the whole). */
  exported(name: string): Value | undefined {
    if (this.exportValues.has(name)) return this.exportValues.get(name);
    this.exportValues.set(name, undefined); // a cycle of re-exports reads as unknown
    const value = readExport(this, name);
    this.exportValues.set(name, value);
    return value;
  }

  /** A module-level name's value after the walk (the module's own binding or import). */
  moduleBinding(name: string): Value | undefined {
    const local = this.moduleEnv?.lookup(name);
    if (local?.found) return local.value;
    return this.imports.names.get(name) ?? this.importedValue(name);
  }

  /** The value of an expression at module level, after the walk (`export default new Pool()`). */
  moduleValue(node: Node): Value | undefined {
    return this.moduleWalk?.value(node);
  }

  /**
   * A value that comes from another module, as this file holds it: its pool's
   * config joins this file's configs (placed at the import), a connection is a
   * new one in an unknown state, transaction handles are left out.
   */
  adopt(value: Value | undefined, from: TsFile, at: { start: number; end: number }): Value | undefined {
    if (!value || from === this) return value;
    switch (value.kind) {
      case 'pool':
      case 'builder':
      case 'prisma-adapter':
        if (value.configId) this.adoptConfig(value.configId, from, at);
        return value;
      case 'conn': {
        if (value.conn.configId) this.adoptConfig(value.conn.configId, from, at);
        return { kind: 'conn', conn: this.newConn(value.conn.driver, value.conn.use, 'parameter', value.conn.configId) };
      }
      case 'tx':
        return undefined;
      case 'namespace': {
        const inner = value;
        return { kind: 'namespace', member: (name) => this.adopt(inner.member(name), from, at) };
      }
      default:
        return value;
    }
  }

  private adoptConfig(id: string, from: TsFile, at: { start: number; end: number }): void {
    if (this.configById(id)) return;
    const entry = from.configById(id);
    if (!entry) return;
    const remap = <T extends { span: { start: number; end: number } }>(x: T): T => ({ ...x, span: { ...at } });
    const config = {
      ...entry.config,
      span: { ...at },
      definedIn: entry.config.definedIn ?? from.model.file,
      callbacks: entry.config.callbacks.map((c) => ({ ...remap(c), leavesTransactionAt: c.leavesTransactionAt ? { ...at } : undefined })),
    };
    this.configs.push({ config, namedQueries: [], transactions: [], imported: true, prepareOff: entry.prepareOff });
  }

  /** What a function returns: the first value its returns hold. A hoisted declaration not walked yet is walked now. */
  returnsOf(fn: FunctionNode, env: unknown): Value | undefined {
    if (!this.walked.has(fn) && env instanceof Env) {
      const name = fn.type === 'FunctionDeclaration' ? fn.id?.name : undefined;
      new Walk(this, env, new State(), { name }).nestedFunction(fn, name, false);
    }
    const values = this.returns.get(fn) ?? [];
    return values.find((v) => v !== undefined && v.kind !== 'tx');
  }

  /**
   * What a type annotation says a name holds: a driver's type (`pg.PoolClient`,
   * `Knex.Transaction`, `NodePgDatabase<...>`), one of a union with
   * null/undefined, `typeof db`, or a type alias of this file or exported by a
   * project module (`export type Db = typeof db`).
   */
  typeMeaning(type: TSESTree.TypeNode, walk: { value(node: Node): Value | undefined }, depth = 0): TypeMeaning | Value | undefined {
    if (depth > 4) return undefined;
    switch (type.type) {
      case 'TSUnionType': {
        const meanings = type.types.filter((t) => t.type !== 'TSUndefinedKeyword' && t.type !== 'TSNullKeyword').map((t) => this.typeMeaning(t, walk, depth + 1));
        return meanings.length === 1 ? meanings[0] : undefined;
      }
      case 'TSTypeQuery':
        return type.exprName.type === 'Identifier' ? walk.value(type.exprName) : undefined;
      case 'TSTypeReference': {
        const typeName = type.typeName;
        const name = typeName.type === 'Identifier' ? typeName.name : typeName.type === 'TSQualifiedName' ? typeName.right.name : undefined;
        const qualifier = typeName.type === 'TSQualifiedName' && typeName.left.type === 'Identifier' ? typeName.left.name : undefined;
        if (!name) return undefined;
        const known = valueOfType(name, qualifier, this.imports);
        if (known) return known;
        if (qualifier) return undefined;
        for (const statement of this.program.body) {
          const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
          if (d?.type === 'TSTypeAliasDeclaration' && d.id.name === name) return this.typeMeaning(d.typeAnnotation, this.moduleWalk ?? walk, depth + 1);
        }
        const imported = this.imports.project.get(name);
        const module = imported && imported.imported !== '*' ? this.module(imported.specifier) : undefined;
        const meaning = module ? readExportedType(module, imported!.imported, (file, t) => file.typeMeaning(t, file.moduleWalk ?? walk, depth + 1)) : undefined;
        return meaning && 'kind' in meaning ? this.adopt(meaning, module!, imported!.at) : meaning;
      }
      default:
        return undefined;
    }
  }

  /** A hook of the pool `configId`: its sites run on each new (or checked-out) connection, before any job. */
  registerHook(hook: PoolHook, configId: string, walk: { value(node: Node): Value | undefined }): void {
    const entry = this.configById(configId);
    const fnValue = isFunction(hook.fn) ? undefined : walk.value(hook.fn);
    const fn = isFunction(hook.fn) ? hook.fn : fnValue?.kind === 'function' && fnValue.owner === this ? fnValue.node : undefined;
    if (fn && this.hooks.has(fn)) return;
    if (fn) this.hooks.set(fn, { configId, role: hook.role });
    if (entry && !entry.config.callbacks.some((c) => c.span.start === hook.fn.range[0])) {
      entry.config.callbacks.push({ role: hook.role, name: hook.name, span: span(hook.fn), endsOutsideTransaction: 'unknown', resolved: fn !== undefined });
    }
  }

  recordReturn(fn: FunctionNode, value: Value | undefined): void {
    const list = this.returns.get(fn);
    if (list) list.push(value);
    else this.returns.set(fn, [value]);
  }

  newConn(driver: Driver, use: Conn['use'], origin: Conn['origin'], configId?: string): Conn {
    return { id: ++this.connCount, driver, use, origin, configId };
  }

  /** One Tx per place that opens it (a BEGIN statement or a callback call), also when a block is walked twice. */
  txAt(key: string, kind: Tx['kind'], form: string, beginSpan: { start: number; end: number }): Tx {
    let tx = this.txByKey.get(key);
    if (!tx) {
      const info: TxInfo = { id: `${this.model.file}#tx@${beginSpan.start}`, form, beginSpan };
      tx = { info, kind, work: false, finishes: false, tries: new Set() };
      this.txByKey.set(key, tx);
      this.txs.push(tx);
    }
    return tx;
  }

  configById(id: string | undefined): ConfigEntry | undefined {
    return id === undefined ? undefined : this.configs.find((c) => c.config.id === id);
  }

  private finish(): void {
    // Named node-postgres queries anywhere in the file run on its pools: without a pool made here, one stands for them.
    const pgSites = this.metas.filter((m) => m.site.driver === 'pg');
    const unplaced = pgSites.filter((m) => m.site.preparedName && !m.site.connection.configId);
    if (unplaced.length > 0) {
      let pgConfigs = this.configs.filter((c) => c.config.driver === 'pg');
      if (pgConfigs.length === 0) {
        const first = unplaced[0].site;
        const entry: ConfigEntry = {
          config: { id: `${this.model.file}#pg`, driver: 'pg', kind: 'pool', span: first.span, preparedStatements: 'unknown', autocommit: true, callbacks: [] },
          namedQueries: [],
          transactions: [],
        };
        this.configs.push(entry);
        pgConfigs = [entry];
      }
      for (const m of unplaced) for (const c of pgConfigs) c.namedQueries.push({ name: m.site.preparedName!, span: m.site.span });
      if (pgConfigs.length === 1) {
        for (const m of pgSites) if (!m.site.connection.configId) m.site.connection.configId = pgConfigs[0].config.id;
      }
    }
    for (const m of pgSites) {
      const entry = this.configById(m.site.connection.configId);
      if (m.site.preparedName && entry && !entry.namedQueries.some((q) => q.span.start === m.site.span.start)) {
        entry.namedQueries.push({ name: m.site.preparedName, span: m.site.span });
      }
    }
    for (const entry of this.configs) entry.namedQueries.sort((a, b) => a.span.start - b.span.start);
    finishConfigs(this.configs, this.text);
    // Sites of a hook function walked before the pool was made (declared above it).
    for (const [fn, hook] of this.hooks) {
      for (const site of this.model.sites) if (!site.callback && fn.range[0] <= site.span.start && site.span.end <= fn.range[1]) site.callback = { configId: hook.configId, role: hook.role };
    }
    // In source order (module-level pools are made before the walk reaches them).
    for (const entry of this.configs) entry.config.callbacks.sort((a, b) => a.span.start - b.span.start);
    this.model.connections = this.configs.map((c) => c.config).sort((a, b) => a.span.start - b.span.start);
    this.model.sites.sort((a, b) => a.span.start - b.span.start);
    this.model.releases.sort((a, b) => a.span.start - b.span.start);
    this.collectJobTransactions();
  }

  /**
   * One-transaction jobs: a transaction that claims rows with SKIP LOCKED and
   * then runs the job's work. The failure is counted outside when a catch of a
   * try around the claim or the work writes rows in another, known transaction.
   */
  private collectJobTransactions(): void {
    for (const tx of this.txs) {
      if (!tx.claim || !tx.work || !tx.finishes) continue;
      const claimed = new Set(tx.claim.tables.map(bare));
      const counts = (m: SiteMeta) =>
        m.inHandler.some((t) => tx.tries.has(t)) && m.site.analysis.statements.some((s) => s.rowWrites.some((w) => w.op !== 'insert' && claimed.has(bare(w.table))));
      const failureCountedOutside = this.metas.some(
        (m) => counts(m) && m.tx !== tx && (m.site.scope.kind === 'autocommit' || m.site.scope.kind === 'transaction'),
      );
      // Counted in the catch on the claim's connection before its ROLLBACK: inside the transaction that rolls back.
      const countedInside = this.metas.find((m) => counts(m) && (m.tx === tx || (m.mayBeIn?.includes(tx) ?? false)));
      this.model.jobTransactions.push({
        scopeId: tx.info.id,
        span: tx.claim.statement.span,
        failureCountedOutside,
        ...(countedInside && !failureCountedOutside && { failureCountedInside: countedInside.site.span }),
      });
    }
  }
}

function indexConstants(program: TSESTree.Program, out: Map<string, ConstEntry[]>): void {
  const visit = (node: Node, scope: [number, number]) => {
    let inner = scope;
    if (isFunction(node)) inner = node.range;
    // A function declaration is a constant too: SQL built by a helper of the file (`function claimSql(t) { return `...` }`).
    if (node.type === 'FunctionDeclaration' && node.id) {
      const list = out.get(node.id.name) ?? [];
      list.push({ init: node, scope });
      out.set(node.id.name, list);
    }
    if (node.type === 'VariableDeclaration' && node.kind === 'const') {
      for (const d of node.declarations) {
        if (d.id.type === 'Identifier' && d.init) {
          const list = out.get(d.id.name) ?? [];
          list.push({ init: d.init, scope });
          out.set(d.id.name, list);
        }
      }
    }
    for (const child of children(node)) visit(child, inner);
  };
  visit(program, program.range);
}

interface WalkOptions {
  name: string | undefined;
  thisEnv?: Map<string, Value | undefined>;
  callbackTxs?: Tx[];
  outerTries?: TSESTree.TryStatement[];
  /** prisma.$transaction([...]): calls on this value run in that transaction. */
  arrayTx?: { on: Value; tx: Tx };
  /** The function being walked (its returns are recorded). */
  fn?: FunctionNode;
  /** The walk is inside a pool's hook: its sites run on each connection the pool sets up. */
  callback?: SqlSite['callback'];
}

class Walk {
  private tries: TryFrame[] = [];
  private loops: State[][] = [];

  constructor(
    readonly file: TsFile,
    readonly env: Env,
    public state: State,
    readonly options: WalkOptions,
  ) {}

  // ---- names -----------------------------------------------------------------------

  /** Binds module-level names before the walk, so functions declared above them see them. */
  prebind(body: readonly Node[]): void {
    for (const statement of body) {
      const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
      if (declaration?.type !== 'VariableDeclaration') continue;
      for (const d of declaration.declarations) {
        if (isRequire(d.init)) this.bindRequire(d.id);
        else if (d.id.type === 'Identifier' && d.init) this.env.vars.set(d.id.name, this.value(d.init));
      }
    }
  }

  /** `const pg = require('pg')`, `const { pool } = require('./db')`: the names are the imports readImports read (top level only). */
  private bindRequire(pattern: Node): void {
    for (const id of patternNames(pattern)) this.env.vars.set(id.name, this.file.imports.names.get(id.name) ?? this.file.importedValue(id.name));
  }

  lookup(name: string): Value | undefined {
    const local = this.env.lookup(name);
    if (local.found) return local.value;
    const imported = this.file.imports.names.get(name) ?? this.file.importedValue(name);
    if (imported) return imported;
    // Bun's global: Bun.sql, new Bun.SQL(url).
    if (name === 'Bun') return { kind: 'module', driver: 'bun' };
    return undefined;
  }

  /** What an expression holds, when it is a driver value. Makes pools, configs and connections once per node. */
  value(node: Node | null | undefined): Value | undefined {
    const n = unwrap(node);
    if (!n) return undefined;
    switch (n.type) {
      case 'Identifier':
        return this.lookup(n.name);
      case 'MemberExpression': {
        const name = propertyName(n);
        if (name === undefined) return undefined;
        if (unwrap(n.object)?.type === 'ThisExpression') return this.options.thisEnv?.get(name);
        const object = this.value(n.object);
        if (!object) return undefined;
        if (object.kind === 'module' && object.driver === 'pg') {
          if (name === 'Pool') return { kind: 'maker', driver: 'pg', makes: 'pool' };
          if (name === 'Client') return { kind: 'maker', driver: 'pg', makes: 'client' };
        }
        if (object.kind === 'namespace') return object.member(name);
        // @vercel/postgres: client.sql`...` and pool.sql`...` run on that client or pool.
        if ((object.kind === 'conn' || object.kind === 'pool') && driverOfValue(object) === 'vercel-postgres' && name === 'sql') return object;
        if (object.kind === 'module' && object.driver === 'bun') {
          if (name === 'SQL') return { kind: 'maker', driver: 'bun', makes: 'pool' };
          if (name === 'sql') return { kind: 'pool', driver: 'bun' };
        }
        if (object.kind === 'prisma-namespace' && name === 'sql') return { kind: 'tag', driver: 'prisma' };
        if (object.kind === 'tag' && object.driver === 'slonik' && ['unsafe', 'type', 'typeAlias', 'fragment'].includes(name)) return object;
        if (object.kind === 'pool' && object.driver === 'typeorm' && name === 'manager') return object;
        return undefined;
      }
      case 'ArrowFunctionExpression':
      case 'FunctionExpression':
        return { kind: 'function', node: n, owner: this.file, env: this.env };
      case 'LogicalExpression':
        return this.value(n.left) ?? this.value(n.right);
      case 'ConditionalExpression':
        return this.value(n.consequent) ?? this.value(n.alternate);
      case 'NewExpression':
      case 'CallExpression':
        if (this.file.made.has(n)) return this.file.made.get(n);
        {
          const made = this.make(n);
          this.file.made.set(n, made);
          return made;
        }
      default:
        return undefined;
    }
  }

  private make(n: TSESTree.NewExpression | TSESTree.CallExpression): Value | undefined {
    const callee = unwrap(n.callee);
    if (!callee) return undefined;
    if (n.type === 'CallExpression') {
      const fn = callee.type === 'Identifier' || (callee.type === 'MemberExpression' && this.value(callee.object)?.kind === 'namespace') ? this.value(callee) : undefined;
      if (fn?.kind === 'function') return this.callResult(fn, n);
    }
    if (n.type === 'CallExpression' && callee.type === 'MemberExpression') {
      const method = propertyName(callee);
      const on = this.value(callee.object);
      if (!on || method === undefined) return undefined;
      const configId = 'configId' in on ? on.configId : undefined;
      const hasCallback = callbackArg(n) !== undefined;
      // pgTable(...).enableRLS() is still the table (the policy DDL is read at the call itself).
      if (on.kind === 'table' && method === 'enableRLS') return on;
      if (on.kind === 'prisma-adapter' && method === 'connect') return { kind: 'pool', driver: 'prisma', configId };
      if (on.kind === 'pool') {
        if (pgApi(on.driver) && method === 'connect' && n.arguments.length === 0) return this.conn(this.file.newConn(on.driver, 'pooled-client', 'checkout', configId));
        if (postgresApi(on.driver) && method === 'reserve') return this.conn(this.file.newConn(on.driver, 'pooled-client', 'reserve', configId));
        // A Prisma driver adapter's transaction: its queryRaw/executeRaw run in it until commit() or rollback().
        if (on.driver === 'prisma' && method === 'startTransaction') {
          const conn = this.file.newConn('prisma', 'pooled-client', 'adapter-tx', configId);
          this.state.set(conn, { kind: 'open', tx: this.file.txAt(`begin@${n.range[0]}`, 'flow', 'adapter.startTransaction()', span(n)), error: false });
          return { kind: 'conn', conn };
        }
        // Same client, with an extension or a plugin: the same pool.
        if ((on.driver === 'prisma' && method === '$extends') || (on.driver === 'kysely' && (method === 'withPlugin' || method === 'withSchema' || method === 'withoutPlugins'))) return on;
        if (on.driver === 'sequelize' && method === 'transaction' && !hasCallback) {
          const tx = this.file.txAt(`sequelize@${n.range[0]}`, 'callback', 'sequelize.transaction()', span(n));
          return { kind: 'tx', driver: 'sequelize', tx, configId };
        }
        if (on.driver === 'typeorm' && method === 'createQueryRunner') return this.conn(this.file.newConn('typeorm', 'pooled-client', 'query-runner', configId));
        if (on.driver === 'kysely' && method === 'transaction' && n.arguments.length === 0) return { kind: 'builder', driver: 'kysely', of: 'kysely-transaction', configId };
        if (on.driver === 'kysely' && method === 'connection' && n.arguments.length === 0) return { kind: 'builder', driver: 'kysely', of: 'kysely-connection', configId };
        if (on.driver === 'knex' && method === 'transaction' && !hasCallback) {
          const tx = this.file.txAt(`knex@${n.range[0]}`, 'callback', 'knex.transaction()', span(n));
          return { kind: 'tx', driver: 'knex', tx, configId };
        }
      }
      if (on.kind === 'builder' && (method === 'setIsolationLevel' || method === 'setAccessMode')) return on;
      if (on.kind === 'maker' && on.makes === 'pgp') return undefined;
      return undefined;
    }
    const maker = this.value(callee);
    if (maker?.kind !== 'maker') return undefined;
    if (maker.makes === 'pgp') {
      // pgPromise() makes pgp; pgp(cn) makes the database object.
      return n.type === 'CallExpression' && callee.type === 'Identifier' && this.file.imports.names.get(callee.name) === maker
        ? { kind: 'maker', driver: 'pg-promise', makes: 'pool' }
        : undefined;
    }
    if (maker.makes === 'table') {
      const table = n.type === 'CallExpression' ? tableValue(n) : undefined;
      if (table?.kind === 'table') this.file.tables.push({ node: n, table: table.table });
      return table;
    }
    if (maker.makes === 'policy') return undefined;
    if (maker.makes === 'adapter') {
      // Kysely's new PostgresDialect({ pool }), slonik's createSqlTag(): what they wrap, if it is a pool.
      const wrapped = this.wrappedPool(n.arguments);
      return wrapped ? { kind: 'prisma-adapter', configId: wrapped } : undefined;
    }
    if (maker.makes === 'client') {
      const entry = this.config(n, maker.driver, 'client', n.arguments);
      return this.conn(this.file.newConn(maker.driver, 'dedicated', 'new-client', entry.config.id));
    }
    // drizzle(pool), new Kysely({ dialect: new PostgresDialect({ pool }) }), new PrismaPg(pool), new PrismaClient({ adapter }):
    // they run on the pool they wrap, with its config (its connect hooks, its reuse).
    const wrapped = maker.driver === 'drizzle' || maker.driver === 'kysely' || maker.driver === 'prisma' ? this.wrappedPool(n.arguments) : undefined;
    if (maker.makes === 'prisma-adapter') return { kind: 'prisma-adapter', configId: wrapped ?? this.config(n, 'pg', 'pool', n.arguments).config.id };
    if (wrapped) {
      for (const hook of optionHooks(maker.driver, n.arguments)) this.file.registerHook(hook, wrapped, this);
      return { kind: 'pool', driver: maker.driver, configId: wrapped };
    }
    const entry = this.config(n, maker.driver, 'pool', n.arguments);
    return { kind: 'pool', driver: maker.driver, configId: entry.config.id };
  }

  /** The config of a pool an ORM is made over: `drizzle(pool)`, `{ client: pool }`, `{ dialect: new PostgresDialect({ pool }) }`, `{ adapter }`. */
  private wrappedPool(args: readonly TSESTree.CallExpressionArgument[], depth = 0): string | undefined {
    if (depth > 3) return undefined;
    for (const arg of args) {
      const a = unwrap(arg as Node);
      if (!a) continue;
      if (a.type === 'ObjectExpression') {
        for (const key of ['client', 'pool', 'postgres', 'sql', 'dialect', 'adapter', 'connection']) {
          const property = objectProperty(a, key);
          if (!property) continue;
          const found = this.wrappedPool([property.value as TSESTree.Expression], depth + 1);
          if (found) return found;
        }
        continue;
      }
      const value = this.value(a);
      if ((value?.kind === 'pool' || value?.kind === 'prisma-adapter') && value.configId) return value.configId;
      if (value?.kind === 'conn' && value.conn.configId) return value.conn.configId;
    }
    return undefined;
  }

  /** What a call of a project function gives: its return value; a connection it checks out is a new one at each call. */
  private callResult(fn: Extract<Value, { kind: 'function' }>, call: Call): Value | undefined {
    const returned = fn.owner.returnsOf(fn.node, fn.env);
    if (!returned) return undefined;
    if (returned.kind === 'conn') {
      const c = returned.conn;
      if (c.origin === 'parameter') return undefined; // the function hands back what its caller gave it
      return this.conn(this.file.newConn(c.driver, c.use, c.origin, c.configId));
    }
    return fn.owner === this.file ? returned : this.file.adopt(returned, fn.owner as TsFile, span(call.callee));
  }

  private config(node: Node, driver: Driver, kind: 'pool' | 'client', args: readonly TSESTree.CallExpressionArgument[]): ConfigEntry {
    let entry = this.file.configByNode.get(node);
    if (!entry) {
      entry = makeConfig(this.file.model.file, node, driver, kind, args);
      this.file.configByNode.set(node, entry);
      this.file.configs.push(entry);
      const hooks = optionHooks(driver, args);
      // Reading how a pool is kept costs a look through its scope: the first pools of a file only (a file of thousands is generated code).
      if ((node.type === 'NewExpression' || node.type === 'CallExpression') && this.file.configs.length <= MAX_REUSE_READS) {
        const reuse = reuseOf(node, kind, hooks, this.file.program, this.file.functions);
        if (reuse) entry.config.reuse = reuse;
      }
      for (const hook of hooks) this.file.registerHook(hook, entry.config.id, this);
    }
    return entry;
  }

  private conn(conn: Conn): Value {
    this.state.set(conn, { kind: 'none' });
    return { kind: 'conn', conn };
  }

  /** The value of a parameter from its type annotation. */
  private parameterValue(param: Node): Value | undefined {
    const target = param.type === 'TSParameterProperty' ? param.parameter : param;
    const annotation = (target.type === 'AssignmentPattern' ? target.left : target) as { typeAnnotation?: TSESTree.TSTypeAnnotation };
    const type = annotation.typeAnnotation?.typeAnnotation;
    const known = type ? this.file.typeMeaning(type, this) : undefined;
    if (!known) return undefined;
    // `typeof db`: the value itself (a pool, most often).
    if ('kind' in known) return known.kind === 'pool' ? known : undefined;
    const label = type?.type === 'TSTypeReference' ? (type.typeName.type === 'Identifier' ? type.typeName.name : type.typeName.type === 'TSQualifiedName' ? type.typeName.right.name : 'typed') : 'typed';
    switch (known.what) {
      case 'pool':
        return { kind: 'pool', driver: known.driver };
      case 'tx': {
        const tx = this.file.txAt(`param@${param.range[0]}`, 'callback', `${label} parameter`, span(param));
        return { kind: 'tx', driver: known.driver, tx };
      }
      case 'checked-out':
      case 'client':
      case 'query-runner': {
        const conn = this.file.newConn(known.driver, known.what === 'client' ? 'dedicated' : 'pooled-client', 'parameter');
        this.state.set(conn, { kind: 'unknown' });
        return { kind: 'conn', conn };
      }
      default:
        return undefined;
    }
  }


  private bindPattern(pattern: Node, value: Value | undefined): void {
    if (pattern.type === 'Identifier') {
      this.env.vars.set(pattern.name, value);
      return;
    }
    for (const id of patternNames(pattern)) this.env.vars.set(id.name, undefined);
  }

  // ---- statements ------------------------------------------------------------------

  statements(body: readonly Node[]): void {
    // Function declarations are hoisted: bind their names first, so a call above the declaration knows what it returns.
    for (const s of body) {
      const d = s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration' ? s.declaration : s;
      if (d?.type === 'FunctionDeclaration' && d.id && !this.env.vars.has(d.id.name)) this.env.vars.set(d.id.name, { kind: 'function', node: d, owner: this.file, env: this.env });
    }
    for (const s of body) this.statement(s);
  }

  private statement(node: Node): void {
    switch (node.type) {
      case 'BlockStatement':
      case 'StaticBlock':
        this.statements(node.body);
        return;
      case 'ExpressionStatement':
        this.expression(node.expression);
        return;
      case 'VariableDeclaration':
        for (const d of node.declarations) {
          if (isRequire(d.init)) {
            this.bindRequire(d.id);
            continue;
          }
          if (d.init) this.expression(d.init);
          const value = d.init ? this.value(d.init) : undefined;
          const fromType = !value && d.id.type === 'Identifier' ? this.parameterValue(d.id) : undefined;
          this.bindPattern(d.id, value ?? fromType);
        }
        return;
      case 'ReturnStatement':
        if (node.argument) {
          // A returned promise runs when the caller awaits it.
          const returned = unwrap(node.argument);
          if (returned?.type === 'CallExpression' || returned?.type === 'TaggedTemplateExpression') this.file.awaited.add(returned);
          this.expression(node.argument);
          if (this.options.fn) this.file.recordReturn(this.options.fn, this.value(node.argument));
        }
        for (const frame of this.tries) frame.returns.push(this.state.clone());
        this.state = State.unreachable();
        return;
      case 'ThrowStatement':
        this.expression(node.argument);
        this.throwPoint();
        this.state = State.unreachable();
        return;
      case 'IfStatement': {
        this.expression(node.test);
        const before = this.state.clone();
        this.statement(node.consequent);
        const afterThen = this.state;
        this.state = before;
        if (node.alternate) this.statement(node.alternate);
        this.state = State.merge([afterThen, this.state]);
        return;
      }
      case 'ForStatement':
        if (node.init) node.init.type === 'VariableDeclaration' ? this.statement(node.init) : this.expression(node.init);
        if (node.test) this.expression(node.test);
        this.loop(() => {
          this.statement(node.body);
          if (node.update) this.expression(node.update);
        });
        return;
      case 'ForInStatement':
      case 'ForOfStatement':
        this.expression(node.right);
        this.loop(() => {
          if (node.left.type === 'VariableDeclaration') for (const d of node.left.declarations) this.bindPattern(d.id, undefined);
          this.statement(node.body);
        });
        return;
      case 'WhileStatement':
        this.expression(node.test);
        this.loop(() => this.statement(node.body));
        return;
      case 'DoWhileStatement':
        this.loop(() => {
          this.statement(node.body);
          this.expression(node.test);
        }, true);
        return;
      case 'TryStatement':
        this.tryStatement(node);
        return;
      case 'SwitchStatement': {
        this.expression(node.discriminant);
        const start = this.state.clone();
        const ends: State[] = [];
        this.loops.push(ends);
        let fallthrough: State | undefined;
        for (const c of node.cases) {
          this.state = fallthrough ? State.merge([start.clone(), fallthrough]) : start.clone();
          if (c.test) this.expression(c.test);
          this.statements(c.consequent);
          fallthrough = this.state;
        }
        this.loops.pop();
        const hasDefault = node.cases.some((c) => c.test === null);
        this.state = State.merge([...ends, ...(fallthrough ? [fallthrough] : []), ...(hasDefault ? [] : [start])]);
        return;
      }
      case 'BreakStatement':
      case 'ContinueStatement':
        this.loops[this.loops.length - 1]?.push(this.state.clone());
        this.state = State.unreachable();
        return;
      case 'LabeledStatement':
        this.statement(node.body);
        return;
      case 'FunctionDeclaration':
        this.nestedFunction(node, node.id?.name, false);
        return;
      case 'ClassDeclaration':
      case 'ClassExpression':
        this.classBody(node);
        return;
      case 'ExportNamedDeclaration':
        if (node.declaration) this.statement(node.declaration);
        return;
      case 'ExportDefaultDeclaration':
        if (isFunction(node.declaration)) this.nestedFunction(node.declaration, (node.declaration as { id?: TSESTree.Identifier | null }).id?.name ?? 'default', false);
        else if (node.declaration.type === 'ClassDeclaration') this.classBody(node.declaration);
        else this.expression(node.declaration as Node);
        return;
      case 'ImportDeclaration':
      case 'TSTypeAliasDeclaration':
      case 'TSInterfaceDeclaration':
      case 'TSDeclareFunction':
      case 'EmptyStatement':
      case 'DebuggerStatement':
        return;
      default:
        for (const child of children(node)) this.isStatementLike(child) ? this.statement(child) : this.expression(child);
    }
  }

  private isStatementLike(node: Node): boolean {
    return node.type.endsWith('Statement') || node.type.endsWith('Declaration') || node.type === 'TSModuleBlock';
  }

  private loop(body: () => void, atLeastOnce = false): void {
    const before = this.state.clone();
    const exits: State[] = [];
    this.loops.push(exits);
    body();
    this.loops.pop();
    this.state = State.merge([this.state, ...exits, ...(atLeastOnce ? [] : [before])]);
  }

  private tryStatement(node: TSESTree.TryStatement): void {
    const frame: TryFrame = { node, phase: 'block', throws: [], returns: [] };
    this.tries.push(frame);
    this.statement(node.block);
    this.tries.pop();
    const afterBlock = this.state;
    let afterHandler = State.unreachable();
    let handlerFrame: TryFrame | undefined;
    if (node.handler) {
      handlerFrame = { node, phase: 'handler', throws: [], returns: [] };
      this.state = State.merge(frame.throws.map((s) => s.asError()));
      if (frame.throws.length === 0) this.state = afterBlock.clone();
      if (node.handler.param) this.bindPattern(node.handler.param, undefined);
      this.tries.push(handlerFrame);
      this.statement(node.handler.body);
      this.tries.pop();
      afterHandler = this.state;
    }
    const pending = node.handler ? handlerFrame!.throws : frame.throws;
    const returns = [...frame.returns, ...(handlerFrame?.returns ?? [])];
    if (node.finalizer) {
      const normal = State.merge([afterBlock, afterHandler]);
      // Every way into the finally block, for what it does (release, rollback) on each of them: walked once,
      // the abrupt ways tagged, so that what comes after the try statement goes on from the normal ones only.
      const id = node.range[0];
      this.state = State.merge([normal, ...[...pending.map((s) => s.asError()), ...returns].map((s) => s.tagged(id))]);
      this.statement(node.finalizer);
      this.state = this.state.withoutTag(id, normal.reachable);
    } else {
      this.state = State.merge([afterBlock, afterHandler]);
    }
    // Exceptions not caught here go on to the enclosing try.
    const outer = this.tries[this.tries.length - 1];
    if (outer) outer.throws.push(...pending);
  }

  // ---- functions and classes -------------------------------------------------------

  /** Walks a function declared here. Connections it captures are in an unknown state unless it runs now (a callback argument). */
  nestedFunction(fn: FunctionNode, name: string | undefined, runsNow: boolean, bind?: (walk: Walk) => void, extra: Partial<WalkOptions> = {}): void {
    // A declaration walked already (a call above it walked it): its sites are in the model.
    if (!runsNow && this.file.walked.has(fn)) return;
    this.file.walked.add(fn);
    const hook = this.file.hooks.get(fn);
    const state = this.state.clone();
    if (!runsNow) for (const conn of state.conns.keys()) state.set(conn, { kind: 'unknown' });
    const walk = new Walk(this.file, new Env(this.env), state, {
      name: name ?? this.options.name,
      thisEnv: fn.type === 'ArrowFunctionExpression' ? this.options.thisEnv : extra.thisEnv ?? this.options.thisEnv,
      callbackTxs: extra.callbackTxs ?? (runsNow ? this.options.callbackTxs : []),
      outerTries: extra.outerTries ?? (runsNow ? [...(this.options.outerTries ?? []), ...this.blockTries()] : []),
      arrayTx: extra.arrayTx,
      fn,
      callback: hook ? { configId: hook.configId, role: hook.role } : extra.callback ?? (runsNow ? this.options.callback : undefined),
    });
    for (const param of fn.params) {
      const value = walk.parameterValue(param);
      const pattern = param.type === 'TSParameterProperty' ? param.parameter : param;
      walk.bindPattern(pattern, value);
      // A callback run here gets its arguments from the code that runs it, not from a caller of ours.
      if (!runsNow) for (const id of patternNames(pattern)) walk.env.params.add(id.name);
    }
    bind?.(walk);
    if (hook && fn.params[0]) {
      // The connection the pool is setting up: one connection, outside any transaction.
      const driver = this.file.configById(hook.configId)?.config.driver ?? 'unknown';
      const conn = this.file.newConn(driver, 'pooled-client', 'task', hook.configId);
      walk.state.set(conn, { kind: 'none' });
      walk.bindPattern(fn.params[0], { kind: 'conn', conn });
    }
    if (fn.body) {
      if (fn.body.type === 'BlockStatement') walk.statements(fn.body.body);
      else {
        const body = unwrap(fn.body as Node);
        if (body?.type === 'CallExpression' || body?.type === 'TaggedTemplateExpression') this.file.awaited.add(body);
        walk.expression(fn.body as Node);
        this.file.recordReturn(fn, walk.value(fn.body as Node));
      }
    }
  }

  private classBody(node: TSESTree.ClassDeclaration | TSESTree.ClassExpression): void {
    const thisEnv = new Map<string, Value | undefined>();
    const members = node.body.body;
    const ctor = members.find((m): m is TSESTree.MethodDefinition => m.type === 'MethodDefinition' && m.kind === 'constructor');
    for (const m of members) {
      if (m.type === 'PropertyDefinition' && m.value && !m.computed) {
        const name = m.key.type === 'Identifier' ? m.key.name : m.key.type === 'PrivateIdentifier' ? `#${m.key.name}` : undefined;
        if (name) thisEnv.set(name, this.value(m.value));
      }
    }
    if (ctor) {
      for (const p of ctor.value.params) {
        if (p.type === 'TSParameterProperty' && p.parameter.type === 'Identifier') thisEnv.set(p.parameter.name, this.parameterValue(p));
      }
      // this.pool = new Pool(...) in the constructor.
      const visit = (n: Node) => {
        if (n.type === 'AssignmentExpression' && n.left.type === 'MemberExpression' && unwrap(n.left.object)?.type === 'ThisExpression') {
          const name = propertyName(n.left);
          if (name && !thisEnv.has(name)) thisEnv.set(name, this.value(n.right));
        }
        if (!isFunction(n) || n === ctor.value) for (const c of children(n)) visit(c);
      };
      visit(ctor.value);
    }
    for (const m of members) {
      if (m.type === 'MethodDefinition' && m.value.type === 'FunctionExpression') {
        const name = m.key.type === 'Identifier' ? m.key.name : m.key.type === 'PrivateIdentifier' ? `#${m.key.name}` : undefined;
        this.nestedFunction(m.value, name, false, undefined, { thisEnv });
      } else if (m.type === 'PropertyDefinition' && m.value) {
        const value = unwrap(m.value);
        if (isFunction(value)) this.nestedFunction(value, m.key.type === 'Identifier' ? m.key.name : undefined, false, undefined, { thisEnv });
        else this.expression(m.value);
      } else if (m.type === 'StaticBlock') {
        this.statements(m.body);
      }
    }
  }

  private blockTries(): TSESTree.TryStatement[] {
    return this.tries.filter((t) => t.phase === 'block').map((t) => t.node);
  }

  private handlerTries(): TSESTree.TryStatement[] {
    return this.tries.filter((t) => t.phase === 'handler').map((t) => t.node);
  }

  // ---- expressions -----------------------------------------------------------------

  expression(node: Node | null | undefined): void {
    if (!node) return;
    switch (node.type) {
      case 'ArrowFunctionExpression':
      case 'FunctionExpression':
        this.nestedFunction(node, this.options.name, false);
        return;
      case 'ClassExpression':
        this.classBody(node);
        return;
      case 'CallExpression':
        this.call(node);
        return;
      case 'NewExpression':
        // Made first: a pool's hooks in its options are walked knowing whose they are.
        this.value(node);
        for (const arg of node.arguments) this.argument(arg);
        this.expression(node.callee);
        this.afterCall(node, false);
        return;
      case 'TaggedTemplateExpression':
        this.expression(node.tag);
        for (const e of node.quasi.expressions) this.expression(e);
        if (!this.file.consumed.has(node)) this.taggedSite(node);
        this.throwPoint();
        return;
      case 'AwaitExpression': {
        const inner = unwrap(node.argument);
        if (inner?.type === 'TaggedTemplateExpression' || inner?.type === 'CallExpression') this.file.awaited.add(inner);
        this.expression(node.argument);
        return;
      }
      case 'AssignmentExpression':
        this.expression(node.right);
        if (node.left.type === 'Identifier') {
          this.env.assign(node.left.name, this.value(node.right));
        } else if (node.left.type === 'MemberExpression' && unwrap(node.left.object)?.type === 'ThisExpression') {
          const name = propertyName(node.left);
          if (name && this.options.thisEnv && this.value(node.right)) this.options.thisEnv.set(name, this.value(node.right));
        } else {
          this.expression(node.left);
        }
        return;
      case 'ConditionalExpression': {
        this.expression(node.test);
        const before = this.state.clone();
        this.expression(node.consequent);
        const a = this.state;
        this.state = before;
        this.expression(node.alternate);
        this.state = State.merge([a, this.state]);
        return;
      }
      default:
        for (const child of children(node)) {
          if (isFunction(child)) this.nestedFunction(child, this.options.name, false);
          else this.expression(child);
        }
    }
  }

  /** A call's argument: a function passed to a call runs now (map, Promise.all, forEach), so it sees the current state. */
  private argument(arg: Node): void {
    const a = unwrap(arg);
    if (isFunction(a)) this.nestedFunction(a, this.options.name, true);
    else this.expression(arg);
  }

  private call(call: Call): void {
    // Made first: a pool's hooks in its options are walked knowing whose they are.
    this.value(call);
    const hook = eventHook(call);
    if (hook) {
      const method = methodOf(call);
      const on = method ? this.value(method.object) : undefined;
      if (on?.kind === 'pool' && on.configId) this.file.registerHook(hook, on.configId, this);
    }
    if (this.transactionCallback(call)) return;
    const query = this.file.consumed.has(call) ? undefined : this.builderQuery(call) ?? this.queryOf(call);
    this.expression(call.callee);
    for (const arg of call.arguments) this.argument(arg);
    let db = false;
    if (query) {
      db = true;
      this.site(query);
    }
    db = this.connectionCall(call) || db;
    this.afterCall(call, db);
  }

  /** Work and side effects of a call that is not the database's, and the exception it may throw. */
  private afterCall(call: Call | TSESTree.NewExpression, db: boolean): void {
    if (!db && call.type === 'CallExpression') {
      const method = methodOf(call);
      const onDb = method ? this.isDbValue(this.value(method.object)) : false;
      if (!onDb && this.isWork(call)) this.markWork();
      this.sideEffect(call);
    }
    this.throwPoint();
  }

  private isDbValue(v: Value | undefined): boolean {
    return !!v && (v.kind === 'pool' || v.kind === 'conn' || v.kind === 'tx' || v.kind === 'builder' || v.kind === 'tag');
  }

  private isWork(call: Call): boolean {
    const callee = unwrap(call.callee);
    if (!callee) return false;
    if (callee.type === 'Identifier') return !PURE_GLOBALS.has(callee.name) && !this.file.queryFunctions.includes(callee.name);
    if (callee.type === 'MemberExpression') {
      const name = propertyName(callee);
      const root = dottedName(callee.object);
      if (root && (LOGGER_NAMES.test(root) || PURE_GLOBALS.has(root.split('.')[0]))) return false;
      if (name && PURE_METHODS.has(name)) return false;
      return true;
    }
    return true;
  }

  /** The transactions the current point runs in, with a claim seen: callback ones and BEGIN ones. */
  private currentTxs(): Tx[] {
    const txs = new Set<Tx>(this.options.callbackTxs ?? []);
    if (this.options.arrayTx) txs.add(this.options.arrayTx.tx);
    for (const atoms of this.state.conns.values()) for (const a of atoms.values()) if (a.kind === 'open' && !a.error) txs.add(a.tx);
    return [...txs];
  }

  private markWork(): void {
    if (!this.state.reachable) return;
    for (const tx of this.currentTxs()) {
      if (!tx.claim) continue;
      tx.work = true;
      for (const t of [...(this.options.outerTries ?? []), ...this.blockTries()]) tx.tries.add(t);
    }
  }

  private sideEffect(call: Call): void {
    const callee = unwrap(call.callee);
    const name = dottedName(callee);
    if (!name) return;
    if (!typescriptSideEffect(name)) return;
    const tx = this.currentTxs()[0];
    const scope: Scope = tx ? { kind: 'transaction', id: tx.info.id, form: tx.info.form, rollsBackOnError: true } : { kind: 'unknown' };
    this.file.model.sideEffects.push({ span: span(call), callee: name, scope });
  }

  private throwPoint(): void {
    const frame = this.tries[this.tries.length - 1];
    if (frame && this.state.reachable) frame.throws.push(this.state.clone());
  }

  // ---- transactions by callback ----------------------------------------------------

  private transactionCallback(call: Call): boolean {
    const method = methodOf(call);
    if (!method) return false;
    const fn = callbackArg(call);
    const on = this.value(method.object);
    const receiverName = dottedName(method.object) ?? method.name;
    const driverOf = (fallback: Driver): Driver => driverOfValue(on) ?? (this.file.fileDriver !== 'unknown' ? this.file.fileDriver : fallback);
    const configId = on && 'configId' in on ? on.configId : undefined;
    let form: string | undefined;
    let driver: Driver = 'unknown';
    let kind: 'tx' | 'conn' | 'same-tx' = 'tx';
    if (fn) {
      if (method.name === 'begin' && (!on || postgresApi(driverOfValue(on)))) {
        form = 'sql.begin';
        driver = driverOfValue(on) ?? 'postgres.js';
      } else if (method.name === 'savepoint' && on?.kind === 'tx') {
        kind = 'same-tx';
      } else if (method.name === 'transaction' || method.name === 'tx' || method.name === 'txIf' || method.name === '$transaction') {
        driver = driverOf(method.name === '$transaction' ? 'prisma' : method.name.startsWith('tx') ? 'pg-promise' : 'unknown');
        form = `${receiverName}.${method.name}`;
      } else if (method.name === 'execute' && on?.kind === 'builder') {
        driver = 'kysely';
        if (on.of === 'kysely-transaction') form = 'db.transaction().execute';
        else kind = 'conn';
      } else if ((method.name === 'task' || method.name === 'taskIf') && (!on || ('driver' in on && on.driver === 'pg-promise'))) {
        kind = 'conn';
        driver = 'pg-promise';
      } else if (method.name === 'connect' && on?.kind === 'pool' && on.driver === 'slonik') {
        kind = 'conn';
        driver = 'slonik';
      } else {
        return false;
      }
    } else if ((method.name === '$transaction' || (method.name === 'transaction' && driverOfValue(on) === 'neon')) && call.arguments.length > 0 && unwrap(call.arguments[0])?.type === 'ArrayExpression' && on) {
      // prisma.$transaction([prisma.$executeRaw`...`, ...]), Neon's sql.transaction([sql`...`, ...]): every query in the array runs in one transaction.
      const tx = this.file.txAt(`call@${call.range[0]}`, 'callback', `${receiverName}.$transaction([...])`, span(call.callee));
      this.expression(call.callee);
      const inner = new Walk(this.file, this.env, this.state, { ...this.options, arrayTx: { on, tx } });
      inner.tries = this.tries;
      inner.loops = this.loops;
      for (const arg of call.arguments) inner.expression(arg);
      this.state = inner.state;
      this.throwPoint();
      return true;
    } else {
      return false;
    }

    this.expression(call.callee);
    for (const arg of call.arguments) if (unwrap(arg) !== fn) this.argument(arg);
    const param = fn!.params[0];
    if (kind === 'same-tx' && on?.kind === 'tx') {
      this.nestedFunction(fn!, this.options.name, true, (walk) => {
        if (param) walk.bindPattern(param, on);
      });
    } else if (kind === 'conn') {
      this.nestedFunction(fn!, this.options.name, true, (walk) => {
        if (!param) return;
        const conn = this.file.newConn(driver, 'pooled-client', 'task', configId);
        walk.state.set(conn, { kind: 'none' });
        walk.bindPattern(param, { kind: 'conn', conn });
      });
    } else {
      const tx = this.file.txAt(`call@${call.range[0]}`, 'callback', form!, span(call.callee));
      const entry = this.file.configById(configId);
      if (entry && driver === 'postgres.js' && !entry.transactions.some((s) => s.start === call.range[0])) entry.transactions.push(span(call));
      this.nestedFunction(fn!, this.options.name, true, (walk) => {
        if (param) walk.bindPattern(param, { kind: 'tx', driver, tx, configId });
      }, { callbackTxs: [...(this.options.callbackTxs ?? []), tx] });
    }
    this.throwPoint();
    return true;
  }

  // ---- calls on connections: BEGIN by method, release ------------------------------

  /** Returns true when the call is the database's own (not the job's work). */
  private connectionCall(call: Call): boolean {
    const method = methodOf(call);
    if (!method) return false;
    const on = this.value(method.object);
    if (on?.kind !== 'conn') return this.isDbValue(on);
    const conn = on.conn;
    if (conn.origin === 'adapter-tx') {
      if (method.name === 'commit' || method.name === 'rollback') this.state.set(conn, { kind: 'none' });
      return true;
    }
    if (conn.origin === 'query-runner') {
      if (method.name === 'startTransaction') this.begin(conn, call, 'queryRunner.startTransaction()');
      if (method.name === 'commitTransaction' || method.name === 'rollbackTransaction') this.state.set(conn, { kind: 'none' });
      return true;
    }
    if (method.name === 'release' && (conn.origin === 'checkout' || conn.origin === 'reserve')) {
      const destroys = call.arguments.some((a) => {
        const v = unwrap(a);
        return !(v?.type === 'Literal' && (v.value === false || v.value === null)) && !(v?.type === 'Identifier' && v.name === 'undefined');
      });
      if (!destroys) this.release(conn, call);
      this.state.set(conn, { kind: 'none' });
    }
    return true;
  }

  private begin(conn: Conn, at: Node, form: string): void {
    const tx = this.file.txAt(`begin@${at.range[0]}`, 'flow', form, span(at));
    this.state.set(conn, { kind: 'open', tx, error: false });
  }

  private release(conn: Conn, call: Call): void {
    if (!this.state.reachable) return;
    const atoms = this.state.atoms(conn);
    const open = atoms.filter((a): a is Extract<Atom, { kind: 'open' }> => a.kind === 'open');
    const normal = open.find((a) => !a.error);
    const failed = open.find((a) => a.error);
    const chosen = normal ?? failed;
    const site = { span: span(call) } as FileModel['releases'][number];
    if (chosen) site.openTransaction = { beginSpan: chosen.tx.info.beginSpan, reason: normal ? 'no-end' : 'error-path' };
    this.file.model.releases.push(site);
  }

  // ---- SQL sites -------------------------------------------------------------------

  private queryOf(call: Call): QueryCall | undefined {
    const method = methodOf(call);
    const arg0 = unwrap(call.arguments[0] as Node | undefined);
    if (!method) {
      const name = dottedName(call.callee);
      if (name && arg0 && this.file.queryFunctions.some((f) => f === name || name.endsWith(`.${f}`))) {
        return { text: arg0, on: undefined, driver: this.file.fileDriver, placeholders: 'dollar', at: call };
      }
      return undefined;
    }
    const on = this.value(method.object);
    const onDriver = driverOfValue(on);
    const driver = onDriver ?? this.file.fileDriver;
    const object = unwrap(method.object);
    const imports = this.file.imports.drivers;

    // kysely: sql`...`.execute(db)
    if (method.name === 'execute' && object?.type === 'TaggedTemplateExpression') {
      const tag = this.value(object.tag);
      if (tag?.kind === 'tag' || dottedName(object.tag) === 'sql') {
        this.file.consumed.add(object);
        return { text: object.quasi, tagged: true, on: this.value(call.arguments[0] as Node), driver: 'kysely', placeholders: 'dollar', at: call };
      }
    }
    if (!arg0) return undefined;
    const customName = dottedName(call.callee);
    if (customName && this.file.queryFunctions.some((f) => f === customName || customName.endsWith(`.${f}`))) {
      return this.textArg(arg0, on, driver, 'dollar', call);
    }
    switch (method.name) {
      case 'query':
        if (arg0.type === 'TaggedTemplateExpression') return this.taggedArg(arg0, on, driver, call);
        if (onDriver === 'sequelize') return this.sequelizeQuery(arg0, on, call);
        return this.textArg(arg0, on, driver, 'dollar', call);
      case 'unsafe':
        if (postgresApi(onDriver) || (!on && imports.includes('postgres.js'))) return this.textArg(arg0, on, onDriver ?? 'postgres.js', 'dollar', call);
        return undefined;
      case 'executeQuery': {
        // Kysely's connection.executeQuery(CompiledQuery.raw(text, params)) (in onCreateConnection hooks).
        const compiled = arg0.type === 'CallExpression' ? methodOf(arg0) : undefined;
        if (compiled?.name === 'raw' && dottedName(compiled.object)?.endsWith('CompiledQuery') && arg0.type === 'CallExpression' && arg0.arguments[0]) {
          this.file.consumed.add(arg0);
          const query = this.textArg(unwrap(arg0.arguments[0] as Node)!, on, 'kysely', 'dollar', call);
          query.values = arg0.arguments[1] ? { kind: 'array', node: arg0.arguments[1] as Node } : undefined;
          return query;
        }
        return undefined;
      }
      case 'queryRaw':
      case 'executeRaw':
        // A Prisma driver adapter (or its transaction): { sql, args }.
        if (onDriver === 'prisma' && arg0.type === 'ObjectExpression') return this.textArg(arg0, on, 'prisma', 'dollar', call);
        return undefined;
      case 'rpc':
        if (onDriver === 'supabase') return this.rpcCall(call, on);
        return undefined;
      case 'raw':
        if (onDriver === 'knex' || (!on && imports.includes('knex'))) return this.textArg(arg0, on, 'knex', 'qmark', call);
        if (onDriver === 'drizzle' && arg0) return this.textArg(arg0, on, 'drizzle', 'dollar', call);
        return undefined;
      case 'execute':
        if (arg0.type === 'TaggedTemplateExpression') return this.taggedArg(arg0, on, onDriver ?? 'drizzle', call);
        if (arg0.type === 'CallExpression' && methodOf(arg0)?.name === 'raw' && dottedName(methodOf(arg0)!.object) === 'sql') {
          return this.textArg(unwrap(arg0.arguments[0] as Node)!, on, 'drizzle', 'dollar', call);
        }
        return undefined;
      default:
        break;
    }
    if (PRISMA_UNSAFE_METHODS.has(method.name)) return this.textArg(arg0, on, 'prisma', 'dollar', call);
    if (PRISMA_TAG_METHODS.has(method.name) && arg0.type === 'TaggedTemplateExpression') return this.taggedArg(arg0, on, 'prisma', call);
    if (PG_PROMISE_METHODS.has(method.name) && (onDriver === 'pg-promise' || (!on && imports.includes('pg-promise')))) {
      return this.textArg(arg0, on, 'pg-promise', 'dollar', call);
    }
    if (SLONIK_METHODS.has(method.name) && arg0.type === 'TaggedTemplateExpression' && (onDriver === 'slonik' || (!on && imports.includes('slonik')))) {
      return this.taggedArg(arg0, on, 'slonik', call);
    }
    return undefined;
  }

  private taggedArg(tagged: TSESTree.TaggedTemplateExpression, on: Value | undefined, driver: Driver, call: Call): QueryCall | undefined {
    this.file.consumed.add(tagged);
    return { text: tagged.quasi, tagged: true, on, driver, placeholders: 'dollar', at: call };
  }

  private textArg(arg: Node, on: Value | undefined, driver: Driver, placeholders: PlaceholderStyle, call: Call): QueryCall {
    // node-postgres / pg-promise query config: { name, text, values }.
    let object: Node | undefined = arg;
    let pinned = false;
    if (object.type === 'Identifier' || object.type === 'MemberExpression') {
      const init = constantInit(object, this.file.resolveContext);
      if (init?.type === 'ObjectExpression' || (init?.type === 'NewExpression' && dottedName(init.callee)?.endsWith('PreparedStatement'))) {
        object = init;
        pinned = true;
      }
    }
    if (object.type === 'NewExpression' && dottedName(object.callee)?.endsWith('PreparedStatement')) object = unwrap(object.arguments[0] as Node);
    if (object?.type === 'ObjectExpression') {
      // node-postgres { text, values }; a Prisma driver adapter's { sql, args }.
      const text = objectProperty(object, 'text') ?? objectProperty(object, 'sql');
      const name = objectProperty(object, 'name');
      const valuesProperty = objectProperty(object, 'values') ?? objectProperty(object, 'args');
      const preparedName = name ? stringValue(name.value as Node) : undefined;
      if (text) {
        const values: ValuesSource | undefined = valuesProperty ? { kind: 'array', node: valuesProperty.value as Node } : this.valuesOf(call, driver);
        return { text: unwrap(text.value as Node)!, on, driver, placeholders, at: call, preparedName, pinnedTo: pinned ? span(arg) : undefined, values };
      }
    }
    return { text: arg, on, driver, placeholders, at: call, values: this.valuesOf(call, driver) };
  }

  /** An ORM builder chain that ends here (Drizzle, Kysely, Knex): the SQL it sends. Drizzle's pgPolicy(...) and enableRLS(): the DDL drizzle-kit writes. */
  private builderQuery(call: Call): QueryCall | undefined {
    const callee = unwrap(call.callee);
    const calleeValue = callee?.type === 'Identifier' ? this.value(callee) : undefined;
    const method = methodOf(call);
    if ((calleeValue?.kind === 'maker' && calleeValue.makes === 'policy') || method?.name === 'enableRLS') {
      const table = method?.name === 'enableRLS' ? this.value(method.object) : undefined;
      const owner = table?.kind === 'table' ? table.table : this.file.tables.find((t) => t.node.range[0] < call.range[0] && call.range[1] <= t.node.range[1])?.table;
      const host = owner ? policyText(call, owner.name, method?.name === 'enableRLS', this.file.text) : undefined;
      return host ? { text: call, synthesized: host, on: undefined, driver: 'drizzle', placeholders: 'dollar', at: call, scope: { kind: 'script' } } : undefined;
    }
    const built = builtQuery(call, this, this.file.awaited.has(call));
    if (!built) return undefined;
    for (const c of built.calls) this.file.consumed.add(c);
    return { text: call, synthesized: built.host, on: built.on, driver: built.driver, placeholders: 'dollar', at: call, values: { kind: 'args', nodes: built.values } };
  }

  /** Sequelize `sequelize.query(sql, { transaction, bind, replacements })`: it runs in `transaction` when one is given, else on any connection. */
  private sequelizeQuery(text: Node, on: Value | undefined, call: Call): QueryCall {
    const options = unwrap(call.arguments[1] as Node | undefined);
    const transaction = options?.type === 'ObjectExpression' ? objectProperty(options, 'transaction') : undefined;
    const replacements = options?.type === 'ObjectExpression' ? objectProperty(options, 'replacements') : undefined;
    let runsOn = on;
    if (transaction) {
      const tx = this.value(transaction.value as Node);
      runsOn = tx?.kind === 'tx' ? tx : undefined;
    } else if (this.file.imports.names.has('useCLS') || /\buseCLS\s*\(/.test(this.file.text)) {
      // With CLS, a query inside sequelize.transaction(fn) joins it without the option: we cannot tell which.
      runsOn = undefined;
    }
    return this.textArg(text, runsOn, 'sequelize', replacements ? 'qmark' : 'dollar', call);
  }

  /**
   * Supabase `supabase.rpc('fn', { a: x })`: PostgREST runs `SELECT fn(a => $1)`
   * in a transaction of its own on a connection of its pool. The site is that
   * call, so the routine's own facts (in the project's SQL) can be linked to it.
   */
  private rpcCall(call: Call, on: Value | undefined): QueryCall | undefined {
    const name = stringValue(call.arguments[0] as Node);
    if (!name || !/^[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)?$/.test(name)) return undefined;
    const args = unwrap(call.arguments[1] as Node | undefined);
    const named: { key: string; value: Node }[] = [];
    if (args?.type === 'ObjectExpression') {
      for (const p of args.properties) {
        if (p.type !== 'Property' || p.computed) return undefined;
        const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
        if (!key || !/^[A-Za-z_]\w*$/.test(key)) return undefined;
        named.push({ key, value: p.value as Node });
      }
    } else if (args) {
      return undefined;
    }
    const at = call.arguments[0] as Node;
    const sql = `SELECT ${name}(${named.map((a, i) => `${a.key} => $${i + 1}`).join(', ')})`;
    return { text: at, synthesized: synthesizedText(sql, span(call)), on, driver: 'supabase', placeholders: 'dollar', at: call, values: { kind: 'args', nodes: named.map((a) => a.value) } };
  }

  /** The values a query call passes after its SQL text. */
  private valuesOf(call: Call, driver: Driver): ValuesSource | undefined {
    const rest = call.arguments.slice(1) as Node[];
    const second = unwrap(rest[0]);
    if (!second) return undefined;
    const method = methodOf(call)?.name;
    if (driver === 'prisma' && method && PRISMA_UNSAFE_METHODS.has(method)) return { kind: 'args', nodes: rest };
    if (driver === 'sequelize' && second.type === 'ObjectExpression') {
      const bind = objectProperty(second, 'bind') ?? objectProperty(second, 'replacements');
      return bind ? { kind: 'array', node: bind.value as Node } : undefined;
    }
    if (second.type === 'ArrayExpression' || second.type === 'Identifier' || second.type === 'MemberExpression') return { kind: 'array', node: second };
    if (driver === 'pg-promise' && second.type !== 'ObjectExpression' && !isFunction(second)) return { kind: 'single', node: second };
    return undefined;
  }

  private taggedSite(node: TSESTree.TaggedTemplateExpression): void {
    const tag = unwrap(node.tag);
    if (!tag) return;
    // prisma.$executeRaw`...`
    if (tag.type === 'MemberExpression' && PRISMA_TAG_METHODS.has(propertyName(tag) ?? '')) {
      this.site({ text: node.quasi, tagged: true, on: this.value(tag.object), driver: 'prisma', placeholders: 'dollar', at: node });
      return;
    }
    const value = this.value(tag);
    if (value?.kind === 'tag' || value?.kind === 'maker' || value?.kind === 'module') return;
    const tagDriver = driverOfValue(value);
    // postgres.js and Bun sql`...`, Neon's neon()`...`, @vercel/postgres sql`...`: the tagged template is the query.
    if (value && (value.kind === 'pool' || value.kind === 'conn' || value.kind === 'tx') && (postgresApi(tagDriver) || tagDriver === 'neon' || tagDriver === 'vercel-postgres')) {
      this.site({ text: node.quasi, tagged: true, on: value, driver: tagDriver!, placeholders: 'dollar', at: node });
      return;
    }
    if (value) return;
    // A tag we cannot resolve that is awaited runs the query (postgres.js style); others may be fragments.
    if (tag.type === 'Identifier' && (this.file.awaited.has(node) || this.file.imports.drivers.includes('postgres.js')) && !this.file.imports.names.has(tag.name)) {
      this.site({ text: node.quasi, tagged: true, on: undefined, driver: this.file.imports.drivers.includes('postgres.js') ? 'postgres.js' : 'unknown', placeholders: 'dollar', at: node });
    }
  }

  private site(query: QueryCall): void {
    let host: HostText | undefined;
    if (query.synthesized) host = query.synthesized;
    else if (query.tagged && query.text.type === 'TemplateLiteral') host = templateText(query.text, this.file.text);
    else host = resolveText(query.text, this.file.resolveContext);
    if (!host) return;
    if (query.pinnedTo) host = { ...host, pinned: query.pinnedTo };
    const extraHoles = query.driver === 'pg-promise' ? pgPromiseHoles(host.text) : [];
    const analysis = analyzeHostText(host, query.placeholders, extraHoles);
    // SQL we cannot parse is unknown here, not an error: ESLint has no place for it and the text may not be SQL at all.
    analysis.errors = [];
    nameHoleTables(analysis, holeExpressions(host, query.text, extraHoles), this.file.text);
    if (analysis.statements.length === 0) return;
    const placed = this.placement(query.on, query.driver);
    const { connection, tx } = placed;
    const scope = query.scope ?? placed.scope;
    const site: SqlSite = {
      span: host.pinned ?? host.span,
      analysis,
      scope,
      connection,
      driver: query.driver,
    };
    if (this.options.name) site.functionName = this.options.name;
    if (query.preparedName) site.preparedName = query.preparedName;
    if (this.options.callback) site.callback = { ...this.options.callback };
    const params = hostParams(
      host,
      query.text,
      query.placeholders,
      extraHoles,
      query.values,
      (node) => classifyValue(node, (name) => this.env.isParameter(name), (n) => constantInit(n, this.file.resolveContext)),
      (node) => constantInit(node, this.file.resolveContext),
    );
    if (params) site.params = params;
    this.file.model.sites.push(site);
    const meta: SiteMeta = { site, tx, inTry: [...(this.options.outerTries ?? []), ...this.blockTries()], inHandler: this.handlerTries() };
    if (query.on?.kind === 'conn') meta.mayBeIn = this.state.atoms(query.on.conn).flatMap((a) => (a.kind === 'open' ? [a.tx] : []));
    this.file.metas.push(meta);
    this.siteEffects(query, site);
  }

  /** BEGIN/COMMIT/ROLLBACK in the site's SQL move its connection's state; a claim marks its transaction. */
  private siteEffects(query: QueryCall, site: SqlSite): void {
    const on = query.on;
    const tx = this.txOfSite(on);
    if (tx && !tx.claim) {
      for (const statement of site.analysis.statements) {
        const claim = statement.lockingReads.find((r) => r.skipLocked);
        if (claim) {
          tx.claim = { site, statement, tables: claim.tables };
          for (const t of [...(this.options.outerTries ?? []), ...this.blockTries()]) tx.tries.add(t);
          break;
        }
      }
    }
    if (tx?.claim) {
      const claimed = new Set(tx.claim.tables.map(bare));
      const ends = (s: StatementFacts) =>
        s.rowWrites.some((w) => claimed.has(bare(w.table)) && (w.op === 'delete' || w.assignments.some((a) => STATUS_COLUMN.test(a.column) && endsRun(a.value))));
      if (site.analysis.statements.some(ends)) tx.finishes = true;
    }
    if (on?.kind !== 'conn') return;
    for (const statement of site.analysis.statements) {
      if (statement.transaction === 'begin') this.begin(on.conn, query.at, 'BEGIN');
      else if (statement.transaction === 'commit' || statement.transaction === 'rollback' || statement.transaction === 'prepare') this.state.set(on.conn, { kind: 'none' });
    }
  }

  private txOfSite(on: Value | undefined): Tx | undefined {
    if (on?.kind === 'tx') return on.tx;
    if (this.options.arrayTx && on === this.options.arrayTx.on) return this.options.arrayTx.tx;
    if (on?.kind === 'conn') return txOf(this.state.atoms(on.conn));
    return undefined;
  }

  /** Where a site runs: its transaction and its connection. */
  private placement(on: Value | undefined, driver: Driver): { scope: Scope; connection: ConnectionUse; tx?: Tx } {
    if (this.options.arrayTx && on === this.options.arrayTx.on) {
      const tx = this.options.arrayTx.tx;
      const configId = 'configId' in on ? on.configId : undefined;
      return { scope: txScope(tx), connection: { kind: 'pooled-client', configId }, tx };
    }
    // A receiver whose binding we cannot tell (a parameter without a type, a value from a package): unknown, whatever its name.
    if (!on) return { scope: { kind: 'unknown' }, connection: { kind: 'unknown' } };
    switch (on.kind) {
      case 'pool': {
        // A pool of one connection the script opens and ends: every call runs on that one connection.
        const single = this.file.configById(on.configId)?.config.reuse === 'single-connection';
        return { scope: { kind: 'autocommit' }, connection: { kind: single ? 'dedicated' : 'pool', configId: on.configId } };
      }
      case 'tx':
        return { scope: txScope(on.tx), connection: { kind: 'pooled-client', configId: on.configId }, tx: on.tx };
      case 'conn': {
        const atoms = this.state.atoms(on.conn);
        const tx = txOf(atoms);
        const scope: Scope = tx ? txScope(tx) : allNone(atoms) && this.state.reachable ? { kind: 'autocommit' } : { kind: 'unknown' };
        return { scope, connection: { kind: on.conn.use, configId: on.conn.configId }, tx };
      }
      default:
        return { scope: { kind: 'unknown' }, connection: { kind: 'unknown' } };
    }
    void driver;
  }
}

interface QueryCall {
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

function isRequire(node: Node | null | undefined): boolean {
  const n = unwrap(node);
  return n?.type === 'CallExpression' && n.callee.type === 'Identifier' && n.callee.name === 'require' && n.arguments.length === 1;
}

/** SQL text the front end writes itself, every character mapped to `at` (the call it stands for). */
function synthesizedText(sql: string, at: { start: number; end: number }): HostText {
  const out = new HostTextBuilder();
  out.push(sql, at.start, at.end);
  return out.done({ ...at });
}

/**
 * A hole where a table name stands (`UPDATE ${table} SET ...`) reads as the
 * analyzer's `pgq_param_N`: name it after the expression instead
 * (`${table}`, `${this_table}`), so the claim and the finish that interpolate
 * the same name are statements on the same table.
 */
function nameHoleTables(analysis: SqlAnalysis, holes: ReadonlyMap<number, Node>, source: string): void {
  if (holes.size === 0) return;
  const rename = (table: string): string => {
    const match = /^(?:(.*)\.)?pgq_param_(\d+)$/.exec(table);
    const node = match ? holes.get(Number(match[2])) : undefined;
    if (!match || !node) return table;
    const name = `\${${source.slice(node.range[0], node.range[1]).replace(/\s+/g, '').replace(/\./g, '_')}}`;
    return match[1] ? `${match[1]}.${name}` : name;
  };
  for (const statement of analysis.statements) {
    for (const w of statement.rowWrites) w.table = rename(w.table);
    for (const l of statement.lockingReads) l.tables = l.tables.map(rename);
    for (const p of statement.policies) p.table = rename(p.table);
    for (const r of statement.rowSecurity) r.table = rename(r.table);
  }
}

function tableValue(call: Call): Value | undefined {
  const table = readTable(call);
  return table ? { kind: 'table', table } : undefined;
}

function driverOfValue(v: Value | undefined): Driver | undefined {
  if (!v) return undefined;
  if (v.kind === 'conn') return v.conn.driver;
  return 'driver' in v ? v.driver : undefined;
}

function txScope(tx: Tx): Scope {
  return { kind: 'transaction', id: tx.info.id, form: tx.info.form, rollsBackOnError: true };
}

/** A status value that ends the run (done, failed, queued again), not one that marks it running. */
function endsRun(value: RowWrite['assignments'][number]['value']): boolean {
  const values = value.kind === 'literal' ? (typeof value.value === 'string' ? [value.value] : []) : value.kind === 'expression' ? value.strings ?? [] : [];
  if (value.kind === 'param') return true;
  return values.length > 0 && !values.some((v) => RUNNING_STATUS.test(v));
}

function bare(table: string): string {
  return table.slice(table.lastIndexOf('.') + 1);
}

export type { StatementFacts };
void annotatedType;
