// The walk over one Python file: which names hold pools, connections and
// cursors, where SQL is sent on them, and in which transaction. Module code,
// every function, pool callbacks (with the pool's connection), and functions
// called in the file with a known connection (walked at the call, once per
// call site, instead of on their own).
import type { Tree } from '@lezer/common';
import type { ConnectionUse, Driver, FileModel, HostParam, ResetCallback, Scope, SqlSite } from '../../model/index.ts';
import { bareTable, RUNNING_STATUS, STATUS_COLUMN } from '../../model/queue.ts';
import type { RowWrite } from '../../sql/index.ts';
import type { FrontEndOptions } from '../types.ts';
import { moduleConstants, qualifiedName, readImports, type Imports } from './imports.ts';
import { finishConfig, makerOf, readConfig, thresholdOf, type ConfigEntry, type ReadContext } from './pool-config.ts';
import type { ConnectionConfig } from '../../model/index.ts';
import {
  beganBySql,
  copyFlow,
  ended,
  endedBySql,
  enterTransaction,
  executed,
  initialFlow,
  leaveTransaction,
  mergeFlows,
  neverCommits,
  noteEnd,
  possibleImplicitIds,
  resetNumbering,
  scopeOf,
  type Conn,
  type Flow,
  type Origin,
} from './scopes.ts';
import { pythonSideEffect } from './side-effects.ts';
import { analyzeHostText, EXECUTE_METHODS, EXTRAS_FUNCTIONS, OPAQUE_METHODS } from './sql-sites.ts';
import { resolveText, type ResolveContext } from './strings.ts';
import { callParts, children, dottedName, keyword, methodCall, positional, span, unwrap, type Arg, type Node } from './syntax.ts';
import { psycopgPin } from './versions.ts';
import { ASYNCPG_RESET, ASYNCPG_RESET_REASON, isolationIsAutocommit, SESSION_CLASSES, SESSION_FACTORIES } from './drivers.ts';
import { DjangoContext } from './django.ts';
import { readListeners } from './events.ts';
import { ModelIndex } from './models.ts';
import { deleteInstance, djangoStatement, isOuterCall, sqlalchemyInstanceRead, sqlalchemyStatement, updateInstance, type BuiltStatement, type ModelRef, type OrmContext } from './orm.ts';
import { boundValues, hostParam, numberPlaceholders, paramsOf, resolveSettingNames, type BoundValues } from './params.ts';
import { MAX_MODULES, moduleValue, readModule, resolveModule, type ModuleSource } from './project.ts';
import { CONTROL_METHODS, placeholderStyle, poolSqlMethod, SQL_METHOD_NAMES, sqlMethodOf } from './sql-sites.ts';
import type { HostText } from './strings.ts';

/** Drivers of PostgreSQL alone: SQL they are given that does not parse is a bug of the code, not another dialect. */
const POSTGRES_ONLY_DRIVERS: ReadonlySet<Driver> = new Set<Driver>(['psycopg', 'psycopg2', 'asyncpg']);

type Binding =
  /** A pool, or a SQLAlchemy engine (`autocommit`: engine.execution_options(isolation_level=...)). */
  | { kind: 'pool'; entry?: ConfigEntry; driver: Driver; autocommit?: boolean | 'unknown' }
  | { kind: 'conn'; conn: Conn }
  | { kind: 'cursor'; conn: Conn }
  /** A SQLAlchemy sessionmaker (calling it gives a Session), or a scoped_session (also a Session itself). */
  | { kind: 'factory'; entry?: ConfigEntry; scoped: boolean };

/** A module-level or class-level name bound to a pool or a connection made by a call. */
type StaticBinding =
  | { kind: 'pool'; entry: ConfigEntry }
  | { kind: 'connect'; entry: ConfigEntry }
  | { kind: 'factory'; entry?: ConfigEntry; scoped: boolean }
  /** `session = Session(engine)` at module level: one Session for every job. */
  | { kind: 'session'; entry?: ConfigEntry };

interface SiteMeta {
  site: SqlSite;
  /** Try statements (by offset) whose body the site is in. */
  inTry: number[];
  /** The try statement whose except handler the site is in. */
  inHandler?: number;
  /** The implicit transactions the site may run in, where paths disagree (an except handler after a commit in the try). */
  mayBeIn?: string[];
}

export function analyzePython(model: FileModel, tree: Tree, text: string, options: FrontEndOptions): void {
  resetNumbering();
  new PythonFile(model, tree, text, options).run();
}

class PythonFile {
  readonly imports: Imports;
  readonly constants: Map<string, Node>;
  readonly entries = new Map<number, ConfigEntry>();
  readonly moduleDefs = new Map<string, Node>();
  readonly classMethods = new Map<string, Map<string, Node>>();
  readonly classOfDef = new Map<number, string>();
  readonly globals = new Map<string, StaticBinding>();
  readonly classAttrs = new Map<string, Map<string, StaticBinding>>();
  /** Defs walked at a call or as a callback: not walked again on their own. */
  readonly walkedAtCall = new Set<number>();
  readonly metas: SiteMeta[] = [];
  /** Transactions that were open while the code called something that is not SQL (the job's work). */
  readonly workIn = new Set<string>();
  readonly driverOfFile: Driver;
  readonly importsDriver: boolean;
  readonly importsPool: boolean;
  /** Django's connections and settings, when the file imports django. */
  readonly django: DjangoContext | undefined;
  readonly models = new ModelIndex();
  /** Project modules read for this file, by path (null: not readable). */
  private readonly projectModules = new Map<string, ModuleSource | null>();
  private connCount = 0;
  private readonly localsCache = new Map<number, Map<string, Node>>();

  constructor(
    readonly model: FileModel,
    readonly tree: Tree,
    readonly text: string,
    readonly options: FrontEndOptions,
  ) {
    this.imports = readImports(tree, text);
    this.constants = moduleConstants(tree, text);
    const psycopg = this.imports.modules.has('psycopg') || this.imports.modules.has('psycopg_pool');
    const psycopg2 = this.imports.modules.has('psycopg2');
    const sqlalchemy = this.imports.modules.has('sqlalchemy') || this.imports.modules.has('sqlmodel');
    const asyncpg = this.imports.modules.has('asyncpg');
    const django = this.imports.modules.has('django');
    // A file that imports SQLAlchemy talks to it (psycopg2 or asyncpg are then its DBAPI, or imported for their errors).
    this.driverOfFile = sqlalchemy
      ? 'sqlalchemy'
      : asyncpg && !psycopg && !psycopg2
        ? 'asyncpg'
        : django && !psycopg && !psycopg2
          ? 'django'
          : psycopg && !psycopg2
            ? 'psycopg'
            : psycopg2 && !psycopg
              ? 'psycopg2'
              : 'unknown';
    this.importsDriver = psycopg || psycopg2 || sqlalchemy || asyncpg;
    this.importsPool = this.imports.modules.has('psycopg_pool');
    this.django = django ? new DjangoContext(this) : undefined;
  }

  qualify = (node: Node) => qualifiedName(node, this.text, this.imports);

  qualifyName = (name: string): string | undefined => {
    const [first, ...rest] = name.split('.');
    const base = this.imports.names.get(first);
    return base ? [base, ...rest].join('.') : undefined;
  };

  /** A module of this project that this file imports from, parsed (within the per-file budget); its path is a dependency. */
  projectModule(module: string, level: number, from = this.model.file): ModuleSource | undefined {
    const path = resolveModule(from, module, level);
    if (!path) return undefined;
    if (this.projectModules.has(path)) return this.projectModules.get(path) ?? undefined;
    if (this.projectModules.size >= MAX_MODULES) return undefined;
    const source = readModule(path);
    this.projectModules.set(path, source);
    if (source) (this.model.dependencies ??= []).push(path);
    return source ?? undefined;
  }

  private readonly imported = new Map<string, StaticBinding | null>();
  private foreignCount = 0;

  /**
   * What a name imported from a project module is bound to there (`from
   * app.db import pool`: `pool = ConnectionPool(...)` in app/db.py): its
   * configuration as this file sees it, at the import. Unknown stays unknown.
   */
  importedStatic(name: string): StaticBinding | undefined {
    const known = this.imported.get(name);
    if (known !== undefined) return known ?? undefined;
    this.imported.set(name, null);
    const [first, attribute, ...rest] = name.split('.');
    const from = this.imports.fromImports.get(first);
    let binding: StaticBinding | undefined;
    if (from && attribute === undefined) {
      const source = this.projectModule(from.module, from.level);
      binding = source ? this.foreignBinding(source, from.name, from.span, 0) : undefined;
    } else if (from && rest.length === 0) {
      // `from . import db` / `from app import db`, then db.pool: a module of the project and its name.
      const source = this.projectModule(from.module ? `${from.module}.${from.name}` : from.name, from.level);
      binding = source ? this.foreignBinding(source, attribute, from.span, 0) : undefined;
    }
    this.imported.set(name, binding ?? null);
    return binding;
  }

  private foreignBinding(source: ModuleSource, name: string, at: { start: number; end: number }, depth: number): StaticBinding | undefined {
    if (depth > 2) return undefined;
    const value = moduleValue(source, name);
    if (!value) {
      // Re-exported: `from .pool import pool` in the package's __init__.py.
      const again = source.imports.fromImports.get(name);
      const next = again ? this.projectModule(again.module, again.level, source.path) : undefined;
      return next && again ? this.foreignBinding(next, again.name, at, depth + 1) : undefined;
    }
    const call = unwrap(value);
    const parts = call ? callParts(call, source.text) : undefined;
    if (!call || !parts) return undefined;
    const qualified = qualifiedName(parts.callee, source.text, source.imports);
    const ctx: ReadContext = {
      text: source.text,
      valueOf: (n) => source.constants.get(source.text.slice(n.from, n.to)),
      qualify: (n) => qualifiedName(n, source.text, source.imports),
      classSetsThreshold: () => false,
    };
    const maker = makerOf(qualified);
    if (maker) {
      const entry = readConfig(call, maker, ctx);
      // Seen from here: at the import. Its callbacks are that module's to analyse; here they are only named.
      entry.config.id = `${maker.kind}@import:${name}@${at.start}`;
      entry.config.span = { ...at };
      for (const arg of entry.callbackArgs) {
        entry.config.callbacks.push({ role: arg.role, name: source.text.slice(arg.node.from, arg.node.to), span: { ...at }, endsOutsideTransaction: 'unknown', resolved: false });
      }
      entry.callbackArgs = [];
      finishConfig(entry, psycopgPin(source.path));
      this.model.connections.push(entry.config);
      this.entries.set(-++this.foreignCount, entry);
      return maker.kind === 'pool' ? { kind: 'pool', entry } : { kind: 'connect', entry };
    }
    if (qualified && (SESSION_FACTORIES.has(qualified) || SESSION_CLASSES.has(qualified))) {
      const engineOf = (node: Node | undefined): ConfigEntry | undefined => {
        const engineName = dottedName(unwrap(node), source.text);
        if (!engineName) return undefined;
        const found = source.constants.has(engineName) || source.imports.fromImports.has(engineName) ? this.foreignBinding(source, engineName, at, depth + 1) : undefined;
        return found && found.kind !== 'connect' ? found.entry : undefined;
      };
      const bindArg = keyword(parts.args, 'bind') ?? positional(parts.args, 0);
      const scoped = /scoped_session$/.test(qualified);
      if (SESSION_CLASSES.has(qualified)) return { kind: 'session', entry: engineOf(bindArg) };
      if (scoped) {
        const inner = unwrap(positional(parts.args, 0));
        const innerName = inner?.name === 'VariableName' ? source.text.slice(inner.from, inner.to) : undefined;
        const factory = innerName ? this.foreignBinding(source, innerName, at, depth + 1) : undefined;
        if (factory?.kind === 'factory') return { kind: 'factory', entry: factory.entry, scoped: true };
        const innerParts = inner ? callParts(inner, source.text) : undefined;
        const innerBind = innerParts ? (keyword(innerParts.args, 'bind') ?? positional(innerParts.args, 0)) : undefined;
        return { kind: 'factory', entry: engineOf(innerBind), scoped: true };
      }
      return { kind: 'factory', entry: engineOf(bindArg), scoped: false };
    }
    return undefined;
  }

