// The walk over one Python file: which names hold pools, connections and
// cursors, where SQL is sent on them, and in which transaction. Module code,
// every function, pool callbacks (with the pool's connection), and functions
// called in the file with a known connection (walked at the call, once per
// call site, instead of on their own). What each driver's API means comes
// from the registry (drivers/index.ts).
import type { Tree } from '@lezer/common';
import type { Driver, FileModel, HostParam, ResetCallback } from '../../../model/index.ts';
import type { FrontEndOptions } from '../../types.ts';
import { DRIVERS, SQL_TEXT, annotationOf, fileDriverOf, fileDrivers, finishConfig, implicitFormOf, importsHandedIn, inheritedDriverModules, makerOf, readConfig, assumedPoolConfig } from '../drivers/index.ts';
import { ModelIndex } from '../orm/models.ts';
import { callParts, children, dottedName, hasArguments, span, unwrap, type Node } from '../syntax.ts';
import { annotationType, bodyStatements, defName, parameters, unwrapDecorated, withItems } from './defs.ts';
import { hostParam } from './params.ts';
import type { FileDriver, ImportedSource } from './driver-api.ts';
import type { EngineFile, Guest, SiteMeta } from './engine-file.ts';
import { moduleConstants, qualifiedName, readImports, type Imports } from './imports.ts';
import { collectJobTransactions } from './jobs.ts';
import { MAX_MODULES, importRoot, moduleDef, moduleValue, readModule, resolveModule, returnedCall, type ModuleSource } from './project.ts';
import { handedInPoolConfig } from './project-pools.ts';
import { projectArguments, type PassedArgument } from './project-callers.ts';
import { usedOnceByItsFunction } from './local-pools.ts';
import { perTenantMaker, tenantFactoryCall } from './tenant-pools.ts';
import { copyFlow, initialFlow, neverCommits, resetNumbering } from './scopes.ts';
import type { ResolveContext } from './strings.ts';
import { SqlMembers } from './sql-members.ts';
import type { ConfigEntry, Conn, ReadContext, StaticBinding } from './types.ts';
import { returnedSqlSites } from './returned-sql.ts';
import { noteHookSkips } from './hook-paths.ts';
import { Walk } from './walk.ts';
import { guestDef } from './guest-file.ts';
import { importedItemText, importedText } from './imported-text.ts';
import { DefIndex } from './def-index.ts';

export function analyzePython(model: FileModel, tree: Tree, text: string, options: FrontEndOptions): void {
  resetNumbering();
  new PythonFile(model, tree, text, options).run();
}

class PythonFile implements EngineFile {
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
  readonly threadInlined = new Set<number>();
  readonly calledOutside = new Set<number>();
  readonly metas: SiteMeta[] = [];
  /** Transactions that were open while the code called something that is not SQL (the job's work). */
  readonly workIn = new Set<string>();
  readonly driverOfFile: Driver;
  readonly importsDriver: boolean;
  readonly models = new ModelIndex();
  readonly drivers: readonly FileDriver[];
  /** Files of the modules named in this file's imports, by level, module and importing file (many names come from one module). */
  private readonly resolved = new Map<string, string | undefined>();
  /** Project modules read for this file, by path (null: not readable). */
  private readonly projectModules = new Map<string, ModuleSource | null>();
  private readonly states = new Map<Driver, unknown>();
  private connCount = 0;
  /** The file's calls and defs, each function's nested defs and once-bound names (read once). */
  readonly index: DefIndex;

  constructor(
    readonly model: FileModel,
    readonly tree: Tree,
    readonly text: string,
    readonly options: FrontEndOptions,
    /** For a module read as a guest: the imports of the file that calls it. */
    hostImports?: Imports,
  ) {
    this.index = new DefIndex(tree, text);
    this.imports = readImports(tree, text, this.index.imports);
    for (const module of hostImports ? inheritedDriverModules(this.imports.modules, hostImports.modules) : []) this.imports.modules.add(module);
    this.constants = moduleConstants(tree, text, this.index.binders);
    this.driverOfFile = fileDriverOf(this.imports.modules);
    this.importsDriver = importsHandedIn(this.imports.modules);
    this.drivers = fileDrivers(this);
  }

