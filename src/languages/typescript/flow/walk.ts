// The path walk: statements, branches, loops, try/catch/finally, returns and
// throws, nested functions and classes, callbacks run now or later, in source
// order, following each connection's transaction state (flow/state.ts)
// along the paths of the function. Calls are where the driver modules come
// in: a transaction callback, a connection's own method, a query (sites.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver, Scope } from '../../../model/index.ts';
import { typescriptSideEffect } from '../side-effects.ts';
import { callsOutThrough } from './calls-out.ts';
import { callbackArg, children, dottedName, isFunction, memberKeyName, methodOf, patternNames, propertyName, span, unwrap, type Call, type FunctionNode, type Node } from '../syntax.ts';
import { isRequire, THIS, type TryFrame, type WalkOptions } from './bindings.ts';
import { eventHook } from './configs.ts';
import { Env } from './env.ts';
import { booleanLiteral, flagConditions } from './flags.ts';
import { HelperCalls } from './helper-calls.ts';
import type { TsFile } from './file.ts';
import { superArguments } from './super-arguments.ts';
import { State } from './state.ts';
import type { Tx, Value } from './types.ts';
import type { CallbackUse } from '../drivers/model.ts';
import { work } from '../../../work.ts';
import { isWorkCall } from './work-calls.ts';
import { handsTransaction, noteHandlerGoesOn, txsAt } from './jobs.ts';
import { helperTransaction } from './helper-transactions.ts';