  private synthetic?: ConfigEntry;
  private assumedAsyncpg?: ConfigEntry;

  /**
   * An asyncpg pool this file only sees as a parameter (`pool: asyncpg.Pool`):
   * its release runs asyncpg's own reset unless its maker passed reset= (0.30+);
   * its statement cache size is not known.
   */
  assumedAsyncpgPool(at: Node): ConfigEntry {
    if (this.assumedAsyncpg) return this.assumedAsyncpg;
    const config: ConnectionConfig = {
      id: `asyncpg-parameter@${at.from}`,
      driver: 'asyncpg',
      kind: 'pool',
      span: span(at),
      preparedStatements: 'unknown',
      preparedReason: 'the pool is made elsewhere: its statement_cache_size is not known',
      autocommit: true,
      callbacks: [],
      driverReset: { statements: [...ASYNCPG_RESET], reason: `${ASYNCPG_RESET_REASON} (the pool is made elsewhere: assumed without a reset= of its own)` },
    };
    this.assumedAsyncpg = { config, maker: { kind: 'pool', driver: 'asyncpg', name: 'create_pool' }, threshold: { kind: 'default' }, callbackArgs: [] };
    this.model.connections.push(config);
    return this.assumedAsyncpg;
  }

  /** The engine of listeners on a class (Engine, Pool, Session) or an engine this file cannot see: the file's only engine, else one standing for it. */
  listenerEntry(at: Node): ConfigEntry {
    const engines = [...this.entries.values()].filter((e) => e.config.driver === 'sqlalchemy');
    if (engines.length === 1) return engines[0];
    if (this.synthetic) return this.synthetic;
    const config: ConnectionConfig = { id: `listener@${at.from}`, driver: 'sqlalchemy', kind: 'pool', span: span(at), preparedStatements: 'unknown', autocommit: 'unknown', callbacks: [] };
    this.synthetic = { config, maker: { kind: 'pool', driver: 'sqlalchemy', name: 'listener' }, threshold: { kind: 'default' }, callbackArgs: [] };
    this.entries.set(-1_000_000 - at.from, this.synthetic);
    this.model.connections.push(config);
    return this.synthetic;
  }

  nextConnId(): string {
    return `c${++this.connCount}`;
  }

  run(): void {
    this.indexDefs();
    this.readConfigs();
    this.readStaticBindings();
    readListeners(this);
    // Callbacks first: they are walked with the pool's connection and never on their own.
    for (const entry of this.entries.values()) this.walkCallbacks(entry);
    this.walkDjangoSignals();
    const moduleWalk = new Walk(this, { name: undefined });
    moduleWalk.walkBlock(children(this.tree.topNode));
    moduleWalk.finish();
    // Functions nobody in this file calls with a connection: those never called here first, so that
    // their callees are walked at the call.
    const called = this.calledDefs();
    const defs = this.allDefs();
    for (const def of [...defs.filter((d) => !called.has(d.from)), ...defs.filter((d) => called.has(d.from))]) {
      if (this.walkedAtCall.has(def.from)) continue;
      const className = this.classOfDef.get(def.from);
      const walk = new Walk(this, { name: defName(def, this.text), className, def });
      walk.bindParameters(def, [], false);
      walk.walkBlock(bodyStatements(def));
      walk.finish();
    }
    const pin = this.entries.size > 0 ? psycopgPin(this.model.file) : undefined;
    for (const entry of this.entries.values()) finishConfig(entry, pin);
    this.django?.finish();
    // Transactions rolled back on every path (SQLAlchemy's connect() without commit()) undo what they wrote.
    for (const site of this.model.sites) {
      if (site.scope.kind === 'transaction' && site.scope.id.includes('#') && neverCommits(site.scope.id)) site.scope = { ...site.scope, neverCommits: true };
    }
    this.collectJobTransactions();
  }

  /** Defs that some call in this file passes arguments to. */
  private calledDefs(): Set<number> {
    const called = new Set<number>();
    this.tree.iterate({
      enter: (ref) => {
        if (ref.name !== 'CallExpression') return;
        const call = callParts(ref.node, this.text);
        if (!call || call.args.length === 0) return;
        const def = this.resolveDef(call.callee, ref.node);
        if (def?.name === 'FunctionDefinition') called.add(def.from);
      },
    });
    return called;
  }

  private allDefs(): Node[] {
    const defs: Node[] = [];
    this.tree.iterate({
      enter: (ref) => {
        if (ref.name === 'FunctionDefinition') defs.push(ref.node);
      },
    });
    return defs;
  }

  private indexDefs(): void {
    for (const statement of children(this.tree.topNode)) {
      const def = unwrapDecorated(statement);
      if (def?.name === 'FunctionDefinition') this.moduleDefs.set(defName(def, this.text), def);
      if (def?.name === 'ClassDefinition') {
        const className = this.text.slice(def.getChild('VariableName')!.from, def.getChild('VariableName')!.to);
        const methods = new Map<string, Node>();
        for (const member of bodyStatements(def)) {
          const method = unwrapDecorated(member);
          if (method?.name !== 'FunctionDefinition') continue;
          methods.set(defName(method, this.text), method);
          this.classOfDef.set(method.from, className);
        }
        this.classMethods.set(className, methods);
      }
    }
  }

  readonly readContext: ReadContext = {
    text: '',
    valueOf: (node) => this.localValue(node) ?? this.constants.get(this.text.slice(node.from, node.to)),
    qualify: (node) => this.qualify(node),
    classSetsThreshold: (node) => {
      const name = dottedName(node, this.text);
      if (!name) return false;
      let found = false;
      this.tree.iterate({
        enter: (ref) => {
          if (found || ref.name !== 'ClassDefinition') return;
          const id = ref.node.getChild('VariableName');
          if (id && this.text.slice(id.from, id.to) === name && this.text.slice(ref.from, ref.to).includes('prepare_threshold')) found = true;
        },
      });
      return found;
    },
  };

  private readConfigs(): void {
    (this.readContext as { text: string }).text = this.text;
    this.tree.iterate({
      enter: (ref) => {
        if (ref.name !== 'CallExpression') return;
        const callee = ref.node.firstChild;
        const maker = callee ? makerOf(this.qualify(callee)) : undefined;
        if (!maker) return;
        const entry = readConfig(ref.node, maker, this.readContext);
        if (maker.kind === 'pool' && this.perTenant(ref.node)) entry.config.reuse = 'per-tenant';
        this.entries.set(ref.from, entry);
        this.model.connections.push(entry.config);
      },
    });
  }

  /**
   * A pool made for one tenant: built in a function from its tenant (schema,
   * customer, ...) parameter — `def pool_for(tenant_id): return
   * ConnectionPool(f"... options=-csearch_path=tenant_{tenant_id}")` — so it
   * serves that tenant only, and what one of its jobs sets cannot reach another
   * tenant's job.
   */
  private perTenant(call: Node): boolean {
    let def: Node | null = call.parent;
    while (def && def.name !== 'FunctionDefinition') def = def.parent;
    if (!def) return false;
    const tenantParams = parameters(def, this.text).map((p) => p.name).filter((n) => TENANT_PARAMETER.test(n));
    if (tenantParams.length === 0) return false;
    let uses = false;
    const visit = (node: Node) => {
      if (uses) return;
      if (node.name === 'VariableName' && tenantParams.includes(this.text.slice(node.from, node.to))) uses = true;
      for (const child of children(node)) visit(child);
    };
    const args = call.lastChild;
    if (args) visit(args);
    return uses;
  }

  /** `pool = ConnectionPool(...)` at module level, `self.pool = ...` in methods, class attributes. */
  private readStaticBindings(): void {
    const bindFrom = (target: Node | undefined, value: Node | undefined): [string, StaticBinding] | undefined => {
      const name = dottedName(target, this.text);
      const call = unwrap(value);
      if (!name || call?.name !== 'CallExpression') return undefined;
      const entry = this.entries.get(call.from);
      if (!entry) {
        const session = this.sessionMaker(call, (n) => this.staticEngine(n));
        return session ? [name, session] : undefined;
      }
      return [name, entry.maker.kind === 'pool' ? { kind: 'pool', entry } : { kind: 'connect', entry }];
    };
    const visitModule = (statements: Node[]) => {
      for (const statement of statements) {
        if (statement.name === 'AssignStatement') {
          const parts = children(statement);
          const found = bindFrom(parts[0], parts[parts.length - 1]);
          if (found) this.globals.set(found[0], found[1]);
        } else if (statement.name === 'WithStatement') {
          const items = withItems(statement);
          for (const item of items) {
            const found = item.target ? bindFrom(item.target, item.expr) : undefined;
            if (found) this.globals.set(found[0], found[1]);
          }
          visitModule(bodyStatements(statement));
        } else if (statement.name === 'IfStatement' || statement.name === 'TryStatement') {
          for (const body of statement.getChildren('Body')) visitModule(bodyStatements(body));
        }
      }
    };
    visitModule(children(this.tree.topNode));
    // `pool = None` at module level, `global pool; pool = await asyncpg.create_pool(...)` in a startup function.
    for (const def of this.moduleDefs.values()) {
      const globalNames = new Set<string>();
      this.iterateOwn(def, (node) => {
        if (node.name === 'ScopeStatement' && this.text.slice(node.from, node.from + 6) === 'global') {
          for (const part of children(node)) if (part.name === 'VariableName') globalNames.add(this.text.slice(part.from, part.to));
        }
      });
      if (globalNames.size === 0) continue;
      this.iterateOwn(def, (node) => {
        if (node.name !== 'AssignStatement') return;
        const parts = children(node);
        const found = bindFrom(parts[0], parts[parts.length - 1]);
        if (found && globalNames.has(found[0]) && !this.globals.has(found[0])) this.globals.set(found[0], found[1]);
      });
    }
    for (const [className, methods] of this.classMethods) {
      const attrs = new Map<string, StaticBinding>();
      for (const method of methods.values()) {
        this.iterateOwn(method, (node) => {
          if (node.name !== 'AssignStatement') return;
          const parts = children(node);
          const found = bindFrom(parts[0], parts[parts.length - 1]);
          if (found && found[0].startsWith('self.')) attrs.set(found[0], found[1]);
        });
      }
      // Class-level `pool = ConnectionPool(...)` is `self.pool` in the methods.
      const classNode = [...this.tree.topNode.getChildren('ClassDefinition'), ...this.tree.topNode.getChildren('DecoratedStatement')]
        .map(unwrapDecorated)
        .find((c) => c?.name === 'ClassDefinition' && this.text.slice(c.getChild('VariableName')!.from, c.getChild('VariableName')!.to) === className);
      if (classNode) {
        for (const statement of bodyStatements(classNode)) {
          if (statement.name !== 'AssignStatement') continue;
          const parts = children(statement);
          const found = bindFrom(parts[0], parts[parts.length - 1]);
          if (found) attrs.set(`self.${found[0]}`, found[1]);
        }
      }
      if (attrs.size > 0) this.classAttrs.set(className, attrs);
    }
  }