  qualify = (node: Node) => qualifiedName(node, this.text, this.imports);

  qualifyName = (name: string): string | undefined => {
    const [first, ...rest] = name.split('.');
    const base = this.imports.names.get(first);
    return base ? [base, ...rest].join('.') : undefined;
  };

  driverState<T>(driver: Driver, make: () => T): T {
    if (!this.states.has(driver)) this.states.set(driver, make());
    return this.states.get(driver) as T;
  }

  /** A module of this project that this file imports from, parsed (within the per-file budget); its path is a dependency. */
  dependOn(paths: readonly string[]): void {
    // The project-wide readings hand the same list of the project's files for every question.
    if (this.dependedLists.has(paths)) return;
    this.dependedLists.add(paths);
    for (const path of paths) {
      if (path === this.model.file || this.dependencySet.has(path)) continue;
      this.dependencySet.add(path);
      (this.model.dependencies ??= []).push(path);
    }
  }

  private readonly dependencySet = new Set<string>();
  private readonly dependedLists = new WeakSet<readonly string[]>();

  projectModule(module: string, level: number, from = this.model.file): ModuleSource | undefined {
    const key = `${level}:${module}:${from}`;
    let path = this.resolved.get(key);
    if (path === undefined && !this.resolved.has(key)) this.resolved.set(key, (path = resolveModule(from, module, level)));
    if (!path) return undefined;
    if (this.projectModules.has(path)) return this.projectModules.get(path) ?? undefined;
    if (this.projectModules.size >= MAX_MODULES) return undefined;
    const source = readModule(path);
    this.projectModules.set(path, source);
    if (source) this.dependOn([path]);
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

  private readonly factories = new Map<string, StaticBinding | null>();

  private readonly passed = new Map<string, PassedArgument[] | null>();

  projectArguments(def: Node, name: string): PassedArgument[] | undefined {
    const key = `${def.from}:${name}`;
    const known = this.passed.get(key);
    if (known !== undefined) return known ?? undefined;
    const own: ModuleSource = { path: this.model.file, text: this.text, tree: this.tree, imports: this.imports, constants: this.constants };
    const found = projectArguments(own, def, name);
    this.dependOn(found?.files ?? []);
    this.passed.set(key, found?.args ?? null);
    return found?.args;
  }

  /**
   * What a call of a function imported from a project module makes, when that
   * function returns a driver's maker call (`def get_engine(): return
   * create_engine(...)`): its configuration as this file sees it.
   */
  importedLiteral(name: string): HostParam | undefined {
    const from = this.imports.fromImports.get(name);
    const source = from ? this.projectModule(from.module, from.level) : undefined;
    const value = source && from ? source.constants.get(from.name) : undefined;
    if (!source || !value) return undefined;
    const param = hostParam(value, source.text, () => false, (n) => source.constants.get(source.text.slice(n.from, n.to)));
    return param.kind === 'literal' ? param : undefined;
  }

  importedFactory(name: string): StaticBinding | undefined {
    const known = this.factories.get(name);
    if (known !== undefined) return known ?? undefined;
    const from = this.imports.fromImports.get(name);
    const source = from ? this.projectModule(from.module, from.level) : undefined;
    const def = source && from ? moduleDef(source, from.name) : undefined;
    const isPoolMaker = (call: Node) => makerOf(source && qualifiedName(call.firstChild, source.text, source.imports))?.kind === 'pool';
    // `return create_engine(...)`, or a factory keeping one pool per tenant (tenant-pools.ts).
    const call = def && source ? (returnedCall(def) ?? tenantFactoryCall(def, source.text, isPoolMaker)) : undefined;
    const binding = source && call && from ? this.foreignBinding(source, from.name, from.span, 0, call) : undefined;
    if (binding?.kind === 'pool' && source && call && perTenantMaker(call, source.text)) binding.entry.config.reuse = 'per-tenant';
    this.factories.set(name, binding ?? null);
    return binding;
  }

  private foreignBinding(source: ModuleSource, name: string, at: { start: number; end: number }, depth: number, returned?: Node): StaticBinding | undefined {
    if (depth > 2) return undefined;
    const value = returned ?? moduleValue(source, name);
    if (!value) {
      // Re-exported: `from .pool import pool` in the package's __init__.py.
      const again = source.imports.fromImports.get(name);
      const next = again ? this.projectModule(again.module, again.level, source.path) : undefined;
      return next && again ? this.foreignBinding(next, again.name, at, depth + 1) : undefined;
    }
    const call = unwrap(value);
    const parts = call ? callParts(call, source.text) : undefined;
    if (!call || !parts) return undefined;
    // `engine = build_engine()`, a function of that module returning a maker's call.
    const local = !returned && parts.callee.name === 'VariableName' ? moduleDef(source, source.text.slice(parts.callee.from, parts.callee.to)) : undefined;
    const made = local ? returnedCall(local) : undefined;
    if (made) return this.foreignBinding(source, name, at, depth, made);
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
      finishConfig(entry, source.path);
      this.model.connections.push(entry.config);
      this.entries.set(-++this.foreignCount, entry);
      return maker.kind === 'pool' ? { kind: 'pool', entry } : { kind: 'connect', entry };
    }
    if (!qualified) return undefined;
    const there: ImportedSource = {
      text: source.text,
      qualify: ctx.qualify,
      bindingOf: (other) => this.foreignBinding(source, other, at, depth + 1),
      hasName: (other) => source.constants.has(other) || source.imports.fromImports.has(other),
    };
    for (const driver of DRIVERS) {
      const binding = driver.importedBinding?.(there, call, qualified);
      if (binding) return binding;
    }
    return undefined;
  }