export class Walk extends HelperCalls {
  protected child(file: TsFile, env: Env, state: State, options: WalkOptions): Walk {
    return new Walk(file, env, state, options);
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
    work();
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
          const flag = booleanLiteral(d.init);
          if (flag !== undefined && d.id.type === 'Identifier') {
            const key = `${d.id.name}@${d.range[0]}`;
            this.env.flags.set(d.id.name, key);
            this.state.setFlag(key, flag);
          }
        }
        return;
      case 'ReturnStatement':
        if (node.argument) {
          // A returned promise runs when the caller awaits it.
          const returned = unwrap(node.argument);
          if (returned?.type === 'CallExpression' || returned?.type === 'TaggedTemplateExpression') this.file.awaited.add(returned);
          this.expression(node.argument);
          if (this.options.fn && !this.options.shadow) this.file.recordReturn(this.options.fn, this.value(node.argument));
        }
        // A function walked at its call returns to the caller: the caller's try frames are not left.
        for (const frame of this.tries.slice(this.options.inline?.tryBase ?? 0)) frame.returns.push(this.state.clone());
        if (this.state.reachable) this.options.inline?.returns.push(this.state.clone());
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
        const conditions = flagConditions(node.test, this.env);
        for (const [key, value] of conditions.then) this.state.assume(key, value);
        this.statement(node.consequent);
        const afterThen = this.state;
        this.state = before;
        for (const [key, value] of conditions.else) this.state.assume(key, value);
        if (node.alternate) this.statement(node.alternate);
        this.state = State.merge([afterThen, this.state]);
        return;
      }
      case 'ForStatement':
        if (node.init) node.init.type === 'VariableDeclaration' ? this.statement(node.init) : this.expression(node.init);
        if (node.test) this.expression(node.test);
        this.loop(node, () => {
          this.statement(node.body);
          if (node.update) this.expression(node.update);
        });
        return;
      case 'ForInStatement':
      case 'ForOfStatement':
        this.expression(node.right);
        this.loop(node, () => {
          if (node.left.type === 'VariableDeclaration') for (const d of node.left.declarations) this.bindPattern(d.id, undefined);
          this.statement(node.body);
        });
        return;
      case 'WhileStatement':
        this.expression(node.test);
        this.loop(node, () => this.statement(node.body));
        return;
      case 'DoWhileStatement':
        this.loop(node, () => {
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

  private loop(node: Node, body: () => void, atLeastOnce = false): void {
    if (this.walkedAsSteps(node, body)) return;
    // Walked once: a flag the body sets may hold either value when it starts again.
    this.forgetFlags(node);
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
      if (afterHandler.reachable) noteHandlerGoesOn((this.options.adopt?.into ?? this.file).handlerGoesOn, node, this.currentTxs(true));
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
      if (pending.length > 0) this.uncaught(this.state, `,${id},`);
      this.state = this.state.withoutTag(id, normal.reachable);
    } else {
      this.state = State.merge([afterBlock, afterHandler]);
    }
    // Exceptions not caught here go on to the enclosing try (none: they leave the function, see open-on-throw.ts).
    const outer = this.tries[this.tries.length - 1];
    if (outer) outer.throws.push(...pending);
    else if (!node.finalizer) for (const s of pending) this.uncaught(s);
  }

  // ---- functions and classes -------------------------------------------------------

  /** Walks a function declared here. Connections it captures are in an unknown state unless it runs now (a callback argument). */
  nestedFunction(fn: FunctionNode, name: string | undefined, runsNow: boolean, bind?: (walk: Walk) => void, extra: Partial<WalkOptions> = {}): void {
    // A declaration walked already (a call above it walked it): its sites are in the model.
    if (!runsNow && (this.file.walked.has(fn) || this.options.shadow)) {
      this.forgetFlags(fn);
      return;
    }
    this.file.walked.add(fn);
    const hook = this.file.hooks.get(fn);
    const state = this.state.clone();
    if (!runsNow) for (const conn of state.conns.keys()) state.set(conn, { kind: 'unknown' });
    const walk = new Walk(this.file, new Env(this.env, fn), state, {
      name: name ?? this.options.name,
      thisEnv: fn.type === 'ArrowFunctionExpression' ? this.options.thisEnv : extra.thisEnv ?? this.options.thisEnv,
      callbackTxs: extra.callbackTxs ?? (runsNow ? this.options.callbackTxs : []),
      outerTries: extra.outerTries ?? (runsNow ? [...(this.options.outerTries ?? []), ...this.blockTries()] : []),
      arrayTx: extra.arrayTx,
      fn,
      callback: hook ? { configId: hook.configId, role: hook.role } : extra.callback ?? (runsNow ? this.options.callback : undefined),
      paramsOf: runsNow ? this.options.paramsOf ?? this.options.fn : fn,
      callbackOf: extra.callbackOf ?? (runsNow ? this.options.callbackOf : undefined),
      shadow: this.options.shadow,
      ...(this.options.shadowConsumed && { shadowConsumed: this.options.shadowConsumed }),
      inlineStack: this.options.inline?.stack ?? this.options.inlineStack,
    });
    fn.params.forEach((param, index) => {
      const value = walk.parameterValue(param);
      const pattern = param.type === 'TSParameterProperty' ? param.parameter : param;
      // A connection parameter of a function walked on its own: in the state its callers hand it in.
      if (!runsNow && value?.kind === 'conn' && value.conn.origin === 'parameter' && !value.conn.param) {
        value.conn.param = { fn, index };
        walk.state.set(value.conn, { kind: 'unknown', entry: true });
      }
      if (!runsNow && value?.kind === 'pool' && value.orTx) value.param = { fn, index };
      walk.bindPattern(pattern, value);
      // A callback run here gets its arguments from the code that runs it, not from a caller of ours.
      if (!runsNow) for (const id of patternNames(pattern)) walk.env.params.add(id.name);
    });
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
    // It runs now, or at some later time: a flag of ours it sets may hold either value from here on.
    this.forgetFlags(fn);
  }

  private classBody(node: TSESTree.ClassDeclaration | TSESTree.ClassExpression): void {
    const thisEnv = new Map<string, Value | undefined>();
    const members = node.body.body;
    const ctor = members.find((m): m is TSESTree.MethodDefinition => m.type === 'MethodDefinition' && m.kind === 'constructor');
    // `class Db extends PrismaClient`: `this` is the pool the class makes, with the super(...) call's options
    // (recorded here, read back by file.classPool, which also types the class where it names a type).
    const base = node.superClass ? this.value(node.superClass) : undefined;
    if (base?.kind === 'maker' && base.makes === 'pool') {
      this.config(node, base.driver, 'pool', superArguments(ctor));
      thisEnv.set(THIS, this.file.classPool(node, this));
    }
    for (const m of members) {
      if (m.type === 'PropertyDefinition' && m.value && !m.computed) {
        const name = memberKeyName(m);
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
    this.classAccessors(members, thisEnv);
    for (const m of members) {
      if (m.type === 'MethodDefinition' && m.value.type === 'FunctionExpression') {
        const name = memberKeyName(m);
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

  /**
   * The class's methods as functions `this.m(...)` runs (`this.getClient()`
   * returns what the method returns), and its accessors walked first: a getter
   * (`get db() { return this.pool }`) or a method that only returns a value is
   * what `this.db` / `this.getClient()` hold in the other methods, whatever
   * their order. A getter that checks a connection out at each read holds none.
   */
  private classAccessors(members: TSESTree.ClassElement[], thisEnv: Map<string, Value | undefined>): void {
    for (const m of members) {
      if (m.type !== 'MethodDefinition' || m.kind === 'constructor' || m.value.type !== 'FunctionExpression' || m.computed) continue;
      const name = memberKeyName(m);
      if (!name || thisEnv.has(name)) continue;
      const body = m.value.body?.body ?? [];
      const onlyReturns = body.length === 1 && body[0].type === 'ReturnStatement';
      if (onlyReturns) this.nestedFunction(m.value, name, false, undefined, { thisEnv });
      if (m.kind === 'get') {
        const held = onlyReturns ? this.file.returnsOf(m.value, undefined) : undefined;
        if (held && held.kind !== 'conn' && held.kind !== 'tx') thisEnv.set(name, held);
      } else if (m.kind === 'method') {
        thisEnv.set(name, { kind: 'function', node: m.value, owner: this.file, env: undefined });
      }
    }
  }

  // ---- expressions -----------------------------------------------------------------

  expression(node: Node | null | undefined): void {
    if (!node) return;
    work();
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
        if (!this.isConsumed(node)) this.taggedSite(node);
        if (node.tag.type === 'Identifier') this.options.callbackOf?.touched?.add(node.tag.name);
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
          const flag = this.env.flagOf(node.left.name);
          if (flag) this.state.setFlag(flag, node.operator === '=' ? booleanLiteral(node.right) : undefined);
          this.env.assign(node.left.name, this.value(node.right));
        } else if (node.left.type === 'MemberExpression' && unwrap(node.left.object)?.type === 'ThisExpression') {
          const name = propertyName(node.left);
          if (name && this.options.thisEnv && this.value(node.right)) this.options.thisEnv.set(name, this.value(node.right));
        } else {
          if (node.left.type === 'MemberExpression') this.env.assignMember(dottedName(node.left), this.value(node.right));
          // `({ open } = state)`: flags it names may hold anything now.
          for (const id of patternNames(node.left)) {
            const flag = this.env.flagOf(id.name);
            if (flag) this.state.setFlag(flag, undefined);
          }
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
    const hook = eventHook(call, this.file.drivers);
    if (hook) {
      const method = methodOf(call);
      const on = method ? this.value(method.object) : undefined;
      if (on?.kind === 'pool' && on.configId) this.file.registerHook(hook, on.configId, this);
    }
    if (this.transactionCallback(call) || this.helperTransactionCallback(call)) return;
    const query = this.isConsumed(call) ? undefined : this.builderQuery(call) ?? this.queryOf(call);
    // A function called where it is written (`(async () => { ... })()`) runs now, on the connections as they are here.
    const immediate = unwrap(call.callee);
    if (isFunction(immediate)) this.nestedFunction(immediate, this.options.name, true);
    else this.expression(call.callee);
    // Before its callbacks: the callee may BEGIN on the connection before it runs them.
    const handed = query ? [] : this.handedAway(call, !this.options.shadow);
    const callee = call.arguments.some((arg) => isFunction(unwrap(arg))) ? this.value(call.callee) : undefined;
    call.arguments.forEach((arg, index) => {
      const fn = unwrap(arg);
      if (!isFunction(fn)) {
        this.argument(arg);
        return;
      }
      this.handedState(handed, () => {
        if (callee?.kind !== 'function') return this.nestedFunction(fn, this.options.name, true);
        // A callback of a project function: its SQL on its parameters runs where that function runs the callback.
        const parameters = fn.params.map((p) => (p.type === 'Identifier' ? p.name : undefined));
        const callbackOf = { function: { module: callee.owner.model.file, at: callee.node.range[0] }, argument: index, parameters, touched: new Set<string>() };
        this.nestedFunction(fn, this.options.name, true, undefined, { callbackOf });
      });
    });
    if (!this.options.shadow) this.callbackCall(call);
    this.touchCallbackParameters(call);
    let db = false;
    if (query) {
      db = true;
      this.site(query);
    }
    db = this.connectionCall(call) || db;
    // A function of the project handed a connection: what it does to it, walked here (its throws are its own calls').
    const inlined = db ? undefined : this.inline(call);
    if (!db && !inlined?.walked) this.throughCall(call);
    this.afterCall(call, db, !inlined?.walked, inlined?.work ?? true, inlined?.inPlace);
  }

  /** Work and side effects of a call that is not the database's, and the exception it may throw. */
  private afterCall(call: Call | TSESTree.NewExpression, db: boolean, throws = true, work = true, inPlace = false): void {
    // In a function walked at a call in the caller's transaction (helper-calls.ts), its calls are the job's work too.
    if (!db && call.type === 'CallExpression' && (!this.options.shadow || this.options.adopt)) {
      const method = methodOf(call);
      const onDb = method ? this.isDbValue(this.value(method.object)) : false;
      // A call of a chain read as one query (`db.table('jobs')` of `db.table('jobs').where(...).update(...)`) is that query, not work.
      // A function walked here (`throws` false) has its SQL read as the transaction's own: not SQL of the work that may abort it.
      if (work && !onDb && !this.isConsumed(call) && isWorkCall(call, this.file.queryFunctions)) this.markWork(call, throws);
      // Its calls out too, where they are (helper-calls.ts); a call walked so has recorded its own.
      if (!this.options.shadow || this.effectsInPlace()) this.sideEffect(call, inPlace);
    }
    if (throws) this.throwPoint();
  }

  private isDbValue(v: Value | undefined): boolean {
    return !!v && (v.kind === 'pool' || v.kind === 'conn' || v.kind === 'tx' || v.kind === 'builder' || v.kind === 'tag' || v.kind === 'opaque');
  }

  /** The transactions the current point runs in, with a claim seen: callback ones and BEGIN ones. */
  private currentTxs(afterError = false): Tx[] {
    return txsAt(this.state, [...(this.options.callbackTxs ?? []), ...(this.options.arrayTx ? [this.options.arrayTx.tx] : [])], afterError);
  }

  private markWork(call: Call, mayRunSql: boolean): void {
    if (!this.state.reachable) return;
    for (const tx of this.currentTxs()) {
      if (!tx.claim) continue;
      tx.work = true;
      if (mayRunSql && handsTransaction(call.arguments.map((x) => this.value(x as Node)), tx, (c) => this.state.atoms(c))) tx.workOnConnection = true;
      for (const t of [...(this.options.outerTries ?? []), ...this.blockTries()]) tx.tries.add(t);
    }
  }

  private sideEffect(call: Call, walkedInPlace: boolean): void {
    const callee = unwrap(call.callee);
    const name = dottedName(callee);
    if (!name) return;
    const tx = this.currentTxs()[0];
    const scope: Scope = tx ? { kind: 'transaction', id: tx.info.id, form: tx.info.form, rollsBackOnError: true } : { kind: 'unknown' };
    const at = this.options.adopt ? { calledAt: { ...this.options.adopt.call } } : {};
    if (typescriptSideEffect(name)) {
      this.file.model.sideEffects.push({ span: span(call), callee: name, scope, ...at });
      return;
    }
    // One call away: a function of the project that calls out (`await this.notify(job)`, `await postHook(url, body)`).
    if (!tx || !this.state.reachable || walkedInPlace) return;
    const through = callsOutThrough(call, this.value(call.callee), this.file.program);
    if (through) this.file.model.sideEffects.push({ span: span(call), callee: name, scope, through: [name, ...through], ...at });
  }

  protected throwPoint(): void {
    const frame = this.tries[this.tries.length - 1];
    const state = this.throwState ?? this.state;
    this.throwState = undefined;
    if (frame && this.state.reachable) frame.throws.push(state.clone());
    else if (!frame) this.uncaught(state);
  }

  // ---- transactions by callback ----------------------------------------------------

  private transactionCallback(call: Call): boolean {
    const method = methodOf(call);
    if (!method) return false;
    const fn = callbackArg(call);
    const on = this.value(method.object);
    const receiverName = dottedName(method.object) ?? method.name;
    const configId = on && 'configId' in on ? on.configId : undefined;
    let form: string | undefined;
    let driver: Driver = 'unknown';
    let kind: CallbackUse['kind'] = 'tx';
    if (fn) {
      // sql.begin(fn), db.transaction(fn), db.task(fn): as a driver module reads the call.
      const use = this.file.drivers.callback({ method: method.name, on, call, fileDriver: this.file.fileDriver });
      if (!use) return false;
      ({ kind, driver } = use);
      form = use.form ?? `${receiverName}.${method.name}`;
    } else if (on && call.arguments.length > 0 && unwrap(call.arguments[0])?.type === 'ArrayExpression' && this.file.drivers.models.some((d) => d.arrayTransaction?.(method.name, on))) {
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
    if ((kind === 'same-tx' && on?.kind === 'tx') || kind === 'client') {
      // The transaction it is called on; or the client itself, outside any transaction (a Prisma extension's function).
      const given: Value | undefined = kind === 'client' && on?.kind !== 'pool' ? { kind: 'pool', driver, configId } : on;
      this.nestedFunction(fn!, this.options.name, true, (walk) => {
        if (param) walk.bindPattern(param, given);
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
      if (entry && this.file.drivers.of(driver)?.tracksCallbackTransactions && !entry.transactions.some((s) => s.start === call.range[0])) entry.transactions.push(span(call));
      this.nestedFunction(fn!, this.options.name, true, (walk) => {
        if (param) walk.bindPattern(param, { kind: 'tx', driver, tx, configId });
      }, { callbackTxs: [...(this.options.callbackTxs ?? []), tx] });
    }
    this.throwPoint();
    return true;
  }

  /** A callback a project function runs inside a transaction it opened (helper-transactions.ts): walked as a driver's transaction callback. */
  private helperTransactionCallback(call: Call): boolean {
    const index = call.arguments.findIndex((a) => isFunction(unwrap(a)));
    const fn = index >= 0 ? (unwrap(call.arguments[index]) as FunctionNode) : undefined;
    const helper = fn ? helperTransaction(this.value(call.callee), index) : undefined;
    if (!fn || !helper) return false;
    const tx = this.file.txAt(`call@${call.range[0]}`, 'callback', `${dottedName(call.callee) ?? 'helper'}(fn)`, span(call.callee));
    this.expression(call.callee);
    for (const arg of call.arguments) if (unwrap(arg) !== fn) this.argument(arg);
    const param = fn.params[helper.parameter];
    // Still the function's callback: rules that join what it does before the call (a tenant it sets) read runsInCallback.
    const owner = this.value(call.callee) as Extract<Value, { kind: 'function' }>;
    const callbackOf = { function: { module: owner.owner.model.file, at: owner.node.range[0] }, argument: index, parameters: fn.params.map((p) => (p.type === 'Identifier' ? p.name : undefined)), touched: new Set<string>() };
    this.nestedFunction(fn, this.options.name, true, (walk) => {
      if (param) walk.bindPattern(param, { kind: 'tx', driver: helper.driver, tx });
    }, { callbackTxs: [...(this.options.callbackTxs ?? []), tx], callbackOf });
    this.throwPoint();
    return true;
  }

  // ---- calls on connections: BEGIN by method, release ------------------------------

  /** BEGIN by method, COMMIT, release: as the connection's driver module reads them. True when the call is the database's own (not the job's work). */
  private connectionCall(call: Call): boolean {
    const method = methodOf(call);
    if (!method) return false;
    const on = this.value(method.object);
    if (on?.kind !== 'conn') return this.isDbValue(on);
    this.file.drivers.connectionMethod(on.conn, method.name, call, this);
    return true;
  }
}