  /** The engine entry a module-level name (or `engine.sync_engine`, `engine.pool`) stands for. */
  staticEngine(node: Node | undefined): ConfigEntry | undefined {
    const name = dottedName(unwrap(node), this.text)?.replace(/\.(sync_engine|pool|engine)$/, '');
    const binding = name ? (this.globals.get(name) ?? (name.includes('.') ? undefined : this.importedStatic(name))) : undefined;
    if (binding?.kind === 'pool' && binding.entry.config.driver === 'sqlalchemy') return binding.entry;
    if (binding?.kind === 'factory' || binding?.kind === 'session') return binding.entry;
    return undefined;
  }

  /**
   * sessionmaker(bind=engine) / scoped_session(sessionmaker(...)) / Session(engine):
   * a session factory or a session, bound to the engine `engineOf` finds.
   */
  sessionMaker(call: Node, engineOf: (node: Node | undefined) => ConfigEntry | undefined): StaticBinding | undefined {
    const parts = callParts(call, this.text);
    const qualified = parts ? this.qualify(parts.callee) : undefined;
    if (!parts || !qualified) return undefined;
    const bindArg = keyword(parts.args, 'bind') ?? positional(parts.args, 0);
    if (SESSION_FACTORIES.has(qualified)) {
      const scoped = /scoped_session$/.test(qualified);
      const inner = scoped ? unwrap(positional(parts.args, 0) ?? keyword(parts.args, 'session_factory')) : undefined;
      const innerFactory = inner?.name === 'CallExpression' ? this.sessionMaker(inner, engineOf) : undefined;
      const entry = innerFactory && innerFactory.kind === 'factory' ? innerFactory.entry : scoped ? this.staticEngine(inner) : engineOf(bindArg);
      return { kind: 'factory', entry, scoped };
    }
    if (SESSION_CLASSES.has(qualified)) return { kind: 'session', entry: engineOf(bindArg) };
    return undefined;
  }

  /** Visits the nodes of a def, not those of the defs and classes inside it. */
  iterateOwn(def: Node, visit: (node: Node) => void): void {
    const body = def.getChild('Body');
    if (!body) return;
    const walk = (node: Node) => {
      for (const child of children(node)) {
        if (child.name === 'FunctionDefinition' || child.name === 'ClassDefinition' || child.name === 'LambdaExpression') continue;
        visit(child);
        walk(child);
      }
    };
    walk(body);
  }

  /** Names a def binds exactly once with a plain assignment, and the value. */
  localsOf(def: Node | undefined): Map<string, Node> {
    if (!def) return new Map();
    const cached = this.localsCache.get(def.from);
    if (cached) return cached;
    const counts = new Map<string, number>();
    const values = new Map<string, Node>();
    const params = new Set(parameters(def, this.text).map((p) => p.name));
    this.iterateOwn(def, (node) => {
      if (node.name === 'AssignStatement' || node.name === 'UpdateStatement') {
        const parts = children(node);
        const target = parts[0];
        if (target?.name !== 'VariableName') return;
        const name = this.text.slice(target.from, target.to);
        counts.set(name, (counts.get(name) ?? 0) + 1);
        if (node.name === 'AssignStatement' && parts[1]?.name === 'AssignOp' && parts.length === 3) values.set(name, parts[2]);
      } else if (node.name === 'ForStatement' || node.name === 'WithStatement') {
        for (const c of children(node)) if (c.name === 'VariableName') counts.set(this.text.slice(c.from, c.to), 2);
      }
    });
    for (const name of [...values.keys()]) if (counts.get(name) !== 1 || params.has(name)) values.delete(name);
    this.localsCache.set(def.from, values);
    return values;
  }

  /** The value of a name assigned once in the def that contains `node`. */
  localValue(node: Node): Node | undefined {
    let def: Node | null = node.parent;
    while (def && def.name !== 'FunctionDefinition') def = def.parent;
    if (!def) return undefined;
    const value = this.localsOf(def).get(this.text.slice(node.from, node.to));
    // Only a value assigned before the use.
    return value && value.to <= node.from ? value : undefined;
  }

  resolveContext(): ResolveContext {
    return {
      text: this.text,
      qualify: (node) => this.qualify(node),
      constant: (name, at) => {
        const local = this.localValue(at);
        if (local) return local;
        // A function's own binding of the name shadows the module's.
        let def: Node | null = at.parent;
        while (def && def.name !== 'FunctionDefinition') def = def.parent;
        if (def && parameters(def, this.text).some((p) => p.name === name)) return undefined;
        return this.constants.get(name);
      },
    };
  }

  private walkCallbacks(entry: ConfigEntry): void {
    for (const arg of entry.callbackArgs) {
      const { role, node } = arg;
      const isDef = node.name === 'FunctionDefinition';
      const expr = isDef ? node : unwrap(node);
      const name = isDef ? defName(node, this.text) : expr ? this.text.slice(expr.from, expr.to) : role;
      const at = isDef ? (node.getChild('VariableName') ?? node) : node;
      const callback: ResetCallback = { role, name: arg.event ? `${name} (${arg.event})` : name, span: span(at), endsOutsideTransaction: 'unknown', resolved: false };
      entry.config.callbacks.push(callback);
      const target = isDef ? node : expr ? this.resolveDef(expr, node) : undefined;
      if (!target) continue;
      callback.resolved = true;
      const conn: Conn = {
        id: this.nextConnId(),
        driver: arg.connDriver ?? entry.config.driver,
        use: { kind: 'pooled-client', configId: entry.config.id },
        entry,
        origin: 'callback',
        callback: { configId: entry.config.id, role },
        flow: initialFlow(arg.autocommit ?? entry.config.autocommit),
      };
      if (arg.inTransaction) conn.flow.explicit.push({ id: `${this.model.file}#${conn.id}.${arg.event ?? 'begin'}`, form: arg.inTransaction });
      const walk = new Walk(this, {
        name: target.name === 'LambdaExpression' ? undefined : defName(target, this.text),
        className: this.classOfDef.get(target.from),
        def: target,
        callbackConn: conn,
      });
      if (target.name === 'LambdaExpression') {
        const param = target.getChild('ParamList')?.getChild('VariableName');
        if (param) walk.env.set(this.text.slice(param.from, param.to), { kind: 'conn', conn });
        walk.conns.add(conn);
        const body = target.lastChild;
        if (body) walk.walkExpression(body);
        walk.exits.push(copyFlow(conn.flow));
      } else {
        this.walkedAtCall.add(target.from);
        walk.bindParameters(target, [], false, conn, undefined, arg.connParam);
        walk.walkBlock(bodyStatements(target));
        walk.finish();
      }
      const exits = walk.exits;
      if (exits.some((f) => f.dirty === true)) {
        callback.endsOutsideTransaction = false;
        callback.leavesTransactionAt = exits.find((f) => f.dirty === true)?.dirtyAt;
      } else if (exits.length > 0 && exits.every((f) => f.dirty === false)) {
        callback.endsOutsideTransaction = true;
      }
      // A listener inside the Session's transaction (after_begin) leaves it to the Session.
      if (arg.inTransaction) callback.endsOutsideTransaction = 'unknown';
      if (walk.thresholdOff && role !== 'check') entry.thresholdOff = `prepare_threshold = None in the ${role} callback ${name}`;
    }
  }

  /** Django's connection_created handlers: configure callbacks of the default connection, walked with the connection they get. */
  private walkDjangoSignals(): void {
    if (!this.django) return;
    for (const def of this.django.connectionCreatedHandlers((expr, at) => this.resolveDef(expr, at))) {
      const config = this.django.configFor('default', def);
      const name = defName(def, this.text);
      const at = def.getChild('VariableName') ?? def;
      config.callbacks.push({ role: 'configure', name: `${name} (connection_created)`, span: span(at), endsOutsideTransaction: 'unknown', resolved: true });
      const conn: Conn = {
        id: this.nextConnId(),
        driver: 'django',
        use: { kind: 'pooled-client', configId: config.id },
        origin: 'callback',
        callback: { configId: config.id, role: 'configure' },
        flow: initialFlow(config.autocommit),
      };
      this.walkedAtCall.add(def.from);
      const walk = new Walk(this, { name, def, callbackConn: conn });
      // handler(sender, connection, **kwargs)
      const index = parameters(def, this.text).filter((p) => p.kind === 'normal').findIndex((p) => p.name === 'connection');
      walk.bindParameters(def, [], false, conn, undefined, index >= 0 ? index : 1);
      walk.walkBlock(bodyStatements(def));
      walk.finish();
    }
  }

  /** The def (or lambda) a callback or callee expression names: a function of the module, a method of the class, a def in the same function. */
  resolveDef(expr: Node, at: Node): Node | undefined {
    if (expr.name === 'LambdaExpression') return expr;
    const name = dottedName(expr, this.text);
    if (!name) return undefined;
    const [first, ...rest] = name.split('.');
    if (rest.length === 0) {
      // A def in an enclosing function shadows the module's.
      for (let p: Node | null = at.parent; p; p = p.parent) {
        if (p.name !== 'FunctionDefinition') continue;
        for (const statement of bodyStatements(p)) {
          const def = unwrapDecorated(statement);
          if (def?.name === 'FunctionDefinition' && defName(def, this.text) === first && def.from < at.from) return def;
        }
      }
      return this.moduleDefs.get(first);
    }
    if ((first === 'self' || first === 'cls') && rest.length === 1) {
      const className = this.enclosingClass(at);
      return className ? this.classMethods.get(className)?.get(rest[0]) : undefined;
    }
    if (rest.length === 1 && this.classMethods.has(first)) return this.classMethods.get(first)?.get(rest[0]);
    return undefined;
  }

  enclosingClass(at: Node): string | undefined {
    for (let p: Node | null = at.parent; p; p = p.parent) {
      if (p.name === 'FunctionDefinition') {
        const className = this.classOfDef.get(p.from);
        if (className) return className;
      }
    }
    return undefined;
  }

  addSite(meta: SiteMeta): void {
    this.model.sites.push(meta.site);
    this.metas.push(meta);
  }

  /**
   * One-transaction jobs, as the TS front end reads them: a transaction that
   * rolls back with the job, claims rows with FOR UPDATE SKIP LOCKED, runs
   * the job's work (a call that is not SQL) and ends the job in it (a write
   * of a final status, or a delete, of the claimed table). The failure is
   * counted outside when an except handler of a try around it writes the
   * claimed table in another, known transaction.
   */
  private collectJobTransactions(): void {
    const byScope = new Map<string, SiteMeta[]>();
    for (const meta of this.metas) {
      const scope = meta.site.scope;
      if (scope.kind !== 'transaction' || !scope.rollsBackOnError) continue;
      const list = byScope.get(scope.id) ?? [];
      list.push(meta);
      byScope.set(scope.id, list);
    }
    for (const [scopeId, metas] of byScope) {
      let claimed: Set<string> | undefined;
      let claim: SiteMeta | undefined;
      for (const meta of metas) {
        const read = meta.site.analysis.statements.flatMap((s) => s.lockingReads).find((r) => r.skipLocked);
        if (read) {
          claim = meta;
          claimed = new Set(read.tables.map(bareTable));
          break;
        }
      }
      if (!claim || !claimed || !this.workIn.has(scopeId)) continue;
      const tables = claimed;
      const endsJob = metas.some((m) =>
        m.site.analysis.statements.some((s) =>
          s.rowWrites.some((w) => tables.has(bareTable(w.table)) && (w.op === 'delete' || w.assignments.some((a) => STATUS_COLUMN.test(a.column) && endsRun(a.value)))),
        ),
      );
      if (!endsJob) continue;
      const tries = new Set(metas.flatMap((m) => m.inTry));
      const counts = (m: SiteMeta) =>
        m.inHandler !== undefined &&
        tries.has(m.inHandler) &&
        m.site.analysis.statements.some((s) => s.rowWrites.some((w) => w.op !== 'insert' && tables.has(bareTable(w.table))));
      // A handler reached before the commit runs in the job's own transaction, whatever paths after the commit say.
      const inside = (m: SiteMeta) => (m.site.scope.kind === 'transaction' && m.site.scope.id === scopeId) || (m.mayBeIn?.includes(scopeId) ?? false);
      const failureCountedOutside = this.metas.some(
        (m) => counts(m) && !inside(m) && (m.site.scope.kind === 'autocommit' || (m.site.scope.kind === 'transaction' && m.site.scope.id !== scopeId)),
      );
      const countedInside = this.metas.find((m) => counts(m) && inside(m));
      const statement = claim.site.analysis.statements.find((s) => s.lockingReads.some((r) => r.skipLocked)) ?? claim.site.analysis.statements[0];
      this.model.jobTransactions.push({ scopeId, span: statement.span, failureCountedOutside, ...(countedInside && !failureCountedOutside && { failureCountedInside: countedInside.site.span }) });
    }
  }
}

