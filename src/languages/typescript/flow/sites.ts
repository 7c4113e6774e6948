// SQL sites: which calls send SQL (the driver modules' query rows, tagged
// templates, builder chains), the text and values of each, and where it runs
// — its transaction and its connection, from the value it is sent on and the
// connection's state at that point of the path.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ConnectionUse, Driver, FileModel, Scope, SqlSite } from '../../../model/index.ts';
import type { PlaceholderStyle, SqlAnalysis } from '../../../sql/index.ts';
import { builtQuery, type ChainLink, type RootOf } from '../builder-sql.ts';
import { mayBeBound } from '../bound-names.ts';
import type { QueryInput } from '../drivers/model.ts';
import { classifyValue, elementsOf, holeExpressions, hostParams, type ValuesSource } from '../params.ts';
import { isRequestValue } from '../request-values.ts';
import { nameHoleTables } from '../hole-tables.ts';
import { isDeploymentValue } from '../deployment-values.ts';
import { analyzeHostText } from '../sql-sites.ts';
import { constantInit, resolveText, templateText, type HostText } from '../strings.ts';
import { dottedName, methodOf, objectProperty, span, stringValue, unwrap, type Call, type Node } from '../syntax.ts';
import { Bindings } from './bindings.ts';
import { finallyResets } from './finally-resets.ts';
import { callbackClient, throughCall, uncaughtThrow, type ThrowWalk } from './open-on-throw.ts';
import { unrolledLoop } from './unroll.ts';
import { bare, endsJob, type SiteMeta } from './jobs.ts';
import { parameterDefault, parameterOf, receiverOf } from './parameters.ts';
import { callerNumber } from './project-callers.ts';
import { senderShape } from './senders.ts';
import { fragmentReader } from './fragments.ts';
import { Env } from './env.ts';
import type { TsFile } from './file.ts';
import { allEntry, allNone, txOf, type Atom, type State } from './state.ts';
import { driverOfValue, type Conn, type QueryCall, type Tx, type Value } from './types.ts';

export abstract class Sites extends Bindings {
  /** The state the next throw point leaves with, when it is not the current one (a BEGIN that fails opens nothing). */
  protected throwState?: State;
  /** In a loop walked once per constant statement: the statement its name holds in this iteration. */
  private stepBindings?: ReadonlyMap<string, Node>;

  /** What the facts of open-on-throw.ts read of this walk at the current point. */
  protected throwWalk(): ThrowWalk {
    return { model: this.file.model, env: this.env, state: this.state, options: this.options, tries: this.tries.length, value: (n) => this.value(n) };
  }

  /** A call the walk does not walk into: its error path, and hand-offs of the function's parameters (open-on-throw.ts). */
  protected throughCall(call: Call): void {
    this.throwState = throughCall(this.throwWalk(), this, call) ?? this.throwState;
  }

  /** An error that leaves the walked function (`tag`: through a finally block, see uncaughtThrow). */
  protected uncaught(state: State, tag?: string): void {
    uncaughtThrow(this.throwWalk(), state, tag);
  }

  release(conn: Conn, call: Call): void {
    // Another module's function walked at a call: its model is that module's own reading.
    if (!this.state.reachable || this.options.adopt?.foreign) return;
    const atoms = this.state.atoms(conn);
    const open = atoms.filter((a): a is Extract<Atom, { kind: 'open' }> => a.kind === 'open');
    const normal = open.find((a) => !a.error);
    const failed = open.find((a) => a.error);
    const chosen = normal ?? failed;
    const site = { span: span(call) } as FileModel['releases'][number];
    if (chosen) site.openTransaction = { beginSpan: chosen.tx.info.beginSpan, reason: normal ? 'no-end' : 'error-path' };
    // Or on the error path of a call handed the client outside a transaction: open if that call's error leaves it open.
    const after = chosen ? undefined : atoms.find((a) => a.kind === 'none' && a.via);
    if (after?.kind === 'none' && after.via) site.afterCall = after.via;
    // A function's release walked again at a call that hands it the connection: one release, open if either walk says so.
    const seen = this.file.model.releases.find((r) => r.span.start === site.span.start && r.span.end === site.span.end);
    if (seen) {
      if (!seen.openTransaction && site.openTransaction) seen.openTransaction = site.openTransaction;
      if (!seen.afterCall && site.afterCall) seen.afterCall = site.afterCall;
      return;
    }
    this.file.model.releases.push(site);
  }