  private readonly assumed = new Map<Driver, ConfigEntry>();

  /** The config standing for a driver's pool this file only sees as an annotated parameter (one per driver and file). */
  assumedPool(driver: Driver, at: Node): ConfigEntry | undefined {
    const known = this.assumed.get(driver);
    if (known) return known;
    const config = assumedPoolConfig(driver, at);
    if (!config) return undefined;
    const entry: ConfigEntry = { config, maker: { kind: 'pool', driver, name: 'parameter' }, threshold: { kind: 'default' }, callbackArgs: [] };
    this.assumed.set(driver, entry);
    this.model.connections.push(config);
    return entry;
  }

  private readonly handedIn = new Map<Driver, ConfigEntry | null>();

  handedInPool(driver: Driver, at: Node): ConfigEntry | undefined {
    const known = this.handedIn.get(driver);
    if (known !== undefined) return known ?? undefined;
    const root = driver === 'unknown' ? undefined : importRoot(this.model.file, this.imports.modules);
    const found = root ? handedInPoolConfig(root, driver, `${driver}-project@${at.from}`, span(at)) : undefined;
    this.dependOn(found?.files ?? []);
    const config = found?.config;
    const entry: ConfigEntry | undefined = config && { config, maker: { kind: 'pool', driver, name: 'project' }, threshold: { kind: 'default' }, callbackArgs: [] };
    if (config) this.model.connections.push(config);
    this.handedIn.set(driver, entry ?? null);
    return entry;
  }

  nextConnId(): string {
    return `c${++this.connCount}`;
  }

  newConnection(props: Omit<Conn, 'id' | 'implicitForm'>): Conn {
    return { id: this.nextConnId(), ...props, implicitForm: implicitFormOf(props) };
  }

  /** Reads the file's defs, pools and static bindings: enough to walk a def of it at a call (a guest, guest-file.ts). */
  prepared(): this {
    this.indexDefs();
    this.readConfigs();
    this.readStaticBindings();
    for (const driver of this.drivers) driver.prepare?.();
    return this;
  }

  guestDef(callee: Node, name?: string): Guest | undefined {
    return guestDef(this, callee, (model, source) => new PythonFile(model, source.tree, source.text, this.options, this.imports).prepared(), name);
  }