/** A status value that ends the run (not running/claimed/...); a placeholder may be either, so it counts. */
function endsRun(value: RowWrite['assignments'][number]['value']): boolean {
  if (value.kind === 'param') return true;
  const values = value.kind === 'literal' ? (typeof value.value === 'string' ? [value.value] : []) : value.kind === 'expression' ? (value.strings ?? []) : [];
  return values.length > 0 && !values.some((v) => RUNNING_STATUS.test(v));
}

// ---- one walk over a body ------------------------------------------------------------

interface WalkInfo {
  name: string | undefined;
  className?: string;
  def?: Node;
  callbackConn?: Conn;
  parent?: Walk;
}

/** A model instance a walk holds, the connection (Session) it was read on, and the attributes set on it since the last flush. */
type Instance = ModelRef & { conn?: Conn; pending?: Map<string, { value: Node; at: Node }> };

class Walk {
  readonly env = new Map<string, Binding>();
  readonly instances = new Map<string, Instance>();
  private readonly dirtyInstances = new Set<Instance>();
  readonly conns = new Set<Conn>();
  readonly exits: Flow[] = [];
  dead = false;
  thresholdOff = false;
  /** Walking a @contextmanager at a `with`: stop at its first yield and keep what it yields. */
  yieldCapture?: { binding?: Binding; flow?: Flow };
  /** The walk stopped at the yield it was looking for. */
  suspended = false;
  private readonly params = new Set<string>();
  private readonly contexts: Conn[] = [];
  private readonly tries: number[];
  private handler: number | undefined;
  private readonly stack: number[];

  constructor(
    readonly file: PythonFile,
    readonly info: WalkInfo,
  ) {
    this.tries = info.parent ? [...info.parent.tries] : [];
    this.handler = info.parent?.handler;
    this.stack = [...(info.parent?.stack ?? []), ...(info.def ? [info.def.from] : [])];
    if (info.callbackConn) this.conns.add(info.callbackConn);
  }

  get text(): string {
    return this.file.text;
  }

  /** Binds the def's parameters: from the call's arguments, the callback connection, or annotations. */
  bindParameters(def: Node, args: Arg[], isMethodCall: boolean, callbackConn?: Conn, callerBindings?: (node: Node) => Binding | undefined, connParam = 0): void {
    const params = parameters(def, this.text);
    for (const p of params) this.params.add(p.name);
    const isMethod = this.file.classOfDef.has(def.from);
    let positionalParams = params.filter((p) => p.kind === 'normal');
    if (isMethod && (isMethodCall || callbackConn) && positionalParams[0] && (positionalParams[0].name === 'self' || positionalParams[0].name === 'cls')) {
      positionalParams = positionalParams.slice(1);
    }
    if (callbackConn && positionalParams[connParam]) {
      this.env.set(positionalParams[connParam].name, { kind: 'conn', conn: callbackConn });
    }
    if (callerBindings) {
      const positionalArgs = args.filter((a) => !a.name && !a.star);
      positionalArgs.forEach((a, i) => {
        const param = positionalParams[i];
        const binding = param ? callerBindings(a.value) : undefined;
        if (param && binding) this.env.set(param.name, binding);
      });
      for (const a of args) {
        if (!a.name) continue;
        const binding = callerBindings(a.value);
        if (binding && params.some((p) => p.name === a.name)) this.env.set(a.name, binding);
      }
      for (const binding of this.env.values()) if (binding.kind === 'conn' || binding.kind === 'cursor') this.conns.add(binding.conn);
    }
    // Annotated pools: `pool: ConnectionPool` (its configuration is elsewhere), `session: Session`, `conn: asyncpg.Connection`.
    for (const p of params) {
      if (this.env.has(p.name) || !p.annotation) continue;
      const qualified = this.file.qualify(annotationType(p.annotation));
      const maker = makerOf(qualified);
      if (maker?.kind === 'pool') {
        this.env.set(p.name, { kind: 'pool', driver: maker.driver });
        continue;
      }
      const annotated = qualified ? ANNOTATED[qualified] : undefined;
      if (annotated?.kind === 'pool' && annotated.driver === 'asyncpg') this.env.set(p.name, { kind: 'pool', driver: 'asyncpg', entry: this.file.assumedAsyncpgPool(p.annotation) });
      else if (annotated?.kind === 'pool') this.env.set(p.name, { kind: 'pool', driver: annotated.driver });
      else if (annotated?.kind === 'conn') {
        const origin: Origin = annotated.driver === 'sqlalchemy' ? 'sa.session' : 'parameter';
        const conn = this.newConn(annotated.driver, { kind: 'unknown' }, origin, undefined, 'unknown');
        if (annotated.driver === 'sqlalchemy') conn.exitEnds = 'rollback';
        this.env.set(p.name, { kind: 'conn', conn });
      }
    }
  }

  finish(): void {
    if (!this.dead && this.info.callbackConn) this.exits.push(copyFlow(this.info.callbackConn.flow));
  }

  // ---- bindings ----------------------------------------------------------------------

  lookup(name: string): Binding | undefined {
    const own = this.env.get(name);
    if (own) return own;
    const className = this.info.className;
    const staticBinding =
      (className ? this.file.classAttrs.get(className)?.get(name) : undefined) ??
      (name.includes('.') ? this.file.importedStatic(name) : (this.file.globals.get(name) ?? this.file.importedStatic(name)));
    if (staticBinding && !this.params.has(name)) {
      const binding = this.instantiate(staticBinding);
      this.env.set(name, binding);
      return binding;
    }
    return undefined;
  }

  private instantiate(binding: StaticBinding): Binding {
    if (binding.kind === 'pool') return { kind: 'pool', entry: binding.entry, driver: binding.entry.config.driver };
    if (binding.kind === 'factory') return { kind: 'factory', entry: binding.entry, scoped: binding.scoped };
    if (binding.kind === 'session') {
      // One module-level Session for every job: its transaction state at the call is not known.
      const conn = this.newConn('sqlalchemy', { kind: 'unknown', configId: binding.entry?.config.id }, 'sa.session', binding.entry, 'unknown');
      conn.exitEnds = 'rollback';
      conn.shared = true;
      return { kind: 'conn', conn };
    }
    // A module's or an object's connection used in a function serves every call of it (every job):
    // not one the job opened for itself. Its state at the call is not known either.
    const inFunction = this.info.def !== undefined;
    const use: ConnectionUse = inFunction ? { kind: 'unknown', configId: binding.entry.config.id } : { kind: 'dedicated', configId: binding.entry.config.id };
    const conn = this.newConn(binding.entry.config.driver, use, 'connect', binding.entry, inFunction ? 'unknown' : undefined);
    return { kind: 'conn', conn };
  }

  /** The Session a scoped_session stands for in this walk (one per walk), or a new one of a sessionmaker. */
  scopedOrNew(factory: { entry?: ConfigEntry; scoped: boolean }): Conn {
    if (!factory.scoped) return this.sessionConn(factory.entry, 'sa.session');
    const key = `scoped:${factory.entry?.config.id ?? '?'}`;
    const known = this.env.get(key);
    if (known?.kind === 'conn') return known.conn;
    // The thread's Session: other code may have used or committed it before this call.
    const conn = this.newConn('sqlalchemy', { kind: 'pooled-client', configId: factory.entry?.config.id }, 'sa.session', factory.entry, 'unknown');
    conn.exitEnds = 'rollback';
    conn.shared = true;
    this.env.set(key, { kind: 'conn', conn });
    return conn;
  }

  newConn(driver: Driver, use: ConnectionUse, origin: Origin, entry?: ConfigEntry, autocommit?: boolean | 'unknown'): Conn {
    const conn: Conn = {
      id: this.file.nextConnId(),
      driver,
      use,
      entry,
      origin,
      flow: initialFlow(autocommit ?? entry?.config.autocommit ?? 'unknown'),
    };
    this.conns.add(conn);
    return conn;
  }

  /** The binding of a receiver expression; with `create`, an unknown parameter or attribute becomes a connection of unknown origin. */
  receiver(node: Node, create: boolean): Binding | undefined {
    const expr = unwrap(node);
    if (!expr) return undefined;
    if (expr.name === 'CallExpression') return this.valueBinding(expr, false);
    const name = dottedName(expr, this.text);
    const found = name ? this.lookup(name) : undefined;
    if (found) return found;
    const django = this.file.django?.connectionOf(expr, this);
    if (django) return { kind: 'conn', conn: django };
    if (!name) return undefined;
    if (!create || !this.file.importsDriver) return undefined;
    const root = name.split('.')[0];
    if (!this.params.has(root) && !name.startsWith('self.')) return undefined;
    const driver = this.file.driverOfFile;
    const conn = this.newConn(driver, { kind: 'unknown' }, driver === 'sqlalchemy' ? 'sa.session' : 'parameter', undefined, 'unknown');
    if (driver === 'sqlalchemy') conn.exitEnds = 'rollback';
    const binding: Binding = { kind: 'conn', conn };
    this.env.set(name, binding);
    return binding;
  }

  /** The engine entry an expression of this walk stands for (a name bound to an engine or a session factory). */
  engineEntry(node: Node | undefined): ConfigEntry | undefined {
    const expr = unwrap(node);
    if (!expr) return undefined;
    if (expr.name === 'CallExpression') {
      const made = this.valueBinding(expr, false);
      return made?.kind === 'pool' || made?.kind === 'factory' ? made.entry : made?.kind === 'conn' ? made.conn.entry : undefined;
    }
    const name = dottedName(expr, this.text)?.replace(/\.(sync_engine|pool|engine)$/, '');
    const binding = name ? this.lookup(name) : undefined;
    if (binding?.kind === 'pool' || binding?.kind === 'factory') return binding.entry;
    return undefined;
  }

  /** A new SQLAlchemy Session (or Connection) checked out of `entry`'s engine. */
  private sessionConn(entry: ConfigEntry | undefined, origin: 'sa.session' | 'sa.connect', autocommit?: boolean | 'unknown'): Conn {
    const conn = this.newConn('sqlalchemy', { kind: 'pooled-client', configId: entry?.config.id }, origin, entry, autocommit ?? entry?.config.autocommit ?? 'unknown');
    conn.exitEnds = 'rollback';
    return conn;
  }

