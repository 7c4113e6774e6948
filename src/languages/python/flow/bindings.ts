// What names hold in a walk: pools, connections, cursors and session
// factories, from the file's static bindings, the parameters (by the call
// that passes them, the callback that receives them, or their annotation)
// and the calls the walk meets. What a call or method of a driver's object
// gives is the driver module's to say (drivers/index.ts).
import { keptAutocommit } from './kept-connections.ts';
import type { ConnectionUse, Driver, Span } from '../../../model/index.ts';
import { annotationOf, checkoutOf, DRIVERS, driverNamed, makerOf } from '../drivers/index.ts';
import type { BuiltStatement, ModelRef, OrmContext } from '../orm/writer.ts';
import { dottedName, methodCall, unwrap, type Arg, type Node } from '../syntax.ts';
import { annotationType, parameters } from './defs.ts';
import { returnedCall } from './project.ts';
import { tenantFactoryCall } from './tenant-pools.ts';
import type { EngineFile } from './engine-file.ts';
import { copyFlow, initialFlow } from './scopes.ts';
import type { Binding, ConfigEntry, Conn, ConnKind, EndKind, Flow, Origin, StaticBinding, WalkApi } from './types.ts';

export interface WalkInfo {
  name: string | undefined;
  className?: string;
  def?: Node;
  callbackConn?: Conn;
  parent?: BindingWalk;
  /** The call of the parent's code this walk stands for, when the parent walks the callee's body in its place (maybeInline). */
  inlinedAt?: Node;
}

/** How a connection of a driver that comes from elsewhere is taken: a parameter, unless the driver says (a Session). */
const handedIn = (driver: Driver): ConnKind => driverNamed(driver)?.handedIn ?? { origin: 'parameter' };

export abstract class BindingWalk implements WalkApi {
  readonly env = new Map<string, Binding>();
  readonly conns = new Set<Conn>();
  /** Connections this walk was handed (a parameter, an attribute): their caller commits them. */
  protected readonly handed = new Set<Conn>();
  readonly exits: Flow[] = [];
  dead = false;
  /** What turned statement preparing off in this (callback) walk, if something did. */
  preparedOff?: string;
  protected readonly params = new Set<string>();
  /** The argument a call of this walk's def passed for each parameter (by position or name), in the caller's text. */
  protected readonly paramArgs = new Map<string, Node>();
  /** The default values of the walked def's parameters. */
  protected readonly paramDefaults = new Map<string, Node>();
  /** Where this walk stands for a call (maybeInline): the argument expression each parameter is given there, in the caller's text. */
  protected readonly givenArgs = new Map<string, Node>();
  /** The connections of the `with` blocks open here, outermost first. */
  readonly contexts: Conn[] = [];
  protected readonly tries: number[];
  protected handler: number | undefined;
  protected readonly stack: number[];
  private readonly callBindings = new Map<string, Binding | null>();

  abstract sqlSite(sqlNode: Node | undefined, conn: Conn | undefined, args?: Arg[], method?: string): { transaction?: string }[] | undefined;
  abstract builtSite(built: BuiltStatement, conn: Conn | undefined): { transaction?: string }[];
  abstract afterStatements(conn: Conn, statements: { transaction?: string }[] | undefined, at: Span): void;
  abstract flushInstances(conn: Conn): void;
  abstract instanceOf(node: Node): ModelRef | undefined;
  abstract ormContext(): OrmContext;