  run(): void {
    this.prepared();
    // Callbacks first: they are walked with the pool's connection and never on their own.
    for (const entry of this.entries.values()) this.walkCallbacks(entry);
    for (const driver of this.drivers) driver.walkCallbacks?.();
    const moduleWalk = new Walk(this, { name: undefined });
    moduleWalk.walkBlock(children(this.tree.topNode));
    moduleWalk.finish();
    // Functions nobody in this file calls with a connection: those never called here first, so that
    // their callees are walked at the call.
    const called = this.calledDefs();
    const defs = this.index.defs;
    // Those walked in place in the thread's transaction last: on their own only if a call of them ran outside one.
    const inThreadTx = (d: Node) => this.threadInlined.has(d.from);
    const order = [...defs.filter((d) => !called.has(d.from)), ...defs.filter((d) => called.has(d.from))];
    for (const def of [...order.filter((d) => !inThreadTx(d)), ...order.filter(inThreadTx)]) {
      if (this.walkedAtCall.has(def.from) || (inThreadTx(def) && !this.calledOutside.has(def.from))) continue;
      const className = this.classOfDef.get(def.from);
      const walk = new Walk(this, { name: defName(def, this.text), className, def });
      walk.bindParameters(def, [], false);
      walk.walkBlock(bodyStatements(def));
      walk.finish();
    }
    // SQL the file's functions return for code elsewhere to run (query builders).
    const file = {
      text: this.text,
      driverOfFile: this.driverOfFile,
      sites: this.model.sites,
      consumed: this.members.consumed,
      resolveContext: () => this.resolveContext(),
      ownStatements: this.ownStatements.bind(this),
    };
    this.model.sites.push(...returnedSqlSites(file, defs, (def) => defName(def, this.text)));
    for (const entry of this.entries.values()) finishConfig(entry, this.model.file);
    for (const driver of this.drivers) driver.finish?.();
    // Transactions rolled back on every path (SQLAlchemy's connect() without commit()) undo what they wrote.
    for (const site of [...this.model.sites, ...(this.model.calledSites ?? [])]) {
      if (site.scope.kind === 'transaction' && site.scope.id.includes('#') && neverCommits(site.scope.id)) site.scope = { ...site.scope, neverCommits: true };
    }
    collectJobTransactions(this.metas, this.workIn, this.model);
  }

  /** Defs that some call in this file passes arguments to. */
  private calledDefs(): Set<number> {
    const called = new Set<number>();
    for (const node of this.index.calls) {
      const call = callParts(node, this.text);
      // Most calls of a file are never asked for their arguments: whether there are any is enough here.
      if (!call || !hasArguments(call.argList)) continue;
      const def = this.resolveDef(call.callee, node);
      if (def?.name === 'FunctionDefinition') called.add(def.from);
    }
    return called;
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
    for (const call of this.index.calls) {
      const callee = call.firstChild;
      const maker = callee ? makerOf(this.qualify(callee)) : undefined;
      if (!maker) continue;
      const entry = readConfig(call, maker, this.readContext);
      if (maker.kind === 'pool' && perTenantMaker(call, this.text)) entry.config.reuse = 'per-tenant';
      else if (maker.kind === 'pool' && !entry.config.reuse && usedOnceByItsFunction(call, this.text)) entry.config.reuse = 'single-connection';
      this.entries.set(call.from, entry);
      this.model.connections.push(entry.config);
    }
  }

  /** What a call at module or class level makes: a maker's pool or connection, else a driver's session or factory. */
  private staticBindingOf(call: Node): StaticBinding | undefined {
    const entry = this.entries.get(call.from);
    if (entry) return entry.maker.kind === 'pool' ? { kind: 'pool', entry } : { kind: 'connect', entry };
    for (const driver of DRIVERS) {
      const binding = driver.staticBinding?.(this, call);
      if (binding) return binding;
    }
    return undefined;
  }