  /** A site a walk at a call records in the caller's transaction (helper-calls.ts). */
  protected abstract adoptSite(site: SqlSite): SqlSite;

  protected blockTries(): TSESTree.TryStatement[] {
    return this.tries.filter((t) => t.phase === 'block').map((t) => t.node);
  }

  protected handlerTries(): TSESTree.TryStatement[] {
    return this.tries.filter((t) => t.phase === 'handler').map((t) => t.node);
  }

  /** The SQL a call sends, as the driver modules read it (or an in-house query function the config names). */
  protected queryOf(call: Call): QueryCall | undefined {
    const method = methodOf(call);
    const arg0 = unwrap(call.arguments[0] as Node | undefined);
    if (!method) {
      const name = dottedName(call.callee);
      if (name && arg0 && this.file.queryFunctions.some((f) => f === name || name.endsWith(`.${f}`))) {
        return { text: arg0, on: undefined, driver: this.file.fileDriver, placeholders: 'dollar', at: call };
      }
      return this.handedQuery(call, arg0) ?? this.sentThrough(call, arg0);
    }
    const on = this.value(method.object);
    const onDriver = driverOfValue(on);
    const input: QueryInput = { call, method: method.name, object: method.object, arg0, on, onDriver, driver: onDriver ?? this.file.fileDriver, ctx: this };
    const rows = this.file.drivers.queryRowsOf(method.name);
    for (const row of rows) {
      const query = row.withoutText ? row.read(input) : undefined;
      if (query) return query;
    }
    if (!arg0) return undefined;
    const customName = dottedName(call.callee);
    if (customName && this.file.queryFunctions.some((f) => f === customName || customName.endsWith(`.${f}`))) {
      return this.textArg(arg0, on, input.driver, 'dollar', call);
    }
    for (const row of rows) {
      const query = row.withoutText ? undefined : row.read(input);
      if (query) return query;
    }
    return on?.kind === 'namespace' ? this.sentThrough(call, arg0) : undefined;
  }

  /**
   * `query(text, values)` where `query` is what the caller handed in: a parameter of that name, or the `query`
   * property of a parameter destructured in the parameter list (`({ query, withTransaction }: Deps) => ...`, a
   * repository the application builds around its pool). The same call as `deps.query(text, values)`, which the
   * conventions read on any receiver: its connection is the caller's, unknown here.
   */
  private handedQuery(call: Call, arg0: Node | undefined): QueryCall | undefined {
    const callee = unwrap(call.callee);
    if (!arg0 || arg0.type === 'SpreadElement' || callee?.type !== 'Identifier') return undefined;
    const param = parameterOf(this.env, this.file.model.file, callee);
    if (!param || (param.property ?? callee.name) !== 'query') return undefined;
    return this.textArg(arg0, undefined, this.file.fileDriver, 'dollar', call);
  }

  /**
   * A call of a project function that sends the text it is given on a pool
   * or client it names (senders.ts): the query that function's call sends,
   * read here with this call's text and values.
   */
  private sentThrough(call: Call, arg0: Node | undefined): QueryCall | undefined {
    if (!arg0 || arg0.type === 'SpreadElement' || call.arguments.length > 2) return undefined;
    const callee = this.value(call.callee);
    if (callee?.kind !== 'function') return undefined;
    const shape = senderShape(callee.node);
    if (!shape) return undefined;
    const found = callee.env instanceof Env ? callee.env.lookup(shape.receiver) : { found: false };
    const held = found.found ? found.value : callee.owner.moduleBinding?.(shape.receiver);
    const on = callee.owner === this.file ? held : this.file.adopt(held, callee.owner as TsFile, span(call.callee));
    if (on?.kind !== 'pool' && on?.kind !== 'conn') return undefined;
    const onDriver = driverOfValue(on);
    const input: QueryInput = { call, method: shape.method, object: shape.object, arg0, on, onDriver, driver: onDriver ?? this.file.fileDriver, ctx: this };
    for (const row of this.file.drivers.queryRowsOf(shape.method)) {
      const query = row.read(input);
      if (query) return query;
    }
    return undefined;
  }