  /** What an expression evaluates to, when it is a pool, connection or cursor. `entering`: as a `with` item. */
  valueBinding(node: Node, entering: boolean): Binding | undefined {
    const expr = unwrap(node);
    if (!expr) return undefined;
    if (expr.name !== 'CallExpression') {
      const name = dottedName(expr, this.text);
      return name ? this.lookup(name) : undefined;
    }
    // One answer per call expression in a walk: a chain `a.b().c().d()` asks for its inner calls again at
    // every link, and a connection a call opens is one connection however often it is asked for.
    const key = `${expr.from}:${expr.to}:${entering}`;
    if (this.callBindings.has(key)) return this.callBindings.get(key) ?? undefined;
    const binding = this.callBinding(expr, entering);
    this.callBindings.set(key, binding ?? null);
    return binding;
  }

  private readonly callBindings = new Map<string, Binding | null>();

  private callBinding(expr: Node, entering: boolean): Binding | undefined {
    const entry = this.file.entries.get(expr.from);
    if (entry) {
      if (entry.maker.kind === 'pool') return { kind: 'pool', entry, driver: entry.config.driver };
      const conn = this.newConn(entry.config.driver, { kind: 'dedicated', configId: entry.config.id }, 'connect', entry);
      return { kind: 'conn', conn };
    }
    const made = this.file.sessionMaker(expr, (n) => this.engineEntry(n));
    if (made?.kind === 'factory') return { kind: 'factory', entry: made.entry, scoped: made.scoped };
    if (made?.kind === 'session') return { kind: 'conn', conn: this.sessionConn(made.entry, 'sa.session') };
    const callee = unwrap(expr.firstChild);
    if (callee && callee.name !== 'MemberExpression') {
      // SessionLocal(): a Session of the factory's engine.
      const name = dottedName(callee, this.text);
      const factory = name ? this.lookup(name) : undefined;
      if (factory?.kind === 'factory') return { kind: 'conn', conn: this.scopedOrNew(factory) };
    }
    const method = methodCall(expr, this.text);
    if (!method) return undefined;
    const object = this.receiver(method.object, method.method === 'cursor' || method.method === 'execute');
    if (object?.kind === 'factory') {
      // SessionLocal.begin(): a new Session inside a transaction (walkWith opens it); scoped.<method>() is the scoped Session's.
      if (method.method === 'begin') return { kind: 'conn', conn: this.sessionConn(object.entry, 'sa.session') };
      if (object.scoped && method.method === 'connection') return { kind: 'conn', conn: this.scopedOrNew(object) };
      return undefined;
    }
    if (object?.kind === 'pool' && object.driver === 'sqlalchemy') {
      if (method.method === 'connect' || method.method === 'begin') return { kind: 'conn', conn: this.sessionConn(object.entry, 'sa.connect', object.autocommit) };
      if (method.method === 'raw_connection') {
        const conn = this.newConn('sqlalchemy', { kind: 'pooled-client', configId: object.entry?.config.id }, 'sa.raw', object.entry, false);
        return { kind: 'conn', conn };
      }
      if (method.method === 'execution_options') {
        const level = keyword(method.call.args, 'isolation_level');
        return { ...object, autocommit: level ? isolationIsAutocommit(level, this.file.readContext) : object.autocommit };
      }
      return undefined;
    }
    if (object?.kind === 'pool' && object.driver === 'asyncpg') {
      if (method.method === 'acquire') {
        const conn = this.newConn('asyncpg', { kind: 'pooled-client', configId: object.entry?.config.id }, 'acquire', object.entry, true);
        conn.exitEnds = 'rollback';
        return { kind: 'conn', conn };
      }
      return undefined;
    }
    if (object?.kind === 'conn' && object.conn.driver === 'sqlalchemy') {
      if (method.method === 'execution_options') {
        const level = keyword(method.call.args, 'isolation_level');
        if (level) object.conn.flow.autocommit = isolationIsAutocommit(level, this.file.readContext);
        return object;
      }
      if (method.method === 'connection' || method.method === 'begin' || method.method === 'begin_nested') return object;
    }
    if (!object) {
      // `with pool.connection() as conn` on a pool we cannot see: psycopg_pool's idiom.
      if (method.method === 'connection' && this.file.importsPool && entering) {
        return { kind: 'conn', conn: this.newConn('psycopg', { kind: 'pooled-client' }, 'pool.connection', undefined, 'unknown') };
      }
      return undefined;
    }
    if (object.kind === 'pool') {
      const use: ConnectionUse = { kind: 'pooled-client', configId: object.entry?.config.id };
      if (method.method === 'connection') return { kind: 'conn', conn: this.newConn(object.driver, use, 'pool.connection', object.entry) };
      if (method.method === 'getconn') return { kind: 'conn', conn: this.newConn(object.driver, use, 'getconn', object.entry) };
      return undefined;
    }
    if (object.kind === 'conn' || object.kind === 'cursor') {
      if (method.method === 'cursor' || method.method === 'execute' || method.method === 'executemany') return { kind: 'cursor', conn: object.conn };
    }
    return undefined;
  }

  // ---- statements --------------------------------------------------------------------

  walkBlock(statements: Node[]): void {
    for (const statement of statements) {
      if (this.dead || this.suspended) return;
      if (this.yieldCapture && this.captureYield(statement)) return;
      this.walkStatement(statement);
    }
  }

  /** `yield conn` in a @contextmanager: what the caller's `with ... as conn` gets, and its state there. */
  private captureYield(statement: Node): boolean {
    const yieldNode =
      statement.name === 'YieldStatement' ? statement : statement.name === 'ExpressionStatement' ? statement.getChild('YieldExpression') : null;
    if (!yieldNode) return false;
    const value = children(yieldNode).find((c) => c.name !== 'yield');
    this.walkExpression(yieldNode);
    const binding = value ? this.valueBinding(value, false) : undefined;
    this.yieldCapture = { binding, flow: binding && (binding.kind === 'conn' || binding.kind === 'cursor') ? copyFlow(binding.conn.flow) : undefined };
    this.suspended = true;
    this.dead = true;
    return true;
  }

  private walkStatement(node: Node): void {
    switch (node.name) {
      case 'FunctionDefinition':
      case 'ClassDefinition':
      case 'DecoratedStatement':
        return;
      case 'StatementGroup':
        return this.walkBlock(children(node));
      case 'IfStatement':
        return this.walkIf(node);
      case 'WhileStatement':
      case 'ForStatement':
        return this.walkLoop(node);
      case 'TryStatement':
        return this.walkTry(node);
      case 'WithStatement':
        return this.walkWith(node);
      case 'MatchStatement':
        return this.walkMatch(node);
      case 'ReturnStatement':
        this.walkExpression(node);
        if (this.info.callbackConn) this.exits.push(copyFlow(this.info.callbackConn.flow));
        // Leaving the function leaves its `with` blocks: psycopg's commits, SQLAlchemy's rolls back.
        for (const conn of this.contexts) noteEnd(conn, conn.exitEnds ?? 'commit');
        this.dead = true;
        return;
      case 'RaiseStatement':
        this.walkExpression(node);
        this.dead = true;
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
        this.dead = true;
        return;
      case 'AssignStatement':
        return this.walkAssign(node);
      default:
        this.walkExpression(node);
    }
  }

  private snapshot(): Map<Conn, Flow> {
    const snap = new Map<Conn, Flow>();
    for (const conn of this.conns) snap.set(conn, copyFlow(conn.flow));
    return snap;
  }

  private restore(snap: Map<Conn, Flow>): void {
    for (const [conn, flow] of snap) conn.flow = copyFlow(flow);
  }

  private merge(a: Map<Conn, Flow>, b: Map<Conn, Flow>): Map<Conn, Flow> {
    const out = new Map<Conn, Flow>();
    for (const [conn, flow] of a) {
      const other = b.get(conn);
      out.set(conn, other ? mergeFlows(flow, other) : flow);
    }
    for (const [conn, flow] of b) if (!out.has(conn)) out.set(conn, flow);
    return out;
  }

  /** Runs alternative paths from the same state and continues with what they have in common. */
  private branches(paths: (() => void)[], fallThrough: boolean): void {
    const start = this.snapshot();
    const outs: Map<Conn, Flow>[] = fallThrough ? [start] : [];
    for (const path of paths) {
      this.restore(start);
      this.dead = false;
      path();
      if (!this.dead) outs.push(this.snapshot());
    }
    if (outs.length === 0) {
      this.restore(start);
      this.dead = true;
      return;
    }
    this.restore(outs.reduce((a, b) => this.merge(a, b)));
    this.dead = false;
  }