  /** `pool = ConnectionPool(...)` at module level, `self.pool = ...` in methods, class attributes. */
  private readStaticBindings(): void {
    const bindFrom = (target: Node | undefined, value: Node | undefined): [string, StaticBinding] | undefined => {
      const name = dottedName(target, this.text);
      const call = unwrap(value);
      if (!name || call?.name !== 'CallExpression') return undefined;
      const binding = this.staticBindingOf(call);
      return binding ? [name, binding] : undefined;
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
      const own = this.index.ownStatements(def);
      for (const node of own) {
        if (node.name === 'ScopeStatement' && this.text.slice(node.from, node.from + 6) === 'global') {
          for (const part of children(node)) if (part.name === 'VariableName') globalNames.add(this.text.slice(part.from, part.to));
        }
      }
      if (globalNames.size === 0) continue;
      for (const node of own) {
        if (node.name !== 'AssignStatement') continue;
        const parts = children(node);
        const found = bindFrom(parts[0], parts[parts.length - 1]);
        if (found && globalNames.has(found[0]) && !this.globals.has(found[0])) this.globals.set(found[0], found[1]);
      }
    }
    for (const [className, methods] of this.classMethods) {
      const attrs = new Map<string, StaticBinding>();
      for (const method of methods.values()) {
        const annotated = new Map(parameters(method, this.text).flatMap((p) => (p.annotation ? [[p.name, p.annotation] as const] : [])));
        for (const node of this.index.ownStatements(method)) {
          if (node.name !== 'AssignStatement') continue;
          const parts = children(node);
          const found = bindFrom(parts[0], parts[parts.length - 1]) ?? this.annotatedPoolAttr(parts[0], parts[parts.length - 1], annotated);
          if (found && found[0].startsWith('self.')) attrs.set(found[0], found[1]);
        }
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

  /**
   * `self.pool = pool` with the method's `pool: asyncpg.Pool`: the attribute is that pool, made elsewhere.
   * `self.session = session` with `session: AsyncSession` (a repository object): the attribute is a
   * connection handed in, the same one in every method, in a state no method knows.
   */
  private annotatedPoolAttr(target: Node | undefined, value: Node | undefined, annotated: Map<string, Node>): [string, StaticBinding] | undefined {
    const name = dottedName(target, this.text);
    const annotation = value?.name === 'VariableName' ? annotated.get(this.text.slice(value.from, value.to)) : undefined;
    const typed = annotation ? annotationOf(this.qualify(annotationType(annotation))) : undefined;
    if (!name || !typed || !annotation) return undefined;
    if (typed.kind === 'conn') return [name, { kind: 'session', entry: this.handedInPool(typed.driver.name, annotation), driver: typed.driver.name }];
    const entry = this.assumedPool(typed.driver.name, annotation) ?? this.handedInPool(typed.driver.name, annotation);
    return entry ? [name, { kind: 'pool', entry }] : undefined;
  }

  /** A def's statements that bind a name or return, not those of the defs, classes and lambdas inside it (DefIndex). */
  ownStatements(def: Node): readonly Node[] {
    return this.index.ownStatements(def);
  }

  /** The value of a name assigned once in the def that contains `node`. */
  localValue(node: Node): Node | undefined {
    return this.index.localValue(node);
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
      sqlText: SQL_TEXT,
      member: (node) => this.members.member(node),
      returned: (call) => this.members.returned(call),
      imported: (name) => importedText(this, name),
      importedItem: (name, key) => importedItemText(this, name, key),
    };
  }

  private readonly members = new SqlMembers(this);

  /** The expression `x.name` stands for (a class attribute, an attribute set once, a property's one return). */
  memberValue(node: Node): Node | undefined {
    return this.members.member(node);
  }

  /** The method of a class of this file that a call on one of its instances names (`self.notifier.send`). */
  memberMethod(callee: Node, at: Node): Node | undefined {
    return this.members.methodOf(callee, at);
  }

  /** A name of the class body that a method's default value names (`minutes=LEASE_MINUTES` in the class). */
  classConstant(name: string, at: Node): Node | undefined {
    return this.members.classConstant(name, at);
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
      const conn = this.newConnection({
        driver: arg.connDriver ?? entry.config.driver,
        use: { kind: 'pooled-client', configId: entry.config.id },
        entry,
        origin: 'callback',
        callback: { configId: entry.config.id, role, ...(arg.inPoolWorker ? { inPoolWorker: true } : {}) },
        flow: initialFlow(arg.autocommit ?? entry.config.autocommit),
      });
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
        const firstSite = this.metas.length;
        walk.bindParameters(target, [], false, conn, undefined, arg.connParam);
        walk.walkBlock(bodyStatements(target));
        walk.finish();
        if (role === 'reset' && !entry.config.driverReset) this.noteResetClears(entry, conn, firstSite, name);
        // A checkout hook that can skip its write leaves the previous job's setting for the job it readies.
        if (role === 'checkout') noteHookSkips(target, this.metas.slice(firstSite).filter((m) => m.conn === conn).map((m) => m.site), this.text);
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
      if (walk.preparedOff && role !== 'check') entry.thresholdOff = `${walk.preparedOff} in the ${role} callback ${name}`;
    }
  }

  /**
   * A reset= callback that runs DISCARD ALL or RESET ALL in autocommit, on no
   * branch of its own, clears the session on every return: the pool's reset,
   * as a driver's own would be (what the callback sets after it is the same
   * for every job).
   */
  private noteResetClears(entry: ConfigEntry, conn: Conn, firstSite: number, name: string): void {
    for (const meta of this.metas.slice(firstSite)) {
      if (meta.conn !== conn || meta.site.scope.kind !== 'autocommit' || meta.inHandler !== undefined) continue;
      if (conditional(this.tree, meta.site.span.start)) continue;
      for (const statement of meta.site.analysis.statements) {
        const clears = statement.discard === 'all' ? 'DISCARD ALL' : statement.settingWrites.some((w) => w.via === 'reset_all') ? 'RESET ALL' : undefined;
        if (!clears) continue;
        entry.config.driverReset = { statements: [clears], reason: `the pool's reset callback ${name} runs ${clears} on every return` };
        return;
      }
    }
  }

  /** Walks a driver's callback def (a signal handler) with the connection it is given. */
  walkCallback(def: Node, conn: Conn, connParam: number, name: string): void {
    this.walkedAtCall.add(def.from);
    const walk = new Walk(this, { name, def, callbackConn: conn });
    walk.bindParameters(def, [], false, conn, undefined, connParam);
    walk.walkBlock(bodyStatements(def));
    walk.finish();
  }

  /** The def (or lambda) a callback or callee expression names: a function of the module, a method of the class, a def in the same function. */
  resolveDef(expr: Node, at: Node): Node | undefined {
    if (expr.name === 'LambdaExpression') return expr;
    // `x.m` finds a method only from self, cls or a class of the file: `cur.execute`, `log.info` find none.
    if (expr.name === 'MemberExpression') {
      let start: Node | null = expr;
      while (start?.name === 'MemberExpression') start = start.firstChild;
      const first = start?.name === 'VariableName' ? this.text.slice(start.from, start.to) : undefined;
      if (first !== undefined && first !== 'self' && first !== 'cls' && !this.classMethods.has(first)) return undefined;
    }
    const name = dottedName(expr, this.text);
    if (!name) return undefined;
    const [first, ...rest] = name.split('.');
    if (rest.length === 0) {
      // No def of the file has the name (`len(...)`, an import): none of the lookups below can find one.
      if (!this.index.defNames().has(first)) return undefined;
      // A def in an enclosing function shadows the module's.
      for (let p: Node | null = at.parent; p; p = p.parent) {
        if (p.name !== 'FunctionDefinition') continue;
        for (const def of this.index.nestedDefs(p).get(first) ?? []) if (def.from < at.from) return def;
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

  addCalledSite(meta: SiteMeta): void {
    (this.model.calledSites ??= []).push(meta.site);
    this.metas.push(meta);
  }
}

/** The position is inside an if, a loop or a match of its function: it runs on some paths only. */
function conditional(tree: { topNode: Node }, at: number): boolean {
  for (let node: Node | null = tree.topNode.resolveInner(at, 1); node; node = node.parent) {
    if (node.name === 'FunctionDefinition' || node.name === 'LambdaExpression') return false;
    if (/^(IfStatement|ForStatement|WhileStatement|MatchStatement|ConditionalExpression)$/.test(node.name)) return true;
  }
  return false;
}
