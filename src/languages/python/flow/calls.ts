// The calls a walk meets: SQL sent on a connection, a cursor or a pool (its
// text and the values bound to it), transaction control, ORM code, calls
// to the outside world, the job's work, and functions of the file called
// with a connection (walked at the call). Which methods do what is the
// driver modules' to say (drivers/index.ts).
import type { ConnectionUse, Driver, Scope, SideEffectCall, SqlSite } from '../../../model/index.ts';
import type { PendingWrite } from '../orm/writer.ts';
import {
  autocommitSetterOf,
  CONTROL_METHODS,
  driverBoundValues,
  driverNamed,
  instanceOrm,
  ORMS,
  placeholderStyle,
  poolRunsSql,
  poolSqlAutocommit,
  postgresOnly,
  runsSqlOnConnection,
  sqlFunctionOf,
  sqlMethodsOf,
  SQL_METHOD_NAMES,
  unitOfWork,
} from '../drivers/index.ts';
import { isOuterCall, updateInstance, type BuiltStatement, type ModelRef, type OrmContext } from '../orm/writer.ts';
import { callParts, children, dottedName, keyword, methodCall, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';
import { BindingWalk, type WalkInfo } from './bindings.ts';
import { classAttributeName } from './class-attributes.ts';
import { HostValueWalk } from './host-values.ts';
import { annotationType, assignedToParameter, bodyStatements, defName, literalBool, parameters, sqlArgument } from './defs.ts';
import type { DriverOrm } from './driver-api.ts';
import { boundValues, numberPlaceholders, paramsOf, resolveSettingNames, type BoundValues, type PlaceholderRef } from './params.ts';
import { holeNodes, isDeploymentValue, type DeploymentReader } from './deployment-values.ts';
import { isRequestValue, type RequestReader } from './request-values.ts';
import { beganBySql, ended, endedBySql, executed, noteEnd, possibleImplicitIds, scopeOf } from './scopes.ts';
import { qualifiedName } from './imports.ts';
import { passedToParameter } from './parameter-values.ts';
import { classPropertyCall, foreignCallee, instanceMethodEffect, moduleResolver, pythonSideEffect, receiverMaker, sideEffectWithin, type CalleeResolver } from './side-effects.ts';

import { analyzeHostText, DBAPI_EXECUTE_METHODS, OPAQUE_METHODS } from './sql-sites.ts';
import { resolveText, type HostText } from './strings.ts';
import type { Binding, Conn, PoolBinding } from './types.ts';
import type { EngineFile, Guest } from './engine-file.ts';
import { isWork } from './work.ts';

/** The callee resolver of each file (calleeResolver). */
const RESOLVERS = new WeakMap<object, CalleeResolver>();

/** A model instance a walk holds, the connection (session) it was read on, and the attributes set on it since the last flush. */
export type Instance = ModelRef & { conn?: Conn; pending?: Map<string, PendingWrite> };

export abstract class CallWalk extends HostValueWalk {
  readonly instances = new Map<string, Instance>();
  protected readonly dirtyInstances = new Set<Instance>();
  private readonly chainRoots = new Map<number, { root: Node; first: string } | null>();

  abstract walkBlock(statements: Node[]): void;
  /** A walk of a def called from this one. */
  protected abstract child(info: WalkInfo, file?: EngineFile): CallWalk;

  walkExpression(node: Node): void {
    this.walkExpressionCalls(node, false);
  }

  /** Handles every call under `node`, arguments before the call that takes them. */
  protected walkExpressionCalls(node: Node, skipTop: boolean): void {
    const visit = (n: Node, top: boolean) => {
      const kind = n.name;
      if (kind === 'LambdaExpression' || kind === 'FunctionDefinition' || kind === 'ClassDefinition') return;
      // Sibling links, not children(): no array per node (comments are skipped as children() skips them).
      for (let child = n.firstChild; child; child = child.nextSibling) if (child.name !== 'Comment') visit(child, false);
      if (kind === 'CallExpression' && !(top && skipTop)) this.handleCall(n);
    };
    visit(node, true);
  }

  private handleCall(node: Node): void {
    const call = callParts(node, this.text);
    if (!call) return;
    const method = methodCall(node, this.text);
    const qualified = this.file.qualify(call.callee);
    const madeBy = () => (method ? (receiverMaker(method.object, this.text, (n) => this.file.qualify(n)) ?? this.instancePropertyMaker(method.object)) : undefined);
    this.sideEffect(node, qualified, method?.method, method ? dottedName(method.object, this.text) : undefined, madeBy);
    // ORM chains: the SQL is written at the chain's last call; the calls before it are not the job's work.
    const orm = method ? this.ormChain(node) : undefined;
    if (orm === 'step') return;
    if (orm) {
      orm.query?.(this, node);
      return;
    }
    if (method) {
      let object = this.receiver(method.object, SQL_METHOD_NAMES.has(method.method) || CONTROL_METHODS.has(method.method));
      if (object?.kind === 'factory' && object.scoped) object = { kind: 'conn', conn: this.sessionOf(object) };
      if (object?.kind === 'conn' || object?.kind === 'cursor') {
        this.connectionMethod(node, object.conn, method.method, call.args, object.kind);
        return;
      }
      if (object?.kind === 'pool' && driverNamed(object.driver)?.poolCall?.(this, node, object, method.method, call.args)) return;
      if (object?.kind === 'pool' && poolRunsSql(object.driver, method.method)) {
        this.poolSite(object, method.method, call.args);
        return;
      }
      if (!object && DBAPI_EXECUTE_METHODS.has(method.method)) {
        this.sqlSite(sqlArgument(call.args), undefined, call.args, method.method);
        return;
      }
      // Other ORM calls: a manager's chain, instance.save(), instance.delete().
      if (ORMS.some((o) => o.call?.(this, node))) return;
    }
    const sqlFunction = sqlFunctionOf(qualified);
    if (sqlFunction) {
      const cursor = positional(call.args, sqlFunction.cursorArg);
      const binding = cursor ? this.receiver(cursor, true) : undefined;
      const conn =
        binding?.kind === 'conn' || binding?.kind === 'cursor'
          ? binding.conn
          : sqlFunction.ownTransaction
            ? this.newConn(this.file.driverOfFile, { kind: 'dedicated' }, 'connect', undefined, false)
            : undefined;
      const sqlArgs = [positional(call.args, sqlFunction.sqlArg) ?? keyword(call.args, sqlFunction.sqlKeyword), ...(sqlFunction.moreSqlKeywords ?? []).map((k) => keyword(call.args, k))];
      for (const sql of sqlArgs) {
        if (!sql) continue;
        for (const one of sqlFunction.sqlLists ? statementItems(sql) : [sql]) this.sqlSite(one, conn);
      }
      if (conn) executed(conn, span(node));
      return;
    }
    if (this.isQueryFunction(call.callee)) {
      this.sqlSite(positional(call.args, 0), undefined, call.args, 'execute');
      return;
    }
    // A function walked here is not work itself: what it calls is, noted by its walk.
    if (this.maybeInline(node, call.callee, call.args, !!method)) return;
    if (isWork(qualified ?? dottedName(call.callee, this.text), method?.method)) this.noteWork();
    this.escapes(call.args, qualified ?? dottedName(call.callee, this.text), method?.method);
    // A function of the file (a method of the class) that makes the request itself.
    const within = sideEffectWithin(node, this.calleeResolver()) ?? (method ? this.modelMethodEffect(node, method.object, method.method) : undefined);
    if (within) this.recordSideEffect(node, within);
  }

  /**
   * `letter.message.send()` with `letter` a model instance this walk read and `message` a property of the model that
   * returns a call (`EmailMessage(...)`): that call's qualified name, in the model's module.
   */
  private instancePropertyMaker(object: Node): string | undefined {
    const member = unwrap(object);
    const [owner, dot, property] = member?.name === 'MemberExpression' ? children(member) : [];
    const model = owner?.name === 'VariableName' && dot?.name === '.' && property?.name === 'PropertyName' ? this.instanceOf(owner) : undefined;
    if (!model || model.core) return undefined;
    const name = this.text.slice(property.from, property.to);
    const imported = this.file.imports.fromImports.get(model.name);
    const source = imported ? this.file.projectModule(imported.module, imported.level) : undefined;
    const call = source ? classPropertyCall(source.tree.topNode, source.text, model.name, name) : classPropertyCall(this.file.tree.topNode, this.text, model.name, name);
    if (!call) return undefined;
    return source ? qualifiedName(call.firstChild!, source.text, source.imports) : this.file.qualify(call.firstChild!);
  }

  /** `letter.deliver()` on a model instance this walk read: what the model's own method does. */
  private modelMethodEffect(node: Node, object: Node, method: string): string | undefined {
    const model = unwrap(object)?.name === 'VariableName' ? this.instanceOf(object) : undefined;
    if (!model || model.core) return undefined;
    const file = this.file;
    const imported = file.imports.fromImports.get(model.name);
    const source = imported ? file.projectModule(imported.module, imported.level) : undefined;
    const load = (m: string, level: number, from: string) => file.projectModule(m, level, from);
    return instanceMethodEffect(
      node,
      method,
      model.name,
      { top: file.tree.topNode, file: this.calleeResolver() },
      source ? { top: source.tree.topNode, file: moduleResolver(source, load) } : undefined,
    );
  }

  /** The file's callees as sideEffectWithin reads them: one resolver per file, which keeps what each def it reads does. */
  private calleeResolver(): CalleeResolver {
    let resolver = RESOLVERS.get(this.file);
    if (!resolver) {
      const file = this.file;
      resolver = {
        text: file.text,
        qualify: (n) => file.qualify(n),
        resolveDef: (e, at) => file.resolveDef(e, at) ?? file.memberMethod(e, at),
        foreign: (e) => foreignCallee(e, file.text, file.imports, file.model.file, (m, level, from) => file.projectModule(m, level, from)),
      };
      RESOLVERS.set(file, resolver);
    }
    return resolver;
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

  /** SQL a pool runs itself (asyncpg's pool.fetch, SQLAlchemy 1.x's engine.execute): each call on any connection of the pool. */
  private poolSite(pool: PoolBinding, name: string, args: Arg[]): void {
    const use: ConnectionUse = { kind: 'pool', configId: pool.entry?.config.id };
    const conn = this.newConn(pool.driver, use, 'parameter', pool.entry, poolSqlAutocommit(pool.driver));
    this.conns.delete(conn);
    this.sqlSite(sqlArgument(args), conn, args, name);
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
    const own = driverNamed(conn.driver)?.connectionCall?.(this, node, conn, name, args, via);
    if (own === true) return;
    if (own === undefined && sqlMethodsOf(conn.driver, via).has(name) && !(via === 'conn' && !runsSqlOnConnection(conn))) {
      const statements = this.sqlSite(sqlArgument(args), conn, args, name);
      this.afterStatements(conn, statements, span(node));
      return;
    }
    if (OPAQUE_METHODS.has(name)) {
      executed(conn, span(node));
      return;
    }
    if (via !== 'conn') return;
    if (name === 'commit' || name === 'rollback') {
      ended(conn, name);
      return;
    }
    if (name === 'close' && conn.exitEnds === 'rollback') {
      ended(conn, 'rollback');
      return;
    }
    const setter = autocommitSetterOf(name);
    if (!setter) return;
    const value = setter.keyword ? keyword(args, setter.keyword) : positional(args, 0);
    if (value || !setter.keyword) conn.flow.autocommit = setter.autocommitOf ? setter.autocommitOf(value, this.text) : literalBool(value, this.text);
  }

  /** A SQL site for SQL the front end wrote for ORM code (an ORM chain or builder): its text maps onto the code it stands for. */
  builtSite(built: BuiltStatement, conn: Conn | undefined) {
    const analysis = analyzeHostText(built.host);
    if (analysis.statements.length === 0) return [];
    const site: SqlSite = {
      span: built.host.span,
      analysis: { statements: analysis.statements, errors: [] },
      scope: conn ? scopeOf(conn, this.file.model.file) : { kind: 'unknown' },
      connection: conn ? conn.use : { kind: 'unknown' },
      driver: conn ? conn.driver : this.file.driverOfFile,
    };
    if (built.params.length > 0) site.params = built.params;
    if (conn?.callback) site.callback = { configId: conn.callback.configId, role: conn.callback.role };
    if (this.info.name) site.functionName = this.info.name;
    this.file.addSite({ site, inTry: [...this.tries], inHandler: this.handler, conn });
    if (conn) executed(conn, built.host.span);
    return analysis.statements;
  }

  /** What the ORM code of this walk can read: names, constants, models and the enclosing function's parameters. */
  ormContext(): OrmContext {
    return {
      text: this.text,
      qualify: (n) => this.file.qualify(n),
      valueOf: this.nameValue,
      isParameter: (name) => this.params.has(name),
      model: (n) => this.modelNamed(n) ?? ORMS.reduce<ModelRef | undefined>((found, o) => found ?? o.heldModel?.(this, n, (m) => this.modelNamed(m)), undefined),
      instance: (n) => this.instanceOf(n),
      subquery: (w, n) => ORMS.some((o) => o.subquery?.(w, n) ?? false),
      constant: (n) => this.file.models.constantOf(n, this.file),
      defOf: (callee, at) => this.file.resolveDef(callee, at),
      parameterDefault: (name) => this.paramDefaults.get(name),
      parameterAssignments: (name) => (this.info.def && this.params.has(name) ? assignedToParameter(this.info.def, this.text, name) : []),
      parameterArguments: (name) => (this.info.def && this.params.has(name) ? passedToParameter(this.file, this.info.def, name) : undefined),
      projectArguments: (name) => (this.info.def && this.params.has(name) ? this.file.projectArguments(this.info.def, name) : undefined),
      defSource: (callee, at) => {
        const local = this.file.resolveDef(callee, at);
        if (local?.name === 'FunctionDefinition') return { def: local, text: this.text, qualify: (n) => this.file.qualify(n) };
        const there = this.calleeResolver().foreign?.(callee);
        return there ? { def: there.def, text: there.file.text, qualify: (n) => there.file.qualify(n) } : undefined;
      },
    };
  }

  /**
   * Rows the caller read and hands in (`mark_running(rows, ...)` with `rows` a locking read of the caller's, walked in
   * its place): the parameter holds the same rows, so what the helper writes on them is written on that read's rows.
   */
  private handedRows(def: Node, callArgs: Arg[], isMethodCall: boolean): void {
    const parent = this.info.parent;
    if (!(parent instanceof CallWalk)) return;
    let params = parameters(def, this.text).filter((p) => p.kind === 'normal');
    if (isMethodCall && this.file.classOfDef.has(def.from) && (params[0]?.name === 'self' || params[0]?.name === 'cls')) params = params.slice(1);
    const hand = (name: string | undefined, value: Node) => {
      const rows = name ? parent.instanceOf(value) : undefined;
      if (name && rows) this.instances.set(name, { ...rows, assigned: new Map(), pending: undefined });
    };
    callArgs.filter((a) => !a.name && !a.star).forEach((a, i) => hand(params[i]?.name, a.value));
    for (const a of callArgs) if (a.name && params.some((p) => p.name === a.name)) hand(a.name, a.value);
  }

  /**
   * The parameters and, in a model's own method, `self`: instances of the
   * model the code is handed (`def finish(job: Job)`, `self.save()` in `class
   * Job(models.Model)`), where the ORM knows what their save() writes on.
   */
  override bindParameters(...args: Parameters<BindingWalk['bindParameters']>): void {
    super.bindParameters(...args);
    const [def, callArgs, isMethodCall] = args;
    this.handedRows(def, callArgs, isMethodCall);
    const handed = instanceOrm(this.file)?.handedInstance;
    if (!handed) return;
    const bind = (name: string, typeNode: Node | undefined) => {
      const model = typeNode && !this.env.has(name) ? this.file.models.modelOf(typeNode, this.file) : undefined;
      const orm = model ? handed(this) : undefined;
      if (model && orm) this.instances.set(name, { ...model, assigned: new Map(), conn: orm.conn });
    };
    for (const p of parameters(def, this.text)) {
      if (p.annotation) bind(p.name, annotationType(p.annotation));
    }
    const first = parameters(def, this.text)[0];
    const cls = this.file.classOfDef.has(def.from) ? enclosingClass(def) : undefined;
    if (first?.name === 'self' && cls) bind('self', cls.getChild('VariableName') ?? undefined);
  }

  private modelNamed(node: Node): ModelRef | undefined {
    return this.file.models.modelOf(node, this.file);
  }

  /** The model instance a name holds (`job = Job.objects.select_for_update()...first()`), if this walk knows. */
  instanceOf(node: Node): ModelRef | undefined {
    const name = dottedName(unwrap(node), this.text);
    return name ? this.instances.get(name) : undefined;
  }

  /**
   * A session writes its instances' changes in one UPDATE each at commit(),
   * flush(), its next query (autoflush) or the end of its begin() block.
   */
  flushInstances(conn: Conn): void {
    for (const instance of [...this.dirtyInstances]) {
      if (instance.conn !== conn || !instance.pending) continue;
      this.dirtyInstances.delete(instance);
      // A row the session locked, written back where the session's transaction is not known (a Session handed in):
      // alone, its UPDATE by id would read as a finish by id. The read and the write are one claim, whatever
      // transaction holds them (the caller's commit): written as one statement when the read can be written again.
      const unplaced = instance.locked && scopeOf(conn, this.file.model.file).kind !== 'transaction';
      const built = !unplaced
        ? updateInstance(instance, instance.pending, this.ormContext())
        : instance.lockingRead
          ? updateInstance(instance, instance.pending, this.ormContext(), instance.lockingRead)
          : undefined;
      instance.pending = undefined;
      if (built) this.builtSite(built, conn);
    }
  }

  /**
   * A Session handed in keeps what the function wrote on its instances for the caller's commit
   * (`job = session.get(Job, id); job.status = "done"` in a store whose caller commits): written where the function ends.
   */
  override finish(): void {
    super.finish();
    for (const instance of [...this.dirtyInstances]) {
      if (instance.conn && instance.pending && this.handed.has(instance.conn)) this.flushInstances(instance.conn);
    }
  }

  /** Flushes the connection's instances when its driver has a unit of work. */
  protected flushIfUnitOfWork(conn: Conn): void {
    if (unitOfWork(conn.driver)) this.flushInstances(conn);
  }

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

  /**
   * The ORM whose query chain ends at this call, 'step' for the calls inside
   * an ORM chain or builder (SQL is written at their end), undefined for
   * anything else.
   */
  private ormChain(node: Node): DriverOrm | 'step' | undefined {
    const found = this.rootOf(node);
    if (!found) return undefined;
    const outer = isOuterCall(node);
    for (const orm of ORMS) {
      const said = orm.chain?.(this, node, found.root, found.first, outer);
      if (said === 'none') return undefined;
      if (said === 'step') return 'step';
      if (said === 'query') return orm;
    }
    return undefined;
  }

  /** Transaction control sent as SQL, then the statement's own effect on the transaction. */
  afterStatements(conn: Conn, statements: { transaction?: string }[] | undefined, at: { start: number; end: number }): void {
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
  sqlSite(sqlNode: Node | undefined, conn: Conn | undefined, args: Arg[] = [], method = 'execute') {
    if (!sqlNode) return undefined;
    const resolved = resolveText(sqlNode, this.file.resolveContext());
    if (!resolved || resolved.text.trim() === '') return undefined;
    const driver = conn?.driver ?? this.file.driverOfFile;
    const { host, refs } = numberPlaceholders(resolved, placeholderStyle(driver, method, resolved));
    const analysis = analyzeHostText(host);
    // A syntax error is reported only for drivers that speak nothing but PostgreSQL (psycopg, psycopg2,
    // asyncpg). SQLAlchemy and Django run every dialect's SQL through the same calls (SQLAlchemy's own
    // MySQL, SQLite and Oracle dialects): there it is unknown, as in the TS front end. The statements
    // that do parse are read either way.
    // A psycopg.sql field whose argument could not be read may be any Composable, a piece of SQL as well as a value
    // (`DO {action}` with `action` a sql.SQL(...) the code picks in a branch): the text is not known, so neither is its syntax.
    const unread = refs.some((r) => r.kind === 'format');
    // So may a value the code put in the text (`COPY (%s) TO STDOUT` % select, f"... WHERE {where}"): an error from its
    // place on is not known to be one; an error before it is, whatever the value (the text up to there is no statement's start).
    const errors = analysis.errors.filter((error) => beforeEveryHole(host, error.span.start));
    if (conn !== undefined && conn.origin !== 'parameter' && postgresOnly(conn.driver) && errors.length > 0 && !unread) this.file.model.sqlErrors.push(...errors);
    if (analysis.statements.length === 0) return [];
    const scope: Scope = conn ? scopeOf(conn, this.file.model.file) : { kind: 'unknown' };
    const site: SqlSite = {
      span: host.pinned ?? host.span,
      analysis: { statements: analysis.statements, errors: [] },
      scope,
      connection: conn ? conn.use : { kind: 'unknown' },
      driver,
    };
    const bound = this.boundValuesOf(args, method, driver, resolved);
    const params = paramsOf(refs, bound, (n) => this.hostParam(n));
    if (params) site.params = params;
    resolveSettingNames(site.analysis.statements, host, params);
    const deploymentValues = this.deploymentHoles(host);
    if (deploymentValues.length > 0) site.deploymentValues = deploymentValues;
    if (conn?.callback) site.callback = { configId: conn.callback.configId, role: conn.callback.role };
    // A hook run once per new connection: which values are the current request's (it leaves them on the connection).
    if (conn?.callback?.role === 'configure' && !conn.callback.inPoolWorker) {
      const requestValues = this.requestHoles(host, refs, bound);
      if (requestValues.length > 0) site.requestValues = requestValues;
    }
    if (this.info.name) site.functionName = this.info.name;
    this.file.addSite({
      site,
      inTry: [...this.tries],
      inHandler: this.handler,
      mayBeIn: conn ? possibleImplicitIds(conn, this.file.model.file) : undefined,
      conn,
    });
    return analysis.statements;
  }

  /** The holes of the text filled with a value of the deployment (an environment variable, a settings object's field). */
  private deploymentHoles(host: HostText): number[] {
    if (host.holes.length === 0) return [];
    const file = this.file;
    const ctx = file.resolveContext();
    const reader: DeploymentReader = {
      text: this.text,
      imports: file.imports,
      constant: (name, at) => ctx.constant(name, at),
      projectModule: (m, l, f) => file.projectModule(m, l, f),
    };
    return [...holeNodes(host, file.tree.topNode, this.text)].filter(([, node]) => isDeploymentValue(node, reader)).map(([n]) => n);
  }

  /** The placeholders ($N, holes too) filled with a value of the current request or job (request-values.ts). */
  private requestHoles(host: HostText, refs: PlaceholderRef[], bound: BoundValues | undefined): number[] {
    const file = this.file;
    const ctx = file.resolveContext();
    const reader: RequestReader = {
      text: this.text,
      imports: file.imports,
      constant: (name, at) => ctx.constant(name, at),
      projectModule: (m, l, f) => file.projectModule(m, l, f),
      resolveDef: (callee, at) => file.resolveDef(callee, at),
    };
    const nodes = new Map<number, Node>();
    refs.forEach((ref, i) => {
      const node =
        ref.kind === 'format' ? ref.arg : bound && !bound.opaque ? (ref.kind === 'positional' ? bound.sequence?.[ref.index] : bound.mapping?.get(ref.name)) : undefined;
      if (node) nodes.set(i + 1, node);
    });
    if (host.holes.length > 0) for (const [n, node] of holeNodes(host, file.tree.topNode, this.text)) nodes.set(n, node);
    // A parameter of a helper the hook calls (`apply(conn, current_account.get())`): the caller's argument, one call up.
    const argumentOf = (node: Node): Node => {
      const bare = unwrap(node);
      const name = bare?.name === 'VariableName' ? this.text.slice(bare.from, bare.to) : undefined;
      return (name && this.params.has(name) && this.info.parent?.text === this.text && this.paramArgs.get(name)) || node;
    };
    return [...nodes].filter(([, node]) => isRequestValue(argumentOf(node), reader)).map(([n]) => n);
  }

  /** The values a call binds: execute(q, params), asyncpg's execute(q, *args), text(q).bindparams(k=v). */
  private boundValuesOf(args: Arg[], method: string, driver: Driver, host: HostText): BoundValues | undefined {
    const valueOf = this.nameValue;
    const own = driverBoundValues(driver, args, method, this.text, valueOf);
    if (own) return own;
    const given = positional(args, 1) ?? keyword(args, 'params') ?? keyword(args, 'parameters') ?? keyword(args, 'vars');
    const bound = given ? boundValues(given, this.text, valueOf) : undefined;
    if (host.boundParams) return { ...bound, mapping: new Map([...(bound?.mapping ?? []), ...host.boundParams]), opaque: false };
    return bound;
  }

  private isQueryFunction(callee: Node): boolean {
    const names = this.file.options.queryFunctions;
    if (!names || names.length === 0) return false;
    const name = dottedName(callee, this.text);
    if (!name) return false;
    const last = name.slice(name.lastIndexOf('.') + 1);
    return names.includes(name) || names.includes(last);
  }

  /**
   * A function of this file, or of a module of the project it imports (guest-file.ts), called with a pool,
   * connection or cursor: walk it here, with them. Also one called with none inside a transaction of the
   * thread's connection (Django's `with transaction.atomic():`): what it runs on that connection by name
   * runs in this transaction (a claim helper `take_next()` of the models module), so it is walked here too.
   */
  private maybeInline(node: Node, callee: Node, args: Arg[], isMethodCall: boolean): boolean {
    if (this.stack.length > 4) return false;
    for (const driver of this.file.drivers) driver.threadTransactions?.(this);
    const threadTx = [...this.env].filter(([, b]) => b.kind === 'conn' && b.conn.threadBound === true && b.conn.flow.explicit.length > 0);
    const local = this.file.resolveDef(callee, node);
    if (args.length === 0 && threadTx.length === 0) {
      if (local?.name === 'FunctionDefinition') this.file.calledOutside.add(local.from);
      return false;
    }
    const guest = local ? undefined : (this.file.guestDef?.(callee) ?? this.throughClassAttribute(callee, node));
    const def = local ?? guest?.def;
    if (!def || def.name !== 'FunctionDefinition' || this.stack.includes(def.from)) return false;
    // Names only: a call as an argument would be evaluated twice here.
    const bindings = (value: Node): Binding | undefined => {
      const name = dottedName(unwrap(value), this.text);
      return name ? this.lookup(name) : undefined;
    };
    const handsConnection = args.some((a) => bindings(a.value));
    if (!handsConnection && threadTx.length === 0) {
      if (local) this.file.calledOutside.add(def.from);
      return false;
    }
    if (guest) guest.enter({ span: span(node), tries: [...this.tries], handler: this.handler, handsConnection });
    else if (handsConnection) this.file.walkedAtCall.add(def.from);
    // Handed no connection, it runs on its own where it is called outside a transaction: file.ts walks it then.
    else this.file.threadInlined.add(def.from);
    const file = guest?.file ?? this.file;
    const walk = this.child({ name: defName(def, file.text), className: file.classOfDef.get(def.from), def, parent: this, inlinedAt: node }, file);
    // The callee reaches the thread's connection by name: the one of this walk, in its transaction.
    for (const [key, binding] of threadTx) {
      walk.env.set(key, binding);
      if (binding.kind === 'conn') walk.conns.add(binding.conn);
    }
    walk.bindParameters(def, args, isMethodCall, undefined, bindings);
    for (const conn of walk.conns) this.conns.add(conn);
    walk.walkBlock(bodyStatements(def));
    for (const conn of walk.conns) this.conns.add(conn);
    return true;
  }

  /** `self.job_model.take()` where the class (or a base class of the file) says `job_model = Job`: the call `Job.take()`. */
  private throughClassAttribute(callee: Node, at: Node): Guest | undefined {
    const parts = dottedName(callee, this.text)?.split('.');
    if (parts?.length !== 3 || (parts[0] !== 'self' && parts[0] !== 'cls')) return undefined;
    const className = this.info.className ?? this.file.enclosingClass(at);
    const held = className ? classAttributeName(this.file.tree.topNode, this.text, className, parts[1]) : undefined;
    return held ? this.file.guestDef?.(callee, `${held}.${parts[2]}`) : undefined;
  }

  private sideEffect(node: Node, qualified: string | undefined, method: string | undefined, receiver: string | undefined, madeBy?: () => string | undefined): void {
    const isEffect = pythonSideEffect(qualified, method, receiver, madeBy) !== undefined;
    if (isEffect) this.recordSideEffect(node, qualified ?? this.text.slice(node.firstChild!.from, node.firstChild!.to));
  }

  private recordSideEffect(node: Node, callee: string, inHelper?: SideEffectCall['inHelper']): void {
    // In a body walked in place of its call: the call is what the transaction makes, where it makes it (after the
    // claim in the caller's order, in the caller's file), named through the functions it goes through. The helper's
    // own statements are ordered against the call out where it is in the helper (the outermost helper of this file).
    const { inlinedAt, parent, name, def } = this.info;
    if (inlinedAt && parent instanceof CallWalk) {
      const helper = def && parent.file === this.file ? { from: def.from, to: def.to, at: node.from } : inHelper;
      return parent.recordSideEffect(inlinedAt, `${name ?? 'a call'} → ${callee}`, helper);
    }
    // The innermost `with` connection, else a connection of this walk inside a transaction (@transaction.atomic),
    // else one in the driver's implicit transaction (autocommit off, a statement run since its last commit).
    const conn =
      this.contexts[this.contexts.length - 1] ??
      [...this.conns].reverse().find((c) => c.flow.explicit.length > 0) ??
      [...this.conns].reverse().find((c) => c.flow.dirty === true && c.flow.autocommit === false);
    if (!conn) return;
    let scope: Scope = { kind: 'unknown' };
    if (conn.flow.explicit.length > 0 || conn.flow.dirty === true) scope = scopeOf(conn, this.file.model.file);
    else if (conn.flow.dirty === false) scope = { kind: 'autocommit' };
    this.file.model.sideEffects.push({ span: span(node), callee, scope, ...(inHelper ? { inHelper } : {}) });
  }
}

/** The statements of a list or tuple of SQL (each a string or a (sql, params) pair); the node itself when it is not one. */
function statementItems(node: Node): Node[] {
  const expr = unwrap(node);
  if (!expr || (expr.name !== 'ArrayExpression' && expr.name !== 'TupleExpression')) return [node];
  return children(expr)
    .filter((c) => !['[', ']', '(', ')', ','].includes(c.name))
    .map((item) => (item.name === 'TupleExpression' || item.name === 'ParenthesizedExpression' ? (children(item).find((c) => !['(', ')', ','].includes(c.name)) ?? item) : item));
}

/** The class a method is defined in (through its decorators). */
function enclosingClass(def: Node): Node | undefined {
  for (let at = def.parent; at; at = at.parent) {
    if (at.name === 'ClassDefinition') return at;
    if (at.name === 'FunctionDefinition') return undefined;
  }
  return undefined;
}

/** The host offset `at` comes before the first hole of the text (a value the code computed): the text there is the code's own. */
function beforeEveryHole(host: HostText, at: number): boolean {
  if (host.holes.length === 0) return true;
  if (host.pinned) return false;
  const first = Math.min(...host.holes.map((h) => host.starts[h.start] ?? Infinity));
  return at < first;
}