  private walkIf(node: Node): void {
    const parts = children(node);
    const paths: (() => void)[] = [];
    let hasElse = false;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part.name === 'Body') {
        paths.push(() => this.walkBlock(bodyStatements(part)));
        if (parts[i - 1]?.name === 'else') hasElse = true;
      } else if (part.name !== 'if' && part.name !== 'elif' && part.name !== 'else') {
        this.walkExpression(part); // conditions, evaluated in order (approximately)
      }
    }
    this.branches(paths, !hasElse);
  }

  private walkLoop(node: Node): void {
    const parts = children(node);
    const bodies = parts.filter((p) => p.name === 'Body');
    for (const part of parts) if (part.name !== 'Body' && !['while', 'for', 'in', 'else', 'async'].includes(part.name)) this.walkExpression(part);
    // for job in Job.objects.select_for_update(skip_locked=True)...: each job is an instance of the model.
    const inAt = parts.findIndex((p) => p.name === 'in');
    const loopTarget = node.name === 'ForStatement' && inAt > 0 ? parts[inAt - 1] : undefined;
    if (loopTarget?.name === 'VariableName' && parts[inAt + 1]) this.bindInstance(this.text.slice(loopTarget.from, loopTarget.to), parts[inAt + 1]);
    if (bodies[0]) this.branches([() => this.walkBlock(bodyStatements(bodies[0]))], true);
    if (bodies[1]) this.walkBlock(bodyStatements(bodies[1]));
  }

  private walkMatch(node: Node): void {
    const subject = children(node).filter((c) => c.name !== 'match' && c.name !== 'MatchBody');
    for (const s of subject) this.walkExpression(s);
    const clauses = node.getChild('MatchBody')?.getChildren('MatchClause') ?? [];
    this.branches(
      clauses.map((clause) => () => {
        const body = clause.getChild('Body');
        if (body) this.walkBlock(bodyStatements(body));
      }),
      true,
    );
  }

  private walkTry(node: Node): void {
    const parts = children(node);
    const start = this.snapshot();
    const bodyNode = parts[1]?.name === 'Body' ? parts[1] : undefined;
    const handlers: Node[] = [];
    let elseBody: Node | undefined;
    let finallyBody: Node | undefined;
    for (let i = 2; i < parts.length; i++) {
      if (parts[i].name !== 'Body') continue;
      const keywordBefore = parts.slice(0, i).reverse().find((p) => p.name === 'except' || p.name === 'else' || p.name === 'finally');
      if (keywordBefore?.name === 'except') handlers.push(parts[i]);
      else if (keywordBefore?.name === 'else') elseBody = parts[i];
      else if (keywordBefore?.name === 'finally') finallyBody = parts[i];
    }
    this.tries.push(node.from);
    if (bodyNode) this.walkBlock(bodyStatements(bodyNode));
    this.tries.pop();
    const bodyDead = this.dead;
    const afterBody = this.snapshot();
    const outs: Map<Conn, Flow>[] = [];
    if (!bodyDead) {
      if (elseBody) this.walkBlock(bodyStatements(elseBody));
      if (!this.dead) outs.push(this.snapshot());
    }
    // An exception can come from anywhere in the body: a handler starts from either end of it.
    const handlerStart = this.merge(start, afterBody);
    for (const handler of handlers) {
      this.restore(handlerStart);
      this.dead = false;
      const outer = this.handler;
      this.handler = node.from;
      this.walkBlock(bodyStatements(handler));
      this.handler = outer;
      if (!this.dead) outs.push(this.snapshot());
    }
    if (outs.length > 0) {
      this.restore(outs.reduce((a, b) => this.merge(a, b)));
      this.dead = false;
    } else {
      this.restore(handlerStart);
      this.dead = true;
    }
    if (finallyBody && !this.suspended) {
      const deadBefore = this.dead;
      this.dead = false;
      this.walkBlock(bodyStatements(finallyBody));
      this.dead = this.dead || deadBefore;
    }
  }

  private walkWith(node: Node): void {
    const exits: (() => void)[] = [];
    for (const item of withItems(node)) {
      this.walkExpressionCalls(item.expr, true);
      const target = item.target ? dottedName(item.target, this.text) : undefined;
      const expr = unwrap(item.expr);
      const method = expr ? methodCall(expr, this.text) : undefined;
      // with conn.transaction():  (psycopg, asyncpg)  with session.begin():  with conn.begin_nested():  (SQLAlchemy)
      const opensTransaction =
        method?.method === 'transaction' || ((method?.method === 'begin' || method?.method === 'begin_nested') && this.file.driverOfFile === 'sqlalchemy');
      if (method && opensTransaction) {
        const object = this.receiver(method.object, true);
        if (object?.kind === 'conn') {
          const form = method.method === 'transaction' ? '`with conn.transaction()`' : `\`with ${this.text.slice(method.object.from, method.object.to)}.${method.method}()\``;
          const { savepoint } = enterTransaction(object.conn, this.file.model.file, form);
          this.contexts.push(object.conn);
          exits.push(() => {
            if (object.conn.driver === 'sqlalchemy') this.flushInstances(object.conn);
            leaveTransaction(object.conn, savepoint);
            this.contexts.pop();
          });
          continue;
        }
        if (method.method === 'begin' && (object?.kind === 'factory' || (object?.kind === 'pool' && object.driver === 'sqlalchemy'))) {
          // with engine.begin() as conn:  with SessionLocal.begin() as session:  a new connection in a transaction that commits at the end.
          const made = this.valueBinding(item.expr, true);
          if (made?.kind === 'conn') {
            const conn = made.conn;
            enterTransaction(conn, this.file.model.file, `\`with ${this.text.slice(method.object.from, method.object.to)}.begin()\``);
            if (target) this.env.set(target, made);
            this.contexts.push(conn);
            exits.push(() => {
              this.flushInstances(conn);
              leaveTransaction(conn, false);
              this.contexts.pop();
            });
            continue;
          }
        }
      }
      // with transaction.atomic():  (Django)
      const atomic = this.file.django?.atomicOf(item.expr, this);
      if (atomic) {
        const { savepoint } = enterTransaction(atomic, this.file.model.file, '`with transaction.atomic()`');
        this.contexts.push(atomic);
        exits.push(() => {
          leaveTransaction(atomic, savepoint);
          this.contexts.pop();
        });
        continue;
      }
      const managed = this.contextManager(item.expr);
      const binding = managed ?? this.valueBinding(item.expr, true);
      // A connection, or what a @contextmanager yielded (connection or cursor): its end commits or returns it.
      if (binding && (binding.kind === 'conn' || (managed && binding.kind === 'cursor'))) {
        const { conn } = binding;
        if (target) this.env.set(target, binding);
        this.contexts.push(conn);
        // Leaving `with conn:` / `with pool.connection()` / `with connect()` commits (rolls back on error);
        // leaving `with engine.connect()` / `with Session()` rolls back what was not committed.
        exits.push(() => {
          ended(conn, conn.exitEnds ?? 'commit');
          this.contexts.pop();
        });
      } else if (binding && target) {
        this.env.set(target, binding);
      } else if (target) {
        this.env.delete(target);
      }
    }
    const body = node.getChild('Body');
    if (body) this.walkBlock(bodyStatements(body));
    const dead = this.dead;
    this.dead = false;
    for (const exit of exits.reverse()) exit();
    this.dead = dead;
  }

  /**
   * `with tenant_connection(t) as conn:` where tenant_connection is a
   * @contextmanager of this file: walk it up to its yield, here, and bind
   * what it yields, in the state it yields it.
   */
  private contextManager(node: Node): Binding | undefined {
    const call = callParts(node, this.text);
    if (!call || this.stack.length > 4) return undefined;
    const def = this.file.resolveDef(call.callee, node);
    if (!def || def.name !== 'FunctionDefinition' || this.stack.includes(def.from) || !isContextManager(def, this.text)) return undefined;
    this.file.walkedAtCall.add(def.from);
    const walk = new Walk(this.file, { name: defName(def, this.text), className: this.file.classOfDef.get(def.from), def, parent: this });
    walk.yieldCapture = {};
    const bindings = (value: Node): Binding | undefined => {
      const name = dottedName(unwrap(value), this.text);
      return name ? this.lookup(name) : undefined;
    };
    walk.bindParameters(def, call.args, call.callee.name === 'MemberExpression', undefined, bindings);
    walk.walkBlock(bodyStatements(def));
    for (const conn of walk.conns) this.conns.add(conn);
    const captured = walk.yieldCapture;
    if (!captured?.binding || captured.binding.kind === 'pool' || captured.binding.kind === 'factory' || !captured.flow) return undefined;
    captured.binding.conn.flow = copyFlow(captured.flow);
    return captured.binding;
  }

  private walkAssign(node: Node): void {
    const parts = children(node);
    const ops = parts.map((p, i) => (p.name === 'AssignOp' ? i : -1)).filter((i) => i >= 0);
    if (ops.length === 0) return this.walkExpression(node);
    const value = parts[parts.length - 1];
    this.walkExpression(value);
    const targets = parts.slice(0, ops[ops.length - 1]).filter((p) => p.name !== 'AssignOp' && p.name !== 'TypeDef');
    for (const target of targets) {
      const name = dottedName(target, this.text);
      if (target.name === 'MemberExpression' && name) {
        const property = name.slice(name.lastIndexOf('.') + 1);
        const owner = name.slice(0, name.lastIndexOf('.'));
        const instance = this.instances.get(owner);
        if (instance && property !== 'autocommit') {
          this.instanceWrite(instance, property, value, target);
          continue;
        }
        if (property === 'autocommit' || property === 'prepare_threshold') {
          const object = this.receiver(target.firstChild!, true);
          if (object?.kind === 'conn') {
            if (property === 'autocommit') object.conn.flow.autocommit = literalBool(value, this.text);
            else this.preparedThreshold(object.conn, value);
          }
          continue;
        }
      }
      if (!name) {
        this.walkExpression(target);
        continue;
      }
      const binding = this.valueBinding(value, false);
      if (binding) this.env.set(name, binding);
      else this.env.delete(name);
      if (targets.length === 1 && target.name === 'VariableName') this.bindInstance(name, value);
      else this.instances.delete(name);
    }
  }

  /** `job = <a query that reads one row of a model>`: job is an instance the code can save or delete. */
  private bindInstance(name: string, value: Node): void {
    this.instances.delete(name);
    let expr = unwrap(value);
    // qs[:10], qs[0]: rows of the queryset.
    if (expr?.name === 'MemberExpression' && expr.lastChild?.name === ']') expr = unwrap(expr.firstChild);
    if (!expr || expr.name !== 'CallExpression') return;
    const ctx = this.ormContext();
    const built = this.file.django ? djangoStatement(expr, ctx) : sqlalchemyInstanceRead(expr, ctx);
    if (!built?.returnsInstance) return;
    const conn = this.file.django ? this.file.django.connectionFor(this, built.using) : this.instanceConn(expr);
    this.instances.set(name, { ...built.returnsInstance, assigned: new Map(), conn });
  }

  /** The Session a SQLAlchemy read ran on: the receiver at the root of its chain. */
  private instanceConn(expr: Node): Conn | undefined {
    let current: Node | undefined = expr;
    for (let k = 0; current && k < 12; k++) {
      const method = methodCall(current, this.text);
      if (!method) return undefined;
      const object = unwrap(method.object);
      if (object && object.name !== 'CallExpression') {
        const binding = this.receiver(object, false);
        if (binding?.kind === 'factory' && binding.scoped) return this.scopedOrNew(binding);
        return binding?.kind === 'conn' ? binding.conn : undefined;
      }
      current = object;
    }
    return undefined;
  }

  /** `job.status = "done"`: Django keeps it for save(); SQLAlchemy's Session writes it at its next flush. */
  private instanceWrite(instance: Instance, column: string, value: Node, target: Node): void {
    if (this.file.django) {
      instance.assigned?.set(column, value);
      return;
    }
    instance.pending ??= new Map();
    instance.pending.set(column, { value, at: target });
    if (instance.conn) this.dirtyInstances.add(instance);
  }

  /**
   * The Session writes its instances' changes in one UPDATE each at commit(),
   * flush(), its next query (autoflush) or the end of its begin() block.
   */
  flushInstances(conn: Conn): void {
    for (const instance of [...this.dirtyInstances]) {
      if (instance.conn !== conn || !instance.pending) continue;
      this.dirtyInstances.delete(instance);
      const built = updateInstance(instance, instance.pending, this.ormContext());
      instance.pending = undefined;
      if (built) this.builtSite(built, conn);
    }
  }

  private preparedThreshold(conn: Conn, value: Node): void {
    const threshold = thresholdOf(value, this.file.readContext);
    if (threshold.kind !== 'value' || threshold.value !== null) return;
    if (conn.origin === 'callback') this.thresholdOff = true;
    else if (conn.entry) conn.entry.thresholdOff = 'prepare_threshold = None on the connection';
  }

  // ---- expressions -------------------------------------------------------------------

  walkExpression(node: Node): void {
    this.walkExpressionCalls(node, false);
  }

  /** Handles every call under `node`, arguments before the call that takes them. */
  private walkExpressionCalls(node: Node, skipTop: boolean): void {
    const visit = (n: Node, top: boolean) => {
      if (n.name === 'LambdaExpression' || n.name === 'FunctionDefinition' || n.name === 'ClassDefinition') return;
      for (const child of children(n)) visit(child, false);
      if (n.name === 'CallExpression' && !(top && skipTop)) this.handleCall(n);
    };
    visit(node, true);
  }

  private handleCall(node: Node): void {
    const call = callParts(node, this.text);
    if (!call) return;
    const method = methodCall(node, this.text);
    const qualified = this.file.qualify(call.callee);
    this.sideEffect(node, qualified, method?.method, method ? dottedName(method.object, this.text) : undefined);
    // ORM chains: the SQL is written at the chain's last call; the calls before it are not the job's work.
    const orm = method ? this.ormChain(node) : undefined;
    if (orm === 'step') return;
    if (orm === 'query') {
      const built = sqlalchemyStatement(node, this.ormContext());
      const conn = this.instanceConn(node);
      if (built && built.host.text) this.builtSite(built, conn);
      else if (conn) executed(conn, span(node));
      return;
    }
    if (method) {
      let object = this.receiver(method.object, SQL_METHOD_NAMES.has(method.method) || CONTROL_METHODS.has(method.method));
      if (object?.kind === 'factory' && object.scoped) object = { kind: 'conn', conn: this.scopedOrNew(object) };
      if (object?.kind === 'conn' || object?.kind === 'cursor') {
        this.connectionMethod(node, object.conn, method.method, call.args, object.kind);
        return;
      }
      if (object?.kind === 'pool' && poolSqlMethod(object.driver, method.method)) {
        this.poolSite(node, object, method.method, call.args);
        return;
      }
      if (!object && EXECUTE_METHODS.has(method.method)) {
        this.sqlSite(sqlArgument(call.args), undefined, call.args, method.method);
        return;
      }
      // Django: Job.objects.select_for_update(skip_locked=True).filter(...).first(), job.save(), job.delete().
      if (this.file.django && this.djangoOrm(node)) return;
    }
    if (qualified && EXTRAS_FUNCTIONS.has(qualified)) {
      const cursor = positional(call.args, 0);
      const binding = cursor ? this.receiver(cursor, true) : undefined;
      const conn = binding?.kind === 'conn' || binding?.kind === 'cursor' ? binding.conn : undefined;
      this.sqlSite(positional(call.args, 1) ?? keyword(call.args, 'sql'), conn);
      if (conn) executed(conn, span(node));
      return;
    }
    if (this.isQueryFunction(call.callee)) {
      this.sqlSite(positional(call.args, 0), undefined, call.args, 'execute');
      return;
    }
    if (isWork(qualified ?? dottedName(call.callee, this.text), method?.method)) this.noteWork();
    if (!this.maybeInline(node, call.callee, call.args, !!method)) this.escapes(call.args, qualified ?? dottedName(call.callee, this.text), method?.method);
  }

  /**
   * A call this walk does not follow: a connection passed to it, or a shared
   * one (Django's, a scoped_session) it can reach, may be committed there.
   */
  private escapes(args: Arg[], callee: string | undefined, method: string | undefined): void {
    if (!isWork(callee, method)) return;
    for (const a of args) {
      const name = dottedName(unwrap(a.value), this.text);
      const binding = name ? this.env.get(name) : undefined;
      if (binding?.kind === 'conn' || binding?.kind === 'cursor') noteEnd(binding.conn, 'unknown');
    }
    for (const conn of this.conns) if (conn.shared) noteEnd(conn, 'unknown');
  }

  /** asyncpg's pool.execute/fetch/fetchrow/fetchval and SQLAlchemy 1.x's engine.execute: each call on any connection of the pool. */
  private poolSite(node: Node, pool: Extract<Binding, { kind: 'pool' }>, name: string, args: Arg[]): void {
    const use: ConnectionUse = { kind: 'pool', configId: pool.entry?.config.id };
    const conn = this.newConn(pool.driver, use, 'parameter', pool.entry, pool.driver === 'asyncpg' ? true : 'unknown');
    this.conns.delete(conn);
    this.sqlSite(sqlArgument(args), conn, args, name);
    void node;
  }

  /** The code does something other than SQL while these transactions are open. */
  private noteWork(): void {
    for (const conn of this.conns) {
      if (conn.flow.explicit.length === 0 && conn.flow.dirty !== true) continue;
      const scope = scopeOf(conn, this.file.model.file);
      if (scope.kind === 'transaction') this.file.workIn.add(scope.id);
    }
  }

  private connectionMethod(node: Node, conn: Conn, name: string, args: Arg[], via: 'conn' | 'cursor'): void {
    if (conn.driver === 'sqlalchemy' && via === 'conn' && conn.origin !== 'sa.raw') {
      if (this.sqlalchemyMethod(node, conn, name, args)) return;
    } else if (sqlMethodOf(conn.driver, via).has(name) && !(via === 'conn' && (conn.driver === 'psycopg2' || conn.driver === 'django' || conn.origin === 'sa.raw'))) {
      const statements = this.sqlSite(sqlArgument(args), conn, args, name);
      this.afterStatements(conn, statements, span(node));
      return;
    }
    if (OPAQUE_METHODS.has(name)) {
      executed(conn, span(node));
      return;
    }
    if (via !== 'conn') return;
    if (name === 'commit' || name === 'rollback') ended(conn, name);
    else if (name === 'close' && conn.exitEnds === 'rollback') ended(conn, 'rollback');
    else if (name === 'set_autocommit') conn.flow.autocommit = literalBool(positional(args, 0), this.text);
    else if (name === 'set_session') {
      const value = keyword(args, 'autocommit');
      if (value) conn.flow.autocommit = literalBool(value, this.text);
    }
  }

  /**
   * A SQLAlchemy Connection or Session: execute(text(...) | select/update/delete
   * builders), exec_driver_sql(), scalars(), session.query(...) chains,
   * session.delete(obj). True when the call was one of these.
   */
  private sqlalchemyMethod(node: Node, conn: Conn, name: string, args: Arg[]): boolean {
    if (name === 'commit' || name === 'flush' || name === 'execute' || name === 'scalars' || name === 'scalar' || name === 'query') this.flushInstances(conn);
    if (name === 'exec_driver_sql' || ((name === 'execute' || name === 'scalars' || name === 'scalar' || name === 'stream' || name === 'stream_scalars') && args.length > 0)) {
      const argument = sqlArgument(args);
      const built = argument ? this.sqlalchemyBuilder(argument) : undefined;
      const statements = built ? this.builtSite(built, conn) : this.sqlSite(argument, conn, args, name === 'exec_driver_sql' ? 'exec_driver_sql' : 'sqlalchemy');
      this.afterStatements(conn, statements, span(node));
      return true;
    }
    if (name === 'delete' || name === 'merge' || name === 'add' || name === 'flush') {
      const target = positional(args, 0);
      const instance = name === 'delete' && target ? this.instanceOf(target) : undefined;
      if (instance) this.builtSite(deleteInstance(instance, target!), conn);
      else executed(conn, span(node));
      return true;
    }
    return false;
  }

  /** session.query(...) chains and select()/update()/delete()/insert() builders, as SQL. */
  private sqlalchemyBuilder(node: Node): BuiltStatement | undefined {
    return sqlalchemyStatement(node, this.ormContext());
  }

  /** A SQL site for SQL the front end wrote for ORM code (an ORM chain or builder): its text maps onto the code it stands for. */
  builtSite(built: BuiltStatement, conn: Conn | undefined) {
    const analysis = analyzeHostText(built.host, 'dollar');
    if (analysis.statements.length === 0) return [];
    const site: SqlSite = {
      span: built.host.span,
      analysis: { statements: analysis.statements, errors: [] },
      scope: conn ? scopeOf(conn, this.file.model.file) : { kind: 'unknown' },
      connection: conn ? conn.use : { kind: 'unknown' },
      driver: conn ? conn.driver : this.file.driverOfFile,
    };
    if (built.params.length > 0) site.params = built.params;
    if (conn?.callback) site.callback = conn.callback;
    if (this.info.name) site.functionName = this.info.name;
    this.file.addSite({ site, inTry: [...this.tries], inHandler: this.handler });
    if (conn) executed(conn, built.host.span);
    return analysis.statements;
  }

  /** What the ORM code of this walk can read: names, constants, models and the enclosing function's parameters. */
  ormContext(): OrmContext {
    return {
      text: this.text,
      qualify: (n) => this.file.qualify(n),
      valueOf: (n) => this.file.localValue(n) ?? this.file.constants.get(this.text.slice(n.from, n.to)),
      isParameter: (name) => this.params.has(name),
      model: (n) => this.file.models.modelOf(n, this.file),
      instance: (n) => this.instanceOf(n),
    };
  }

  /** The model instance a name holds (`job = Job.objects.select_for_update()...first()`), if this walk knows. */
  instanceOf(node: Node): ModelRef | undefined {
    const name = dottedName(unwrap(node), this.text);
    return name ? this.instances.get(name) : undefined;
  }

  /**
   * 'query' for the last call of a SQLAlchemy session.query(...) chain, 'step'
   * for the calls inside an ORM chain or builder (SQL is written at their end),
   * undefined for anything else.
   */
  private readonly chainRoots = new Map<number, { root: Node; first: string } | null>();

  /** chainRoot, remembered per call: every link of a long chain asks for the same root. */
  private rootOf(node: Node): { root: Node; first: string } | undefined {
    const known = this.chainRoots.get(node.from * 65536 + (node.to - node.from));
    if (known !== undefined) return known ?? undefined;
    const method = methodCall(node, this.text);
    let found: { root: Node; first: string } | undefined;
    if (method) {
      const object = unwrap(method.object);
      found = object?.name === 'CallExpression' && methodCall(object, this.text) ? this.rootOf(object) : object ? { root: object, first: method.method } : undefined;
    }
    this.chainRoots.set(node.from * 65536 + (node.to - node.from), found ?? null);
    return found;
  }

  private ormChain(node: Node): 'query' | 'step' | undefined {
    const found = this.rootOf(node);
    if (!found) return undefined;
    const { root, first } = found;
    const outer = isOuterCall(node);
    if (first === 'query' && root.name !== 'CallExpression') {
      const binding = this.receiver(root, false);
      const isSession = binding?.kind === 'conn' ? binding.conn.driver === 'sqlalchemy' : binding?.kind === 'factory' && binding.scoped;
      if (!isSession) return undefined;
      const steps = this.text.slice(node.from, node.to);
      if (outer) return 'query';
      return steps.includes('.query(') && methodCall(node, this.text)?.method !== 'query' ? 'step' : undefined;
    }
    if (root.name === 'CallExpression') {
      const qualified = this.file.qualify(root.firstChild!) ?? '';
      if (/^sqlalchemy(\.sql|\.sql\.expression|\.future|\.dialects\.postgresql)?\.(select|update|delete|insert)$/.test(qualified)) return 'step';
    }
    // Job.objects.filter(...): inner steps of a Django chain (its last call is djangoOrm's).
    if (!outer && this.file.django && root.name === 'MemberExpression' && /\.(objects|_default_manager|_base_manager)$/.test(this.text.slice(root.from, root.to))) return 'step';
    return undefined;
  }

  /** Django ORM calls on a model's manager or an instance; true when the call was one. */
  private djangoOrm(node: Node): boolean {
    if (!isOuterCall(node)) return false;
    const built = djangoStatement(node, this.ormContext());
    if (!built) return false;
    const conn = this.file.django!.connectionFor(this, built.using);
    const statements = this.builtSite(built, conn);
    if (statements.length === 0) executed(conn, span(node));
    return true;
  }

  /** Transaction control sent as SQL, then the statement's own effect on the transaction. */
  private afterStatements(conn: Conn, statements: { transaction?: string }[] | undefined, at: { start: number; end: number }): void {
    if (!statements || statements.length === 0) {
      executed(conn, at);
      return;
    }
    for (const statement of statements) {
      if (statement.transaction === 'begin') beganBySql(conn, this.file.model.file);
      else if (statement.transaction === 'commit' || statement.transaction === 'rollback') endedBySql(conn, statement.transaction);
      else executed(conn, at);
    }
  }

  /**
   * Records a site for the SQL of `sqlNode` run on `conn`; returns its
   * statements. `args` and `method` are the call's, for the values bound to
   * the placeholders and the placeholder style.
   */
  private sqlSite(sqlNode: Node | undefined, conn: Conn | undefined, args: Arg[] = [], method = 'execute') {
    if (!sqlNode) return undefined;
    const resolved = resolveText(sqlNode, this.file.resolveContext());
    if (!resolved || resolved.text.trim() === '') return undefined;
    const style = placeholderStyle(conn?.driver ?? this.file.driverOfFile, method, resolved);
    const { host, refs } = numberPlaceholders(resolved, style);
    const analysis = analyzeHostText(host, 'dollar');
    // A syntax error is reported only for drivers that speak nothing but PostgreSQL (psycopg, psycopg2,
    // asyncpg). SQLAlchemy and Django run every dialect's SQL through the same calls (SQLAlchemy's own
    // MySQL, SQLite and Oracle dialects): there it is unknown, as in the TS front end. The statements
    // that do parse are read either way.
    const postgresOnly = conn !== undefined && conn.origin !== 'parameter' && POSTGRES_ONLY_DRIVERS.has(conn.driver);
    if (postgresOnly && analysis.errors.length > 0) this.file.model.sqlErrors.push(...analysis.errors);
    if (analysis.statements.length === 0) return [];
    const scope: Scope = conn ? scopeOf(conn, this.file.model.file) : { kind: 'unknown' };
    const site: SqlSite = {
      span: host.pinned ?? host.span,
      analysis: { statements: analysis.statements, errors: [] },
      scope,
      connection: conn ? conn.use : { kind: 'unknown' },
      driver: conn ? conn.driver : this.file.driverOfFile,
    };
    const params = paramsOf(refs, this.boundValuesOf(args, method, conn?.driver ?? this.file.driverOfFile, resolved), (n) => this.hostParam(n));
    if (params) site.params = params;
    resolveSettingNames(site.analysis.statements, host, params);
    if (conn?.callback) site.callback = conn.callback;
    if (this.info.name) site.functionName = this.info.name;
    this.file.addSite({
      site,
      inTry: [...this.tries],
      inHandler: this.handler,
      mayBeIn: conn ? possibleImplicitIds(conn, this.file.model.file) : undefined,
    });
    return analysis.statements;
  }

  /** The values a call binds: execute(q, params), asyncpg's execute(q, *args), text(q).bindparams(k=v). */
  private boundValuesOf(args: Arg[], method: string, driver: Driver, host: HostText): BoundValues | undefined {
    const valueOf = (n: Node) => this.file.localValue(n) ?? this.file.constants.get(this.text.slice(n.from, n.to));
    if (driver === 'asyncpg' && method !== 'executemany') {
      const rest = args.filter((a) => !a.name && !a.star).slice(1).map((a) => a.value);
      if (args.some((a) => a.star)) return { opaque: true };
      return { sequence: rest };
    }
    const given = positional(args, 1) ?? keyword(args, 'params') ?? keyword(args, 'parameters') ?? keyword(args, 'vars');
    const bound = given ? boundValues(given, this.text, valueOf) : undefined;
    if (host.boundParams) return { ...bound, mapping: new Map([...(bound?.mapping ?? []), ...host.boundParams]), opaque: false };
    return bound;
  }

  /** One bound value: a literal, a parameter of this function (its callers choose it), or unknown. */
  hostParam(node: Node | undefined): HostParam {
    const valueOf = (n: Node) => this.file.localValue(n) ?? this.file.constants.get(this.text.slice(n.from, n.to));
    return hostParam(node, this.text, (name) => this.params.has(name), valueOf);
  }

  private isQueryFunction(callee: Node): boolean {
    const names = this.file.options.queryFunctions;
    if (!names || names.length === 0) return false;
    const name = dottedName(callee, this.text);
    if (!name) return false;
    const last = name.slice(name.lastIndexOf('.') + 1);
    return names.includes(name) || names.includes(last);
  }

  /** A function of this file called with a pool, connection or cursor: walk it here, with them. */
  private maybeInline(node: Node, callee: Node, args: Arg[], isMethodCall: boolean): boolean {
    if (args.length === 0 || this.stack.length > 4) return false;
    const def = this.file.resolveDef(callee, node);
    if (!def || def.name !== 'FunctionDefinition' || this.stack.includes(def.from)) return false;
    // Names only: a call as an argument would be evaluated twice here.
    const bindings = (value: Node): Binding | undefined => {
      const name = dottedName(unwrap(value), this.text);
      return name ? this.lookup(name) : undefined;
    };
    if (!args.some((a) => bindings(a.value))) return false;
    this.file.walkedAtCall.add(def.from);
    const walk = new Walk(this.file, { name: defName(def, this.text), className: this.file.classOfDef.get(def.from), def, parent: this });
    walk.bindParameters(def, args, isMethodCall, undefined, bindings);
    for (const conn of walk.conns) this.conns.add(conn);
    walk.walkBlock(bodyStatements(def));
    for (const conn of walk.conns) this.conns.add(conn);
    return true;
  }

  private sideEffect(node: Node, qualified: string | undefined, method: string | undefined, receiver: string | undefined): void {
    const isEffect = pythonSideEffect(qualified, method, receiver) !== undefined;
    if (!isEffect) return;
    // The innermost `with` connection, else a connection of this walk inside a transaction (@transaction.atomic).
    const conn = this.contexts[this.contexts.length - 1] ?? [...this.conns].reverse().find((c) => c.flow.explicit.length > 0);
    if (!conn) return;
    let scope: Scope = { kind: 'unknown' };
    if (conn.flow.explicit.length > 0 || conn.flow.dirty === true) scope = scopeOf(conn, this.file.model.file);
    else if (conn.flow.dirty === false) scope = { kind: 'autocommit' };
    const callee = qualified ?? this.text.slice(node.firstChild!.from, node.firstChild!.to);
    this.file.model.sideEffects.push({ span: span(node), callee, scope });
  }
}

