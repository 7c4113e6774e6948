// One TS/JS file as the flow engine reads it: its imports, the configs of
// the pools it makes, the transactions and sites the walk finds, and what it
// exports to the project's other modules (each read by a TsFile of its own).
// Module code and every function are walked once, in source order
// (flow/walk.ts); the driver modules (drivers/) say what the driver calls mean.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { isAbsolute } from 'node:path';
import { emptyFileModel, type ConnectionConfig, type Driver, type FileModel } from '../../../model/index.ts';
import type { FrontEndOptions } from '../../types.ts';
import type { DriverRegistry } from '../drivers/index.ts';
import { memberInit, resolveText, unfrozen, type HostText, type ResolveContext } from '../strings.ts';
import { isFunction, span, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import { noteHookSkips } from './hook-paths.ts';
import { finishConfigs } from './configs.ts';
import { markedSqlSites } from './marked-sql.ts';
import { returnedSqlSites } from './returned-sql.ts';
import { Env } from './env.ts';
import { moduleLevelExport, readExport, readExportedType, type ExportingModule } from './exports.ts';
import { importsOf, valueOfType } from './imports.ts';
import { runnerParameters } from './runner-exports.ts';
import { oneDriversHandle, utilityType } from './utility-types.ts';
import { collectJobTransactions, type SiteMeta } from './jobs.ts';
import { freeDepth, MAX_MODULES_PER_FILE, ModuleCache, moduleParses, resolveFrom, type DepthFree, type Resolutions } from './modules.ts';
import { FunctionIndex } from './pool-facts.ts';
import { State } from './state.ts';
import { constantsOf, literalsOnly, type ConstEntry } from './constants.ts';
import { declaredExport, exportedDeclarations, importedWithoutWalk, returnsNoValue } from './declared.ts';
import { isolatedWork, WorkLimitExceeded } from '../../../work.ts';
import { type ConfigEntry, type Conn, type FunctionOwner, type Imports, type PoolHook, type TableValue, type Tx, type TxInfo, type TypeMeaning, type Value } from './types.ts';

/** What TsFile needs of a walk: flow/walk.ts's Walk, made by the context's `walker`. */
export interface Walker {
  prebind(body: readonly Node[]): void;
  statements(body: readonly Node[]): void;
  value(node: Node | null | undefined): Value | undefined;
  nestedFunction(fn: FunctionNode, name: string | undefined, runsNow: boolean): void;
}

/** How many pools of one file get their reuse read (see reuseOf). */
export const MAX_REUSE_READS = 32;

/** What the analysis of one file may do beyond the file: read the project modules it imports. */
export interface AnalysisContext {
  /** How many more levels of project imports may be followed from this file. */
  importDepth: number;
  /** Parses an imported module (the front end's parser); undefined where it does not parse. */
  parse?: (text: string, file: string) => TSESTree.Program | undefined;
  /** The driver modules. */
  drivers: DriverRegistry;
  /** Starts a walk of the file (module code, or a function declared in it) in `env`. */
  walker(file: TsFile, env: Env, state: State, name: string | undefined): Walker;
  /** An imported module, read once per process for every file that imports it (its walks count apart: work.ts). */
  shared?: boolean;
}

/**
 * The project modules files import, once per process per file version: parsed once, whatever the
 * depth they are read at, and read at each depth by a TsFile of its own (how deep its own imports
 * are followed differs), which walks the module only when asked for what it holds. From its
 * freeDepth on, a module reads the same at every depth: one reading serves them all, and the
 * file's own reading when the scan reaches it (readingAsImport, keepReading).
 */
interface ImportedModule extends DepthFree {
  text: string;
  byDepth: Map<number, TsFile>;
}
const moduleCache = new ModuleCache<ImportedModule>();

/**
 * The program of a file parsed already as another file's import, when it has this very text: the
 * scan reaches a module after the files that import it as often as before, and parses it once.
 */
export function parsedAsImport(path: string, text: string): TSESTree.Program | undefined {
  const imported = moduleCache.peek(path);
  if (imported?.text !== text) return undefined;
  moduleParses.reused++;
  return imported.program;
}

/**
 * The reading of an imported module at `depth`: the one made at that depth, or, when the module
 * reads the same at every depth from its freeDepth on and `depth` is one of them, one made at any
 * of those depths (the scan reads a module at each depth its importers reach it from).
 */
function readingAt(path: string, imported: ImportedModule, depth: number): TsFile | undefined {
  const exact = imported.byDepth.get(depth);
  if (exact) return exact;
  const free = imported.byDepth.size > 0 ? freeDepth(moduleCache, path, imported) : undefined;
  if (free === undefined || depth < free) return undefined;
  for (const [at, file] of imported.byDepth) {
    if (at < free) continue;
    moduleParses.shared++;
    return file;
  }
  return undefined;
}

/**
 * A scanned file read already as a project module of another file, at a depth from which it reads
 * as it does at the top (freeDepth), on the same program, drivers and options: that reading, run
 * now if it was not yet. Undefined when there is none, or its walk failed (the file's own walk then
 * fails the same way, and says so).
 */
export function readingAsImport(path: string, program: TSESTree.Program, options: FrontEndOptions, context: AnalysisContext): TsFile | undefined {
  const imported = moduleCache.peek(path);
  if (!imported || imported.program !== program) return undefined;
  const free = freeDepth(moduleCache, path, imported);
  if (free === undefined || free > context.importDepth) return undefined;
  for (const [at, file] of imported.byDepth) {
    if (at < free || !file.sameReading(options, context)) continue;
    if (!file.ensureRun()) return undefined;
    moduleParses.shared++;
    return file;
  }
  return undefined;
}

/**
 * How many of the scan's latest files keep their own reading for files after them that import them.
 * A layered package is scanned folder by folder (repositories before the services that import
 * them), so its importers come soon after; a file imported later than that is parsed and walked
 * again, as every file was before. Kept longer, the trees cost the collector more than the parses
 * they save (all of a monorepo's: +0.35 G instructions).
 */
const SCANNED_KEPT = 48;
/** The readings entered by keepReading, oldest first. */
const keptScanned: { path: string; module: ImportedModule }[] = [];

/**
 * A file's own reading, kept as its reading at `context.importDepth`: where the file was parsed as an
 * import, for as long as that parse is; else for the next SCANNED_KEPT files of the scan. A later
 * file that imports it reads it there (readingAt: at every depth from its freeDepth on, the
 * reading is the same) instead of parsing and walking it again.
 */
export function keepReading(path: string, program: TSESTree.Program, file: TsFile): void {
  const imported = moduleCache.peek(path);
  if (imported) {
    if (imported.program === program && !imported.byDepth.has(file.context.importDepth)) imported.byDepth.set(file.context.importDepth, file);
    return;
  }
  // A module its importers read from its syntax alone costs them only its parse: not worth what keeping it costs.
  if (importedWithoutWalk(program)) return;
  const module: ImportedModule = { text: file.text, program, byDepth: new Map([[file.context.importDepth, file]]), resolved: file.resolved };
  if (!moduleCache.offer(path, module)) return;
  keptScanned.push({ path, module });
  if (keptScanned.length > SCANNED_KEPT) {
    const oldest = keptScanned.shift()!;
    moduleCache.withdraw(oldest.path, oldest.module);
  }
}

export class TsFile implements ExportingModule, FunctionOwner {
  readonly text: string;
  readonly imports: Imports;
  readonly configs: ConfigEntry[] = [];
  readonly configByNode = new Map<Node, ConfigEntry>();
  readonly made = new Map<Node, Value | undefined>();
  readonly metas: SiteMeta[] = [];
  /** The transactions still open where a catch clause ends and the code goes on (no throw, no ROLLBACK): by its try statement. */
  readonly handlerGoesOn = new Map<TSESTree.TryStatement, Set<Tx>>();
  readonly txs: Tx[] = [];
  readonly txByKey = new Map<string, Tx>();
  readonly consumed = new WeakSet<Node>();
  readonly awaited = new WeakSet<Node>();
  readonly readHelpers = new WeakSet<Node>();
  readonly resolveContext: ResolveContext;
  /** For values bound to SQL: the file's constants, then the literal constants the project's modules export to it. */
  readonly valueContext: ResolveContext;
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
  readonly drivers: DriverRegistry;
  /** Where each specifier of this file leads: asked once per version of an imported module (all its readings share it), once per reading of a scanned file. */
  resolved: Resolutions = new Map();
  private readonly importValues = new Map<string, Value | undefined>();
  private readonly exportValues = new Map<string, Value | undefined>();
  private constantIndex?: ReadonlyMap<string, ConstEntry[]>;
  private moduleEnv?: Env;
  private walkOfModule?: Walker;
  /** An imported module is walked when first asked what a name or expression holds (ensureRun). */
  private runState: 'waiting' | 'running' | 'done' | 'failed' = 'waiting';
  private connCount = 0;

  constructor(
    readonly model: FileModel,
    readonly program: TSESTree.Program,
    readonly options: FrontEndOptions,
    readonly context: AnalysisContext,
  ) {
    this.text = model.text;
    this.drivers = context.drivers;
    this.functions = new FunctionIndex(program);
    this.imports = importsOf(program, this.drivers);
    this.queryFunctions = options.queryFunctions ?? [];
    this.fileDriver = this.imports.drivers.length === 1 ? this.imports.drivers[0] : 'unknown';
    this.resolveContext = {
      source: this.text,
      constant: (name, at) => {
        const best = this.constantEntry(name, at);
        return best?.element === undefined ? best?.init : undefined;
      },
      imported: (name, _at, members) => this.importedText(name, members),
      readHelper: (fn) => this.readHelpers.add(fn),
    };
    this.valueContext = { ...this.resolveContext, constant: (name, at) => this.resolveContext.constant(name, at) ?? this.importedConstant(name) };
  }

  /** The file's consts, indexed when first asked for (a module read for the values of its functions may need none). */
  get constants(): ReadonlyMap<string, ConstEntry[]> {
    return (this.constantIndex ??= constantsOf(this.program));
  }

  /** The innermost const that binds `name` where `at` is. */
  private constantEntry(name: string, at: Node): ConstEntry | undefined {
    let best: ConstEntry | undefined;
    for (const entry of this.constants.get(name) ?? []) {
      if (entry.scope[0] <= at.range[0] && at.range[1] <= entry.scope[1] && (!best || entry.scope[0] >= best.scope[0])) best = entry;
    }
    return best;
  }

  /** `const [first] = init`: the initializer a name is an element of, and its index. */
  elementOf(name: string, at: Node): { init: Node; index: number } | undefined {
    const best = this.constantEntry(name, at);
    return best?.element === undefined ? undefined : { init: unwrap(best.init)!, index: best.element };
  }

  run(): void {
    this.runState = 'running';
    // The scope `exported` began for a module of declarations only, with the bindings it made.
    const moduleEnv = this.moduleEnv ?? new Env();
    const walk = this.context.walker(this, moduleEnv, new State(), undefined);
    this.moduleEnv = moduleEnv;
    this.walkOfModule = walk;
    walk.prebind(this.program.body);
    walk.statements(this.program.body);
    this.finish();
    this.runState = 'done';
  }

  /** Whether this reading is the one `options` and `context` would make (but for the import depth). */
  sameReading(options: FrontEndOptions, context: AnalysisContext): boolean {
    const mine = this.context;
    const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) => a === b || (a?.length ?? 0) + (b?.length ?? 0) === 0 || (a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]));
    return mine.drivers === context.drivers && mine.parse === context.parse && mine.walker === context.walker && same(this.options.queryFunctions, options.queryFunctions) && this.runState !== 'running';
  }

  /** An imported module's walk, run the first time what it holds is asked (its constants and types need none). */
  ensureRun(): boolean {
    if (this.runState === 'waiting') {
      try {
        // Its steps are its own (work.ts): the module is walked once per process, for whichever file asks first.
        moduleParses.walks++;
        isolatedWork(() => this.run());
      } catch {
        // A module whose walk fails holds nothing known, as one that does not parse.
        this.runState = 'failed';
      }
    }
    return this.runState !== 'failed';
  }

  /** The walk of the module's own code (after it ran). */
  get moduleWalk(): Walker | undefined {
    return this.ensureRun() ? this.walkOfModule : undefined;
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

  /**
   * A constant another module of the project exports and this file imports
   * (`export const STATES = { running: 'running' } as const`), when it holds
   * literals only: it may stand for a value bound to SQL, never for SQL text,
   * whose offsets must be this file's.
   */
  importedConstant(name: string): Node | undefined {
    const entry = this.imports.project.get(name);
    if (!entry || entry.typeOnly || entry.imported === '*' || entry.imported === 'default') return undefined;
    const init = this.module(entry.specifier)?.exportedConstant(entry.imported);
    return init && literalsOnly(init) ? init : undefined;
  }

  /** The initializer of the module-level const this module exports as `name`, through `export { a as name }` and re-exports. */
  exportedConstant(name: string): Node | undefined {
    return this.exportedConstantIn(name)?.init;
  }

  /**
   * SQL text another module of the project exports and this file imports (`export const CLAIM = \`...\``),
   * read in that module, through re-exports: its offsets are that module's (the caller pins them to the name).
   */
  importedText(name: string, members: readonly string[] = []): HostText | undefined {
    const entry = this.imports.project.get(name);
    if (!entry || entry.typeOnly) return undefined;
    // `import * as q` / `const q = require()`, then `q.SET_TENANT`: the module's export of the first member.
    const whole = entry.imported === '*' || entry.imported === 'module.exports';
    if (whole && members.length === 0) return undefined;
    const module = this.module(entry.specifier);
    const found = module?.exportedConstantIn(whole ? members[0] : entry.imported);
    if (!found) return undefined;
    // `Q.claim` of `export const Q = { claim: '...' } as const` (or of the default export): the property's value there.
    let init: Node | undefined = found.init;
    for (const key of whole ? members.slice(1) : members) {
      let base = unfrozen(init);
      if (base?.type === 'Identifier') base = unfrozen(found.module.resolveContext.constant(base.name, base));
      init = memberInit(base, key);
      if (!init) return undefined;
    }
    return resolveText(init, found.module.resolveContext);
  }

  /** The exported const's initializer and the module that declares it (re-exports followed, `export *` too). */
  private exportedConstantIn(name: string): { init: Node; module: TsFile } | undefined {
    const stars: string[] = [];
    for (const statement of this.program.body) {
      if (statement.type === 'ExportAllDeclaration' && !statement.exported && statement.exportKind !== 'type') stars.push(String(statement.source.value));
      if (statement.type !== 'ExportNamedDeclaration') continue;
      const d = statement.declaration;
      if (d?.type === 'TSEnumDeclaration' && d.id.name === name) return { init: d, module: this };
      if (d?.type === 'ClassDeclaration' && d.id?.name === name) return { init: d, module: this };
      if (d?.type === 'VariableDeclaration' && d.kind === 'const') {
        for (const declarator of d.declarations) {
          if (declarator.id.type === 'Identifier' && declarator.id.name === name) return declarator.init ? { init: declarator.init, module: this } : undefined;
        }
      }
      for (const s of statement.specifiers) {
        if (s.type !== 'ExportSpecifier' || exportedName(s.exported) !== name) continue;
        const local = exportedName(s.local);
        if (statement.source) return this.module(String(statement.source.value))?.exportedConstantIn(local);
        const init = this.constants.get(local)?.find((c) => c.element === undefined && c.scope[0] === this.program.range[0] && c.scope[1] === this.program.range[1])?.init;
        return init ? { init, module: this } : undefined;
      }
    }
    // `export * from './queries'`: the first module that has it.
    for (const specifier of stars) {
      const found = this.module(specifier)?.exportedConstantIn(name);
      if (found) return found;
    }
    const init = moduleLevelExport(this.program, name);
    return init ? { init, module: this } : undefined;
  }

  /** The analysed module a specifier of this file names, if it is one of the project's and may be read. */
  module(specifier: string): TsFile | undefined {
    if (this.context.importDepth <= 0 || !this.context.parse || !isAbsolute(this.model.file)) return undefined;
    const path = resolveFrom(this.model.file, specifier, this.resolved);
    if (!path || path === this.model.file) return undefined;
    if (this.modules.has(path)) return this.modules.get(path);
    if (this.modules.size >= MAX_MODULES_PER_FILE) return undefined;
    const depth = this.context.importDepth - 1;
    const parse = this.context.parse;
    const imported = moduleCache.get(path, (text: string) => {
      const program = parse(text, path);
      return program ? { text, program, byDepth: new Map(), resolved: new Map() } : undefined;
    });
    let module = imported ? readingAt(path, imported, depth) : undefined;
    if (imported && !module) {
      module = new TsFile(emptyFileModel(path, 'typescript', imported.text), imported.program, this.options, { ...this.context, importDepth: depth, shared: true });
      module.resolved = imported.resolved;
      imported.byDepth.set(depth, module);
    }
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
    // A module of function declarations only exports each as itself, known without its walk (declared.ts).
    const declared = exportedDeclarations(this.program)?.get(name);
    if (declared) {
      const env = (this.moduleEnv ??= new Env());
      let value = env.vars.get(name);
      // The binding the walk starts from (walk.ts `statements` hoists a declaration not bound yet), made first here.
      if (!value) env.vars.set(name, (value = { kind: 'function', node: declared, owner: this, env }));
      this.exportValues.set(name, value);
      return value;
    }
    if (!this.ensureRun()) return undefined;
    this.exportValues.set(name, undefined); // a cycle of re-exports reads as unknown
    const value = readExport(this, name);
    this.exportValues.set(name, value);
    return value;
  }

  /** A module-level name's value after the walk (the module's own binding or import). */
  moduleBinding(name: string): Value | undefined {
    if (!this.ensureRun()) return undefined;
    const local = this.moduleEnv?.lookup(name);
    if (local?.found) return local.value;
    return this.imports.names.get(name) ?? this.importedValue(name);
  }

  /** The module's scope (its names, as far as the walk has bound them). */
  get moduleScope(): Env | undefined {
    return this.moduleEnv;
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
      case 'adapter':
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

  /** A pool made by a call of a project function: its facts as the function makes it, its reuse as this call keeps it. */
  adoptMade(entry: ConfigEntry, from: TsFile, at: { start: number; end: number }, id: string, reuse: ConnectionConfig['reuse']): void {
    const remap = <T extends { span: { start: number; end: number } }>(x: T): T => ({ ...x, span: { ...at } });
    const { reuse: _made, ...facts } = entry.config;
    const config: ConnectionConfig = {
      ...facts,
      id,
      span: { ...at },
      ...(from !== this ? { definedIn: entry.config.definedIn ?? from.model.file } : {}),
      ...(reuse ? { reuse } : {}),
      callbacks: entry.config.callbacks.map((c) => ({ ...remap(c), leavesTransactionAt: c.leavesTransactionAt ? { ...at } : undefined })),
    };
    this.configs.push({ config, namedQueries: [], transactions: [], imported: from !== this, prepareOff: entry.prepareOff, oneConnection: entry.oneConnection });
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
    if (this.runState !== 'running' && declaredExport(this.program, fn)) {
      // What the walk of a module of declarations only records for it (declared.ts), without the walk where that is nothing.
      if (returnsNoValue(fn) || !this.ensureRun()) return undefined;
    }
    if (!this.walked.has(fn) && env instanceof Env) {
      const name = fn.type === 'FunctionDeclaration' ? fn.id?.name : undefined;
      const walk = () => this.context.walker(this, env, new State(), name).nestedFunction(fn, name, false);
      if (!this.context.shared) walk();
      else {
        // An imported module's function is walked once per process: on a count of its own, and one
        // over the bound returns what it found so far, to every file that asks.
        try {
          isolatedWork(walk);
        } catch (error) {
          if (!(error instanceof WorkLimitExceeded)) throw error;
        }
      }
    }
    const values = this.returns.get(fn) ?? [];
    return values.find((v) => v !== undefined && v.kind !== 'tx');
  }

  private runnerParams: Map<Node, Value> | undefined;

  /** What a driver's runner gives this untyped parameter of an exported function (Knex's `exports.up = async (knex) => ...`). */
  runnerParameter(param: Node): Value | undefined {
    return (this.runnerParams ??= runnerParameters(this.program, this.drivers)).get(param);
  }

  /**
   * What a type annotation says a name holds: a driver's type (`pg.PoolClient`,
   * `Knex.Transaction`, `NodePgDatabase<...>`), one of a union with
   * null/undefined, a union of one driver's handles, `typeof db`, or a type alias of this file or exported by a
   * project module (`export type Db = typeof db`).
   */
  typeMeaning(type: TSESTree.TypeNode, walk: { value(node: Node): Value | undefined }, depth = 0): TypeMeaning | Value | undefined {
    if (depth > 4) return undefined;
    switch (type.type) {
      case 'TSUnionType': {
        const meanings = type.types.filter((t) => t.type !== 'TSUndefinedKeyword' && t.type !== 'TSNullKeyword').map((t) => this.typeMeaning(t, walk, depth + 1));
        return meanings.length === 1 ? meanings[0] : oneDriversHandle(meanings);
      }
      case 'TSTypeQuery':
        return type.exprName.type === 'Identifier' ? walk.value(type.exprName) : undefined;
      case 'TSTypeReference': {
        const typeName = type.typeName;
        const name = typeName.type === 'Identifier' ? typeName.name : typeName.type === 'TSQualifiedName' ? typeName.right.name : undefined;
        const qualifier = typeName.type === 'TSQualifiedName' && typeName.left.type === 'Identifier' ? typeName.left.name : undefined;
        if (!name) return undefined;
        const known = valueOfType(name, qualifier, this.imports, this.drivers);
        if (known) return known;
        const utility = qualifier || this.imports.types.has(name) || this.imports.project.has(name) ? undefined : utilityType(name, type, (t) => this.typeMeaning(t, walk, depth + 1), this.drivers);
        if (utility) return utility;
        if (qualifier) return undefined;
        for (const statement of this.program.body) {
          const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
          if (d?.type === 'TSTypeAliasDeclaration' && d.id.name === name) return this.typeMeaning(d.typeAnnotation, this.moduleWalk ?? walk, depth + 1);
          if (d?.type === 'ClassDeclaration' && d.id?.name === name) return this.classPool(d, this.moduleWalk ?? walk);
        }
        const imported = this.imports.project.get(name);
        const module = imported && imported.imported !== '*' ? this.module(imported.specifier) : undefined;
        const meaning = module
          ? readExportedType(module, imported!.imported, (file, t) => file.typeMeaning(t, file.moduleWalk ?? walk, depth + 1), (file, cls) => file.classPool(cls, file.moduleWalk ?? walk))
          : undefined;
        return meaning && 'kind' in meaning ? this.adopt(meaning, module!, imported!.at) : meaning;
      }
      default:
        return undefined;
    }
  }

  /**
   * A class of this module as a type: one that extends a driver's pool maker
   * (`class DbService extends PrismaClient`, the NestJS service) types a pool
   * of that driver — the one its instances are, with the options of its
   * super(...) call once the class was walked.
   */
  classPool(cls: TSESTree.ClassDeclaration | TSESTree.ClassExpression, walk: { value(node: Node): Value | undefined }): Value | undefined {
    const base = cls.superClass ? walk.value(cls.superClass) : undefined;
    if (base?.kind !== 'maker' || base.makes !== 'pool') return undefined;
    return { kind: 'pool', driver: base.driver, configId: this.configByNode.get(cls)?.config.id };
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
    // What only the whole file shows (node-postgres: named queries on a pool made elsewhere).
    const facts = { file: this.model.file, sites: this.model.sites, configs: this.configs, configById: (id: string | undefined) => this.configById(id) };
    for (const driver of this.drivers.models) driver.finish?.(facts);
    for (const entry of this.configs) entry.namedQueries.sort((a, b) => a.span.start - b.span.start);
    finishConfigs(this.configs, this.text, this.drivers);
    // Sites of a hook function walked before the pool was made (declared above it).
    for (const [fn, hook] of this.hooks) {
      for (const site of this.model.sites) if (!site.callback && fn.range[0] <= site.span.start && site.span.end <= fn.range[1]) site.callback = { configId: hook.configId, role: hook.role };
      // A checkout hook that can skip its write leaves the previous job's setting for the job it readies.
      if (hook.role === 'checkout') noteHookSkips(fn, this.model.sites, this.text);
    }
    returnedSqlSites(this);
    markedSqlSites(this);
    // In source order (module-level pools are made before the walk reaches them).
    for (const entry of this.configs) entry.config.callbacks.sort((a, b) => a.span.start - b.span.start);
    this.model.connections = this.configs.map((c) => c.config).sort((a, b) => a.span.start - b.span.start);
    this.model.sites.sort((a, b) => a.span.start - b.span.start);
    this.model.releases.sort((a, b) => a.span.start - b.span.start);
    collectJobTransactions(this.model, this.txs, this.metas, this.handlerGoesOn);
  }
}

const exportedName = (n: TSESTree.Identifier | TSESTree.StringLiteral) => (n.type === 'Identifier' ? n.name : String(n.value));