  /** A builder chain that ends here, or schema declared as code: the SQL it sends. */
  protected builderQuery(call: Call): QueryCall | undefined {
    for (const driver of this.file.drivers.models) {
      const declared = driver.declaration?.(call, this);
      if (declared !== undefined) return declared ?? undefined;
    }
    const built = builtQuery(call, this, this.file.awaited.has(call), this.file.drivers.builderOf);
    if (!built) return undefined;
    for (const c of built.calls) this.consume(c);
    return { text: call, synthesized: built.host, on: built.on, driver: built.driver, placeholders: 'dollar', at: call, values: { kind: 'args', nodes: built.values } };
  }

  /** The initializer a constant name stands for (a const of the file or an imported module's): for builders' values. */
  constantOf(node: Node): Node | undefined {
    return node.type === 'Identifier' || node.type === 'MemberExpression' ? constantInit(node, this.file.valueContext) : undefined;
  }

  mayBeBound(name: string): boolean {
    return mayBeBound(this.file.program, this.file.text, name);
  }

  /** A builder chain on a name imported from a module the walk cannot read: what a driver module says it runs on. */
  unreadRoot(root: Node, links: readonly ChainLink[]): RootOf | undefined {
    for (const driver of this.file.drivers.models) {
      const on = driver.builderRoot?.(root, links, this);
      // Calls that continue a builder held in a const change the query it sends later: part of it, never work of their own.
      if (on?.links) for (const l of links) this.consume(l.call);
      if (on) return on;
    }
    return undefined;
  }

  get program(): Node {
    return this.file.program;
  }

  /** `const [first] = rows` of the file: the initializer a name is an element of, and its index. */
  elementOf(node: Node): { init: Node; index: number } | undefined {
    return node.type === 'Identifier' ? this.file.elementOf(node.name, node) : undefined;
  }

  taggedArg(tagged: TSESTree.TaggedTemplateExpression, on: Value | undefined, driver: Driver, call: Call): QueryCall {
    this.consume(tagged);
    return { text: tagged.quasi, tagged: true, on, driver, placeholders: 'dollar', at: call };
  }

  textArg(arg: Node, on: Value | undefined, driver: Driver, placeholders: PlaceholderStyle, call: Call): QueryCall {
    // A query config: { name, text, values } (or a class that wraps one).
    let object: Node | undefined = arg;
    let pinned = false;
    if (object.type === 'Identifier' || object.type === 'MemberExpression') {
      const init = constantInit(object, this.file.resolveContext);
      if (init?.type === 'ObjectExpression' || (init?.type === 'NewExpression' && this.isQueryClass(init.callee))) {
        object = init;
        pinned = true;
      }
    }
    if (object.type === 'NewExpression' && this.isQueryClass(object.callee)) object = unwrap(object.arguments[0] as Node);
    if (object?.type === 'ObjectExpression') {
      // node-postgres { text, values }; a Prisma driver adapter's { sql, args }: the keys the driver modules name.
      const keys = this.file.drivers.queryConfig;
      const property = (names: readonly string[]) => names.reduce<TSESTree.Property | undefined>((found, key) => found ?? objectProperty(object as TSESTree.ObjectExpression, key), undefined);
      const text = property(keys.text);
      const name = property(keys.name);
      const valuesProperty = property(keys.values);
      const preparedName = name ? stringValue(name.value as Node) : undefined;
      if (text) {
        const values: ValuesSource | undefined = valuesProperty ? { kind: 'array', node: valuesProperty.value as Node } : this.valuesOf(call, driver);
        return { text: unwrap(text.value as Node)!, on, driver, placeholders, at: call, preparedName, pinnedTo: pinned ? span(arg) : undefined, values };
      }
    }
    return { text: arg, on, driver, placeholders, at: call, values: this.valuesOf(call, driver) };
  }