// ---- small syntax helpers ------------------------------------------------------------

/** Names of parameters that identify a tenant. */
const TENANT_PARAMETER = /(^|_)(tenant|schema|customer|org|organization|account|shard|workspace)(_|$|id|name|slug)/i;

/** Parameter annotations that say what a parameter is. */
const ANNOTATED: Record<string, { kind: 'pool' | 'conn'; driver: Driver }> = {
  'asyncpg.Pool': { kind: 'pool', driver: 'asyncpg' },
  'asyncpg.pool.Pool': { kind: 'pool', driver: 'asyncpg' },
  'asyncpg.Connection': { kind: 'conn', driver: 'asyncpg' },
  'asyncpg.connection.Connection': { kind: 'conn', driver: 'asyncpg' },
  'asyncpg.pool.PoolConnectionProxy': { kind: 'conn', driver: 'asyncpg' },
  'sqlalchemy.engine.Engine': { kind: 'pool', driver: 'sqlalchemy' },
  'sqlalchemy.Engine': { kind: 'pool', driver: 'sqlalchemy' },
  'sqlalchemy.ext.asyncio.AsyncEngine': { kind: 'pool', driver: 'sqlalchemy' },
  'sqlalchemy.orm.Session': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlalchemy.orm.session.Session': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlalchemy.ext.asyncio.AsyncSession': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlalchemy.engine.Connection': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlalchemy.Connection': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlalchemy.ext.asyncio.AsyncConnection': { kind: 'conn', driver: 'sqlalchemy' },
  'sqlmodel.Session': { kind: 'conn', driver: 'sqlalchemy' },
};