  constructor(
    readonly file: EngineFile,
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
    for (const p of params) {
      this.params.add(p.name);
      if (p.default) this.paramDefaults.set(p.name, p.default);
    }
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
      if (!args.some((a) => a.star)) {
        positionalArgs.forEach((a, i) => positionalParams[i] && this.paramArgs.set(positionalParams[i].name, a.value));
        for (const a of args) if (a.name && params.some((p) => p.name === a.name)) this.paramArgs.set(a.name, a.value);
      }
      positionalArgs.forEach((a, i) => {
        const param = positionalParams[i];
        if (param && positionalArgs.length === args.length) this.givenArgs.set(param.name, a.value);
        const binding = param ? callerBindings(a.value) : undefined;
        if (param && binding) this.env.set(param.name, binding);
      });
      for (const a of args) {
        if (!a.name) continue;
        if (params.some((p) => p.name === a.name)) this.givenArgs.set(a.name, a.value);
        const binding = callerBindings(a.value);
        if (binding && params.some((p) => p.name === a.name)) this.env.set(a.name, binding);
      }
      for (const binding of this.env.values()) if (binding.kind === 'conn' || binding.kind === 'cursor') this.conns.add(binding.conn);
    }
    // Annotated pools and connections: `pool: ConnectionPool` (its configuration is elsewhere), `session: Session`, `conn: asyncpg.Connection`.
    for (const p of params) {
      if (this.env.has(p.name) || !p.annotation) continue;
      const qualified = this.file.qualify(annotationType(p.annotation));
      const maker = makerOf(qualified);
      if (maker?.kind === 'pool') {
        this.env.set(p.name, { kind: 'pool', driver: maker.driver });
        continue;
      }
      const annotated = annotationOf(qualified);
      if (annotated?.kind === 'pool') {
        const entry = this.file.assumedPool(annotated.driver.name, p.annotation) ?? this.file.handedInPool(annotated.driver.name, p.annotation);
        this.env.set(p.name, entry ? { kind: 'pool', driver: annotated.driver.name, entry } : { kind: 'pool', driver: annotated.driver.name });
      } else if (annotated?.kind === 'conn') {
        const conn = this.handedInConn(annotated.driver.name, p.annotation);
        this.env.set(p.name, { kind: 'conn', conn });
      }
    }
  }

  finish(): void {
    if (!this.dead && this.info.callbackConn) this.exits.push(copyFlow(this.info.callbackConn.flow));
  }

  lookup(name: string): Binding | undefined {
    const own = this.env.get(name);
    if (own) return own;
    const className = this.info.className;
    const staticBinding =
      (className ? this.file.classAttrs.get(className)?.get(name) : undefined) ??
      (name.includes('.') ? this.file.importedStatic(name) : (this.file.globals.get(name) ?? this.file.importedStatic(name)));
    if (staticBinding && !this.params.has(name)) {
      const binding = this.instantiate(staticBinding, name);
      this.env.set(name, binding);
      return binding;
    }
    return this.attributeOf(name);
  }

  /** `db.session`: an attribute of a driver's object that its driver says is another. */
  private attributeOf(name: string): Binding | undefined {
    const dot = name.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const owner = this.lookup(name.slice(0, dot));
    if (!owner || owner.kind === 'cursor') return undefined;
    const driver = owner.kind === 'conn' ? owner.conn.driver : owner.driver;
    const binding = driverNamed(driver)?.attribute?.(this, owner, name.slice(dot + 1));
    if (binding) this.env.set(name, binding);
    return binding;
  }

  private instantiate(binding: StaticBinding, name: string): Binding {
    if (binding.kind === 'pool') return { kind: 'pool', entry: binding.entry, driver: binding.entry.config.driver };
    if (binding.kind === 'factory') return { kind: 'factory', entry: binding.entry, scoped: binding.scoped, driver: binding.driver };
    if (binding.kind === 'session') {
      // One module-level session for every job: its transaction state at the call is not known.
      const kind = driverNamed(binding.driver)?.sessions ?? handedIn(binding.driver);
      const conn = this.newConn(binding.driver, { kind: 'unknown', configId: binding.entry?.config.id }, kind.origin, binding.entry, 'unknown', kind.exitEnds);
      conn.shared = true;
      // What a function writes on its rows is sent by whoever commits it next, as for a Session handed in.
      this.handed.add(conn);
      return { kind: 'conn', conn };
    }
    // A module's or an object's connection used in a function serves every call of it (every job):
    // not one the job opened for itself. Its state at the call is not known either, but its
    // autocommit mode is when the file makes it once and never switches it (kept-connections.ts).
    const inFunction = this.info.def !== undefined;
    const use: ConnectionUse = inFunction ? { kind: 'unknown', configId: binding.entry.config.id } : { kind: 'dedicated', configId: binding.entry.config.id };
    return { kind: 'conn', conn: this.newConn(binding.entry.config.driver, use, 'connect', binding.entry, inFunction ? keptAutocommit(this.file, name, binding.entry) : undefined) };
  }

  /** The session a factory gives here: a new one, or for a scoped factory the walk's one (other code may have used it before). */
  sessionOf(factory: { entry?: ConfigEntry; scoped: boolean; driver: Driver }): Conn {
    const kind = driverNamed(factory.driver)?.sessions ?? handedIn(factory.driver);
    const use: ConnectionUse = { kind: 'pooled-client', configId: factory.entry?.config.id };
    if (!factory.scoped) return this.newConn(factory.driver, use, kind.origin, factory.entry, undefined, kind.exitEnds);
    const key = `scoped:${factory.entry?.config.id ?? '?'}`;
    const known = this.env.get(key);
    if (known?.kind === 'conn') return known.conn;
    // Whatever other code did with it before, a statement on it runs in a transaction unless its engine is in autocommit.
    const conn = this.newConn(factory.driver, use, kind.origin, factory.entry, factory.entry?.config.autocommit ?? 'unknown', kind.exitEnds);
    conn.shared = true;
    this.env.set(key, { kind: 'conn', conn });
    return conn;
  }

  newConn(driver: Driver, use: ConnectionUse, origin: Origin, entry?: ConfigEntry, autocommit?: boolean | 'unknown', exitEnds?: EndKind): Conn {
    const conn = this.file.newConnection({ driver, use, entry, origin, flow: initialFlow(autocommit ?? entry?.config.autocommit ?? 'unknown') });
    if (exitEnds) conn.exitEnds = exitEnds;
    this.conns.add(conn);
    return conn;
  }

  /** A connection handed in (a parameter, an attribute): from a pool the project makes, when they all agree. */
  protected handedInConn(driver: Driver, at: Node): Conn {
    const kind = handedIn(driver);
    const entry = this.file.handedInPool(driver, at);
    const conn = this.newConn(driver, { kind: 'unknown', ...(entry ? { configId: entry.config.id } : {}) }, kind.origin, entry, 'unknown', kind.exitEnds);
    this.handed.add(conn);
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
    for (const driver of this.file.drivers) {
      const conn = driver.connectionOf?.(expr, this);
      if (conn) return { kind: 'conn', conn };
    }
    if (!name) return undefined;
    if (!create || !this.file.importsDriver) return undefined;
    const root = name.split('.')[0];
    if (!this.params.has(root) && !name.startsWith('self.')) return undefined;
    const binding: Binding = { kind: 'conn', conn: this.handedInConn(this.file.driverOfFile, expr) };
    this.env.set(name, binding);
    return binding;
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

  /** `get_engine()`: a function of the file or of a project module that returns a maker's call makes what that call makes. */
  private madeByProjectFunction(callee: Node, expr: Node, name: string | undefined): Binding | undefined {
    if (!name || this.lookup(name)) return undefined;
    const def = this.file.resolveDef(callee, expr);
    if (def?.name === 'FunctionDefinition') {
      // `return create_engine(...)`, or a factory keeping one pool per tenant (tenant-pools.ts).
      const call = returnedCall(def) ?? tenantFactoryCall(def, this.text, (c) => this.file.entries.get(c.from)?.maker.kind === 'pool');
      const entry = call ? this.file.entries.get(call.from) : undefined;
      if (!entry) return undefined;
      return entry.maker.kind === 'pool' ? { kind: 'pool', entry, driver: entry.config.driver } : undefined;
    }
    const imported = name.includes('.') ? undefined : this.file.importedFactory(name);
    return imported?.kind === 'pool' ? this.instantiate(imported, name) : undefined;
  }

  /**
   * `pool = await self._ensure_pool()` with `def _ensure_pool(self) -> asyncpg.Pool`: a method of the
   * class whose return annotation names a driver's pool returns a pool of that driver (made elsewhere).
   */
  private poolByReturnAnnotation(expr: Node): Binding | undefined {
    const def = this.file.memberMethod(unwrap(expr.firstChild) ?? expr, expr);
    const returns = def?.name === 'FunctionDefinition' ? def.getChild('TypeDef')?.lastChild : undefined;
    if (!returns) return undefined;
    const typed = annotationOf(this.file.qualify(annotationType(returns)));
    return typed?.kind === 'pool' ? { kind: 'pool', driver: typed.driver.name } : undefined;
  }

  private callBinding(expr: Node, entering: boolean): Binding | undefined {
    const entry = this.file.entries.get(expr.from);
    if (entry) {
      if (entry.maker.kind === 'pool') return { kind: 'pool', entry, driver: entry.config.driver };
      return { kind: 'conn', conn: this.newConn(entry.config.driver, { kind: 'dedicated', configId: entry.config.id }, 'connect', entry) };
    }
    for (const driver of DRIVERS) {
      const made = driver.callBinding?.(this, expr);
      if (made) return made;
    }
    const callee = unwrap(expr.firstChild);
    if (callee && callee.name !== 'MemberExpression') {
      // SessionLocal(): a session of the factory's engine.
      const name = dottedName(callee, this.text);
      const factory = name ? this.lookup(name) : undefined;
      if (factory?.kind === 'factory') return { kind: 'conn', conn: this.sessionOf(factory) };
      const made = this.madeByProjectFunction(callee, expr, name);
      if (made) return made;
    }
    const method = methodCall(expr, this.text);
    if (!method) return undefined;
    const annotated = this.poolByReturnAnnotation(expr);
    if (annotated) return annotated;
    const object = this.receiver(method.object, method.method === 'cursor' || method.method === 'execute');
    if (object?.kind === 'factory') return driverNamed(object.driver)?.factoryMethod?.(this, object, method.method, method.call);
    if (object?.kind === 'pool') {
      const checkout = checkoutOf(object.driver, method.method);
      if (checkout) {
        const use: ConnectionUse = { kind: 'pooled-client', configId: object.entry?.config.id };
        return { kind: 'conn', conn: this.newConn(object.driver, use, checkout.origin, object.entry, checkout.autocommit ?? object.autocommit, checkout.exitEnds) };
      }
      return driverNamed(object.driver)?.poolMethod?.(this, object, method.method, method.call);
    }
    if (object?.kind === 'conn') {
      const own = driverNamed(object.conn.driver)?.connectionMethod?.(this, object.conn, method.method, method.call);
      if (own) return own;
    }
    if (!object) {
      for (const driver of this.file.drivers) {
        const made = driver.unseenReceiverMethod?.(this, method.method, entering);
        if (made) return made;
      }
      return undefined;
    }
    // The DB-API: conn.cursor(); psycopg's conn.execute() returns a cursor too.
    if (method.method === 'cursor' || method.method === 'execute' || method.method === 'executemany') return { kind: 'cursor', conn: object.conn };
    return undefined;
  }
}
