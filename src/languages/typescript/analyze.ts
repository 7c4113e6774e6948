// The walk over one TS/JS file: which names hold pools, connections and
// transaction handles, where SQL is sent on them, and in which transaction.
// Module code and every function are walked once, in source order, following
// each connection's transaction state along the paths of the function
// (branches, loops, try/catch/finally, return, throw).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ConnectionUse, Driver, FileModel, Scope, SqlSite } from '../../model/index.ts';
import type { PlaceholderStyle, RowWrite, StatementFacts } from '../../sql/index.ts';
import { RUNNING_STATUS, STATUS_COLUMN } from '../../model/queue.ts';
import type { FrontEndOptions } from '../types.ts';
import { finishConfigs, makeConfig, type ConfigEntry } from './connections.ts';
import { readImports, valueOfType, type Conn, type Imports, type TxInfo, type Value } from './drivers.ts';
import { allNone, State, txOf, type Atom, type Tx } from './flow.ts';
import { typescriptSideEffect } from './side-effects.ts';
import { analyzeHostText, pgPromiseHoles, PG_PROMISE_METHODS, PRISMA_TAG_METHODS, PRISMA_UNSAFE_METHODS, SLONIK_METHODS } from './sql-sites.ts';
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
  constructor(readonly parent?: Env) {}

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

interface ConstEntry {
  init: Node;
  scope: [number, number];
}

export function analyzeTypeScript(model: FileModel, program: TSESTree.Program, options: FrontEndOptions): void {
  const file = new TsFile(model, program, options);
  file.run();
}

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
  private connCount = 0;

  constructor(
    readonly model: FileModel,
    readonly program: TSESTree.Program,
    options: FrontEndOptions,
  ) {
    this.text = model.text;
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
    walk.prebind(this.program.body);
    walk.statements(this.program.body);
    this.finish();
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
    this.model.connections = this.configs.map((c) => c.config);
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
}