/** `Optional[Session]`, `Session | None`, `"Session"`: the type named. */
function annotationType(node: Node): Node {
  if (node.name === 'MemberExpression' && node.lastChild?.name === ']') {
    const inner = children(node).find((c, i, all) => i > 0 && all[i - 1].name === '[');
    return inner ? annotationType(inner) : node;
  }
  if (node.name === 'BinaryExpression') return annotationType(node.firstChild ?? node);
  return node;
}

const NOT_WORK_FUNCTIONS = new Set([
  'len', 'str', 'int', 'float', 'bool', 'dict', 'list', 'tuple', 'set', 'frozenset', 'print', 'isinstance', 'range',
  'enumerate', 'zip', 'min', 'max', 'sum', 'sorted', 'repr', 'format', 'getattr', 'hasattr', 'setattr', 'iter', 'next',
  'json.dumps', 'json.loads', 'datetime.now', 'datetime.datetime.now', 'time.time', 'time.monotonic', 'uuid.uuid4',
]);
const NOT_WORK_METHODS = new Set([
  'fetchone', 'fetchall', 'fetchmany', 'scalar', 'format', 'join', 'encode', 'decode', 'get', 'keys', 'values', 'items',
  'append', 'extend', 'pop', 'strip', 'split', 'lower', 'upper', 'startswith', 'endswith', 'replace', 'copy', 'update',
  'debug', 'info', 'warning', 'warn', 'error', 'exception', 'critical', 'log', 'as_string', 'as_bytes',
]);

/** A call that stands for the job's work: anything but builtins, logging, result reading and SQL composition. */
function isWork(callee: string | undefined, method: string | undefined): boolean {
  if (method && NOT_WORK_METHODS.has(method)) return false;
  if (!callee) return true;
  if (NOT_WORK_FUNCTIONS.has(callee)) return false;
  if (/^(psycopg2?\.sql|logging|log|logger|self\.log|self\.logger|sqlalchemy|sqlmodel|django\.db\.models|django\.utils\.timezone|datetime|F|Q|timedelta)\b/.test(callee)) return false;
  return true;
}

function sqlArgument(args: Arg[]): Node | undefined {
  return positional(args, 0) ?? keyword(args, 'query') ?? keyword(args, 'sql') ?? keyword(args, 'statement');
}

function literalBool(node: Node | undefined, text: string): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  const value = text.slice(expr.from, expr.to);
  return value === 'True' ? true : value === 'False' ? false : 'unknown';
}

/** A def decorated with contextlib's @contextmanager or @asynccontextmanager. */
function isContextManager(def: Node, text: string): boolean {
  const decorated = def.parent;
  if (decorated?.name !== 'DecoratedStatement') return false;
  return decorated.getChildren('Decorator').some((d) => /\b(async)?contextmanager\s*$/.test(text.slice(d.from, d.to).trim()));
}

function unwrapDecorated(node: Node): Node | undefined {
  if (node.name === 'DecoratedStatement') return node.getChild('FunctionDefinition') ?? node.getChild('ClassDefinition') ?? undefined;
  return node;
}

export function defName(def: Node, text: string): string {
  const id = def.getChild('VariableName');
  return id ? text.slice(id.from, id.to) : '<def>';
}

/** The statements of a def's, class's or compound statement's Body (or of a Body itself). */
function bodyStatements(node: Node): Node[] {
  const body = node.name === 'Body' ? node : node.getChild('Body');
  if (!body) return [];
  return children(body).filter((c) => c.name !== ':');
}

interface Parameter {
  name: string;
  kind: 'normal' | 'star' | 'kwargs';
  annotation?: Node;
}

function parameters(def: Node, text: string): Parameter[] {
  const list = def.getChild('ParamList');
  if (!list) return [];
  const params: Parameter[] = [];
  let pending: 'star' | 'kwargs' | undefined;
  let afterDefault = false;
  for (const c of children(list)) {
    if (c.name === '*') pending = 'star';
    else if (c.name === '**') pending = 'kwargs';
    else if (c.name === ',') afterDefault = false;
    else if (c.name === 'AssignOp') afterDefault = true;
    else if (c.name === 'VariableName' && !afterDefault) {
      params.push({ name: text.slice(c.from, c.to), kind: pending ?? 'normal' });
      pending = undefined;
    } else if (c.name === 'TypeDef' && params.length > 0) {
      params[params.length - 1].annotation = c.lastChild ?? undefined;
    }
  }
  return params;
}

interface WithItem {
  expr: Node;
  target?: Node;
}

function withItems(node: Node): WithItem[] {
  const items: WithItem[] = [];
  let current: WithItem | undefined;
  let expectTarget = false;
  for (const c of children(node)) {
    if (c.name === 'with' || c.name === 'async' || c.name === ',') {
      expectTarget = false;
      continue;
    }
    if (c.name === 'Body') break;
    if (c.name === 'as') {
      expectTarget = true;
      continue;
    }
    if (expectTarget && current) {
      current.target = c;
      expectTarget = false;
      continue;
    }
    current = { expr: c };
    items.push(current);
  }
  return items;
}