  /** The values a query call passes after its SQL text: the driver's own way, else an array (or a name of one) after the text. */
  private valuesOf(call: Call, driver: Driver): ValuesSource | undefined {
    const rest = call.arguments.slice(1) as Node[];
    const second = unwrap(rest[0]);
    if (!second) return undefined;
    const own = this.file.drivers.of(driver)?.values?.(call, second, rest);
    if (own) return own === 'none' ? undefined : own;
    if (second.type === 'ArrayExpression' || second.type === 'Identifier' || second.type === 'MemberExpression') return { kind: 'array', node: second };
    return undefined;
  }

  private isQueryClass(callee: Node): boolean {
    const name = dottedName(callee);
    return name !== undefined && this.file.drivers.queryConfig.classes.some((c) => name.endsWith(c));
  }

  protected taggedSite(node: TSESTree.TaggedTemplateExpression): void {
    const tag = unwrap(node.tag);
    if (!tag) return;
    // A tag that sends SQL by its name (prisma.$executeRaw`...`).
    for (const driver of this.file.drivers.models) {
      const query = driver.taggedQuery?.(node, tag, this);
      if (query) {
        this.site(query);
        return;
      }
    }
    const value = this.value(tag);
    if (value?.kind === 'tag' || value?.kind === 'maker' || value?.kind === 'module') return;
    const tagDriver = driverOfValue(value);
    // A pool, connection or transaction that is itself the query tag (postgres.js, Bun, Neon, @vercel/postgres sql`...`).
    if (value && (value.kind === 'pool' || value.kind === 'conn' || value.kind === 'tx') && this.file.drivers.of(tagDriver)?.tagRunsQuery) {
      this.site({ text: node.quasi, tagged: true, on: value, driver: tagDriver!, placeholders: 'dollar', at: node });
      return;
    }
    if (value) return;
    // A tag we cannot resolve that is awaited runs the query (postgres.js style); others may be fragments.
    const imports = this.file.imports;
    const bare = this.file.drivers.models.find((d) => d.bareTagsRunQueries && imports.drivers.includes(d.driver));
    if (tag.type === 'Identifier' && (this.file.awaited.has(node) || bare) && !imports.names.has(tag.name)) {
      this.site({ text: node.quasi, tagged: true, on: undefined, driver: bare?.driver ?? 'unknown', placeholders: 'dollar', at: node });
    }
  }

  /** A loop over constant SQL statements (flow/unroll.ts): walks `body` once per statement, in order; false for any other loop. */
  protected walkedAsSteps(loop: Node, body: () => void): boolean {
    const unrolled = unrolledLoop(loop, this.file.resolveContext);
    if (!unrolled) return false;
    const outer = this.stepBindings;
    try {
      for (const step of unrolled.steps) {
        this.stepBindings = new Map(outer ?? []).set(unrolled.name, step);
        body();
      }
    } finally {
      this.stepBindings = outer;
    }
    return true;
  }