class Walk {
  private tries: TryFrame[] = [];
  private loops: State[][] = [];
  private silent = 0;

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
        if (d.id.type === 'Identifier' && d.init) this.env.vars.set(d.id.name, this.value(d.init));
      }
    }
  }

  lookup(name: string): Value | undefined {
    const local = this.env.lookup(name);
    if (local.found) return local.value;
    return this.file.imports.names.get(name);
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
        if (object.kind === 'prisma-namespace' && name === 'sql') return { kind: 'tag', driver: 'prisma' };
        if (object.kind === 'tag' && object.driver === 'slonik' && ['unsafe', 'type', 'typeAlias', 'fragment'].includes(name)) return object;
        if (object.kind === 'pool' && object.driver === 'typeorm' && name === 'manager') return object;
        return undefined;
      }
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
    if (n.type === 'CallExpression' && callee.type === 'MemberExpression') {
      const method = propertyName(callee);
      const on = this.value(callee.object);
      if (!on || method === undefined) return undefined;
      const configId = 'configId' in on ? on.configId : undefined;
      const hasCallback = callbackArg(n) !== undefined;
      if (on.kind === 'pool') {
        if (on.driver === 'pg' && method === 'connect' && n.arguments.length === 0) return this.conn(this.file.newConn('pg', 'pooled-client', 'checkout', configId));
        if (on.driver === 'postgres.js' && method === 'reserve') return this.conn(this.file.newConn('postgres.js', 'pooled-client', 'reserve', configId));
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
    if (maker.makes === 'adapter') return undefined;
    if (maker.makes === 'client') {
      const entry = this.config(n, maker.driver, 'client', n.arguments);
      return this.conn(this.file.newConn(maker.driver, 'dedicated', 'new-client', entry.config.id));
    }
    // A pool: drizzle(pool) and new Kysely({ dialect: new PostgresDialect({ pool }) }) run on the pool they wrap.
    const entry = this.config(n, maker.driver, 'pool', n.arguments);
    return { kind: 'pool', driver: maker.driver, configId: entry.config.id };
  }

  private config(node: Node, driver: Driver, kind: 'pool' | 'client', args: readonly TSESTree.CallExpressionArgument[]): ConfigEntry {
    let entry = this.file.configByNode.get(node);
    if (!entry) {
      entry = makeConfig(this.file.model.file, node, driver, kind, args);
      this.file.configByNode.set(node, entry);
      this.file.configs.push(entry);
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
    if (type?.type !== 'TSTypeReference') return undefined;
    const typeName = type.typeName;
    const name = typeName.type === 'Identifier' ? typeName.name : typeName.type === 'TSQualifiedName' ? typeName.right.name : undefined;
    const qualifier = typeName.type === 'TSQualifiedName' && typeName.left.type === 'Identifier' ? typeName.left.name : undefined;
    if (!name) return undefined;
    const known = valueOfType(name, qualifier, this.file.imports);
    if (!known) return undefined;
    switch (known.what) {
      case 'pool':
        return { kind: 'pool', driver: known.driver };
      case 'tx': {
        const tx = this.file.txAt(`param@${param.range[0]}`, 'callback', `${name} parameter`, span(param));
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
    // Function declarations are hoisted: bind their names first (they hold no driver value).
    for (const s of body) if (s.type === 'FunctionDeclaration' && s.id && !this.env.vars.has(s.id.name)) this.env.vars.set(s.id.name, undefined);
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
          if (d.init) this.expression(d.init);
          const value = d.init ? this.value(d.init) : undefined;
          const fromType = !value && d.id.type === 'Identifier' ? this.parameterValue(d.id) : undefined;
          this.bindPattern(d.id, value ?? fromType);
        }
        return;
      case 'ReturnStatement':
        if (node.argument) this.expression(node.argument);
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
      // Every way into the finally block, for what it does (release, rollback) on each of them.
      this.state = State.merge([afterBlock, afterHandler, ...pending.map((s) => s.asError()), ...returns]);
      this.statement(node.finalizer);
      // What comes after the try statement is reached only by the normal paths: walk the finally once more, silently, from them.
      this.state = normal;
      this.silent++;
      this.statement(node.finalizer);
      this.silent--;
    } else {
      this.state = State.merge([afterBlock, afterHandler]);
    }
    // Exceptions not caught here go on to the enclosing try.
    const outer = this.tries[this.tries.length - 1];
    if (outer) outer.throws.push(...pending);
  }

  // ---- functions and classes -------------------------------------------------------

  /** Walks a function declared here. Connections it captures are in an unknown state unless it runs now (a callback argument). */
  nestedFunction(fn: FunctionNode, name: string | undefined, runsNow: boolean, bind?: (walk: Walk) => void, extra: Partial<WalkOptions> = {}): Walk {
    const state = runsNow ? this.state.clone() : this.state.clone();
    if (!runsNow) for (const conn of state.conns.keys()) state.set(conn, { kind: 'unknown' });
    const walk = new Walk(this.file, new Env(this.env), state, {
      name: name ?? this.options.name,
      thisEnv: fn.type === 'ArrowFunctionExpression' ? this.options.thisEnv : extra.thisEnv ?? this.options.thisEnv,
      callbackTxs: extra.callbackTxs ?? (runsNow ? this.options.callbackTxs : []),
      outerTries: extra.outerTries ?? (runsNow ? [...(this.options.outerTries ?? []), ...this.blockTries()] : []),
      arrayTx: extra.arrayTx,
    });
    walk.silent = this.silent;
    for (const param of fn.params) {
      const value = walk.parameterValue(param);
      walk.bindPattern(param.type === 'TSParameterProperty' ? param.parameter : param, value);
    }
    bind?.(walk);
    if (fn.body) {
      if (fn.body.type === 'BlockStatement') walk.statements(fn.body.body);
      else walk.expression(fn.body as Node);
    }
    return walk;
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
        for (const arg of node.arguments) this.argument(arg);
        this.expression(node.callee);
        this.value(node);
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
        if (inner?.type === 'TaggedTemplateExpression') this.file.awaited.add(inner);
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
    if (this.transactionCallback(call)) return;
    const query = this.queryOf(call);
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
    if (this.silent || !this.state.reachable) return;
    for (const tx of this.currentTxs()) {
      if (!tx.claim) continue;
      tx.work = true;
      for (const t of [...(this.options.outerTries ?? []), ...this.blockTries()]) tx.tries.add(t);
    }
  }

  private sideEffect(call: Call): void {
    if (this.silent) return;
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
      if (method.name === 'begin' && (!on || driverOfValue(on) === 'postgres.js')) {
        form = 'sql.begin';
        driver = 'postgres.js';
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
    } else if (method.name === '$transaction' && call.arguments.length > 0 && unwrap(call.arguments[0])?.type === 'ArrayExpression' && on) {
      // prisma.$transaction([prisma.$executeRaw`...`, ...]): every call in the array runs in one transaction.
      const tx = this.file.txAt(`call@${call.range[0]}`, 'callback', `${receiverName}.$transaction([...])`, span(call.callee));
      this.expression(call.callee);
      const inner = new Walk(this.file, this.env, this.state, { ...this.options, arrayTx: { on, tx } });
      inner.tries = this.tries;
      inner.loops = this.loops;
      inner.silent = this.silent;
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
    if (this.silent || !this.state.reachable) return;
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
        return this.textArg(arg0, on, driver, 'dollar', call);
      case 'unsafe':
        if (onDriver === 'postgres.js' || (!on && imports.includes('postgres.js'))) return this.textArg(arg0, on, 'postgres.js', 'dollar', call);
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
      const text = objectProperty(object, 'text');
      const name = objectProperty(object, 'name');
      const preparedName = name ? stringValue(name.value as Node) : undefined;
      if (text) {
        return { text: unwrap(text.value as Node)!, on, driver, placeholders, at: call, preparedName, pinnedTo: pinned ? span(arg) : undefined };
      }
    }
    return { text: arg, on, driver, placeholders, at: call };
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
    if (value && (value.kind === 'pool' || value.kind === 'conn' || value.kind === 'tx') && driverOfValue(value) === 'postgres.js') {
      this.site({ text: node.quasi, tagged: true, on: value, driver: 'postgres.js', placeholders: 'dollar', at: node });
      return;
    }
    if (value) return;
    // A tag we cannot resolve that is awaited runs the query (postgres.js style); others may be fragments.
    if (tag.type === 'Identifier' && (this.file.awaited.has(node) || this.file.imports.drivers.includes('postgres.js')) && !this.file.imports.names.has(tag.name)) {
      this.site({ text: node.quasi, tagged: true, on: undefined, driver: this.file.imports.drivers.includes('postgres.js') ? 'postgres.js' : 'unknown', placeholders: 'dollar', at: node });
    }
  }

  private site(query: QueryCall): void {
    if (this.silent) {
      this.siteEffects(query, undefined);
      return;
    }
    let host: HostText | undefined;
    if (query.tagged && query.text.type === 'TemplateLiteral') host = templateText(query.text, this.file.text);
    else host = resolveText(query.text, this.file.resolveContext);
    if (!host) return;
    if (query.pinnedTo) host = { ...host, pinned: query.pinnedTo };
    const extraHoles = query.driver === 'pg-promise' ? pgPromiseHoles(host.text) : [];
    const analysis = analyzeHostText(host, query.placeholders, extraHoles);
    // SQL we cannot parse is unknown here, not an error: ESLint has no place for it and the text may not be SQL at all.
    analysis.errors = [];
    if (analysis.statements.length === 0) return;
    const { scope, connection, tx } = this.placement(query.on, query.driver, query.at);
    const site: SqlSite = {
      span: host.pinned ?? host.span,
      analysis,
      scope,
      connection,
      driver: query.driver,
    };
    if (this.options.name) site.functionName = this.options.name;
    if (query.preparedName) site.preparedName = query.preparedName;
    this.file.model.sites.push(site);
    const meta: SiteMeta = { site, tx, inTry: [...(this.options.outerTries ?? []), ...this.blockTries()], inHandler: this.handlerTries() };
    if (query.on?.kind === 'conn') meta.mayBeIn = this.state.atoms(query.on.conn).flatMap((a) => (a.kind === 'open' ? [a.tx] : []));
    this.file.metas.push(meta);
    this.siteEffects(query, site);
  }

  /** BEGIN/COMMIT/ROLLBACK in the site's SQL move its connection's state; a claim marks its transaction. */
  private siteEffects(query: QueryCall, site: SqlSite | undefined): void {
    const on = query.on;
    if (!site) {
      // Silent re-walk: only the state moves.
      if (on?.kind !== 'conn') return;
      const host = query.tagged && query.text.type === 'TemplateLiteral' ? templateText(query.text, this.file.text) : resolveText(query.text, this.file.resolveContext);
      if (!host) return;
      const control = /^\s*(begin|start\s+transaction|commit|end|rollback|abort)\b/i.exec(host.text)?.[1]?.toLowerCase();
      if (!control) return;
      if (control === 'begin' || control.startsWith('start')) this.begin(on.conn, query.at, 'BEGIN');
      else this.state.set(on.conn, { kind: 'none' });
      return;
    }
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
  private placement(on: Value | undefined, driver: Driver, at: Node): { scope: Scope; connection: ConnectionUse; tx?: Tx } {
    if (this.options.arrayTx && on === this.options.arrayTx.on) {
      const tx = this.options.arrayTx.tx;
      const configId = 'configId' in on ? on.configId : undefined;
      return { scope: txScope(tx), connection: { kind: 'pooled-client', configId }, tx };
    }
    if (!on) {
      const connection = this.guessConnection(at);
      return { scope: connection.kind === 'pool' ? { kind: 'autocommit' } : { kind: 'unknown' }, connection };
    }
    switch (on.kind) {
      case 'pool':
        return { scope: { kind: 'autocommit' }, connection: { kind: 'pool', configId: on.configId } };
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

  /** A receiver we cannot resolve, by its name: `pool.query(...)` / `this.pool.query(...)` is a pool's. */
  private guessConnection(at: Node): ConnectionUse {
    const callee = at.type === 'CallExpression' ? unwrap(at.callee) : at.type === 'TaggedTemplateExpression' ? unwrap(at.tag) : undefined;
    const object = callee?.type === 'MemberExpression' ? callee.object : undefined;
    const name = object ? dottedName(object) : undefined;
    const last = name?.split('.').pop();
    if (last && /^(pool|[a-z]\w*Pool)$/.test(last)) return { kind: 'pool' };
    return { kind: 'unknown' };
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