  protected site(query: QueryCall): void {
    let host: HostText | undefined;
    const ctx = this.file.resolveContext;
    if (query.synthesized) host = query.synthesized;
    else if (query.tagged && query.text.type === 'TemplateLiteral') host = templateText(query.text, this.file.text, fragmentReader(ctx, (node) => this.value(node)));
    else host = resolveText(query.text, this.stepBindings ? { ...ctx, bindings: this.stepBindings, caller: ctx } : ctx);
    if (!host) return;
    if (query.pinnedTo) host = { ...host, pinned: query.pinnedTo };
    const extraHoles = this.file.drivers.of(query.driver)?.holes?.(host.text) ?? [];
    const analysis = analyzeHostText(host, query.placeholders, extraHoles);
    // SQL we cannot parse is unknown here, not an error: ESLint has no place for it and the text may not be SQL at all.
    analysis.errors = [];
    const holes = holeExpressions(host, query.text, extraHoles);
    nameHoleTables(analysis, holes, this.file.text, (node) => {
      const value = this.value(node);
      return value?.kind === 'table' ? value.table.name : undefined;
    });
    if (analysis.statements.length === 0) return;
    const placed = this.placement(query.on);
    // Walked at a call for what it does to the caller's connection: its site is the function's own walk's,
    // unless it runs in a transaction the caller holds (helper-calls.ts): then it is the caller's too.
    const adopt = this.options.adopt;
    const adopted =
      adopt &&
      (placed.tx ||
        (adopt.autocommit && placed.scope.kind === 'autocommit') ||
        (adopt.mayBeOpen && query.on?.kind === 'conn' && this.state.atoms(query.on.conn).some((a) => a.kind === 'open')));
    if (this.options.shadow && !adopted) {
      this.transactionEffects(query, analysis);
      return;
    }
    const { connection, tx } = placed;
    const scope = query.scope ?? placed.scope;
    const site: SqlSite = {
      span: host.pinned ?? host.span,
      analysis,
      scope,
      connection,
      driver: query.driver,
    };
    const deploymentValues = [...holes].filter(([, node]) => isDeploymentValue(node, ctx)).map(([n]) => n);
    if (deploymentValues.length > 0) site.deploymentValues = deploymentValues;
    if (this.options.name) site.functionName = this.options.name;
    if (query.preparedName) site.preparedName = query.preparedName;
    if (this.options.callback) site.callback = { ...this.options.callback };
    // A hook run once per new connection: which values are the current request's (it leaves them on the connection).
    if (this.options.callback?.role === 'configure') {
      const importOf = (name: string) => this.file.imports.project.get(name);
      const bound = query.values && query.placeholders !== 'qmark' ? elementsOf(query.values, (node) => constantInit(node, this.file.resolveContext)) : [];
      const nodes: [number, Node | undefined][] = [...bound.map((node, i) => [i + 1, node] as [number, Node | undefined]), ...holes];
      const requestValues = nodes.filter(([, node]) => node && isRequestValue(node, ctx, importOf)).map(([n]) => n);
      if (requestValues.length > 0) site.requestValues = requestValues;
    }
    const runsOn = receiverName(query.at);
    const callbackOf = this.options.callbackOf;
    const parameter = runsOn && callbackOf ? callbackOf.parameters.indexOf(runsOn) : -1;
    if (callbackOf && parameter >= 0) site.runsInCallback = { function: callbackOf.function, argument: callbackOf.argument, parameter };
    const param = query.on?.kind === 'conn' ? query.on.conn.param : query.on?.kind === 'pool' ? query.on.param : undefined;
    if (param && this.state.reachable && (query.on?.kind !== 'conn' || allEntry(this.state.atoms(query.on.conn)))) {
      site.runsOnParameter = { function: { module: this.file.model.file, at: param.fn.range[0] }, parameter: param.index };
    }
    // A receiver the walk cannot tell that is a parameter as the callers hand it in: their connections are its.
    const receiver = connection.kind === 'unknown' ? receiverOf(query.at) : undefined;
    const clientParameter = receiver ? parameterOf(this.env, this.file.model.file, receiver) : undefined;
    if (clientParameter) site.clientParameter = clientParameter;
    const params = hostParams(
      host,
      query.text,
      query.placeholders,
      extraHoles,
      query.values,
      (node) => {
        // A clock offset's amount its callers hand in (`Date.now() + opts.leaseMs`): the number every call in the project passes.
        const constant = (n: Node) => constantInit(n, this.file.valueContext) ?? this.callerLiteral(n);
        const value = classifyValue(node, (name) => this.env.isParameter(name), constant, 0, (name) => this.file.imports.project.get(name)?.typeOnly === false);
        if (value.kind !== 'caller-parameter') return value;
        const fallback = value.name.includes('.')
          ? undefined
          : parameterDefault(this.env, value.name, (n) => {
              const literal = classifyValue(n, () => false, constant);
              return literal.kind === 'literal' && typeof literal.value === 'number' ? literal.value : undefined;
            });
        // Where every call in the project passes one number (`interval '${seconds} seconds'`, `take({ seconds: 300 })`): that number.
        // Asked only of a statement with an interval, where a number can be a length: reading callers costs a pass over the project.
        const passed = fallback === undefined && /interval/i.test(host.text) ? this.callerLiteral(node) : undefined;
        if (passed?.type === 'Literal' && typeof passed.value === 'number') return { ...value, default: passed.value };
        return fallback === undefined ? value : { ...value, default: fallback };
      },
      (node) => constantInit(node, this.file.resolveContext),
    );
    if (params) site.params = params;
    if (runsOn && connection.kind !== 'pool') {
      const resets = finallyResets([...(this.options.outerTries ?? []), ...this.blockTries()], runsOn, this.file.program);
      if (resets.length > 0) site.resetInFinally = resets;
    }
    const into = this.options.adopt?.into ?? this.file;
    const recorded = this.options.adopt ? this.adoptSite(site) : site;
    if (this.options.adopt) (into.model.calledSites ??= []).push(recorded);
    else into.model.sites.push(recorded);
    const meta: SiteMeta = { site: recorded, tx, inTry: [...(this.options.outerTries ?? []), ...this.blockTries()], inHandler: this.handlerTries() };
    if (query.on?.kind === 'conn') meta.mayBeIn = this.state.atoms(query.on.conn).flatMap((a) => (a.kind === 'open' ? [a.tx] : []));
    into.metas.push(meta);
    this.siteEffects(query, recorded);
  }

  /** BEGIN/COMMIT/ROLLBACK in the site's SQL move its connection's state; a claim marks its transaction. */
  /** A number every call of the enclosing function in the project passes for a parameter (or its property) the node reads, as a literal. */
  private callerLiteral(n: Node): Node | undefined {
    if (n.type !== 'Identifier' && n.type !== 'MemberExpression') return undefined;
    const value = callerNumber(this.file.model.file, this.file.program, this.env, n, (this.file.model.dependencies ??= []));
    return value === undefined ? undefined : ({ type: 'Literal', value, raw: String(value), range: n.range, loc: n.loc } as TSESTree.NumberLiteral);
  }

  private siteEffects(query: QueryCall, site: SqlSite): void {
    const tx = this.txOfSite(query.on);
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
      if (site.analysis.statements.some((s) => endsJob(s, claimed))) tx.finishes = true;
    }
    this.transactionEffects(query, site.analysis);
  }

  /** BEGIN, COMMIT, ROLLBACK on a connection. A lone BEGIN that fails opens nothing: its call throws with the state before it. */
  private transactionEffects(query: QueryCall, analysis: SqlAnalysis): void {
    // An untyped parameter of a callback a project function runs (`withClient(async (client) => { BEGIN ... })`): followed as the client it is handed.
    const on = query.on ?? callbackClient(this.throwWalk(), query.at, () => this.file.newConn(this.file.fileDriver, 'pooled-client', 'parameter'));
    if (on?.kind !== 'conn') return;
    if (analysis.statements.length === 1 && analysis.statements[0].transaction === 'begin') this.throwState = this.state.clone();
    for (const statement of analysis.statements) {
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

  /** The transaction a connection or transaction handle is in at this point of the walk. */
  protected scopeOf(on: Value): Scope {
    return this.placement(on).scope;
  }

  /** Where a site runs: its transaction and its connection. */
  protected placement(on: Value | undefined): { scope: Scope; connection: ConnectionUse; tx?: Tx } {
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
        // A parameter a transaction also satisfies: in whatever transaction its callers are.
        return { scope: on.orTx ? { kind: 'unknown' } : { kind: 'autocommit' }, connection: { kind: single ? 'dedicated' : 'pool', configId: on.configId } };
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
  }
}

/** The name a query is sent on: `client` of `client.query(...)`, `sql` of sql`...`. */
function receiverName(at: Node): string | undefined {
  if (at.type === 'TaggedTemplateExpression') return at.tag.type === 'Identifier' ? at.tag.name : undefined;
  if (at.type !== 'CallExpression') return undefined;
  const object = methodOf(at)?.object;
  const receiver = object ? unwrap(object) : undefined;
  return receiver?.type === 'Identifier' ? receiver.name : undefined;
}

function txScope(tx: Tx): Scope {
  return { kind: 'transaction', id: tx.info.id, form: tx.info.form, rollsBackOnError: true };
}
