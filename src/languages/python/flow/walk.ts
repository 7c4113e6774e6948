// Paths through a body: statements in order, branches (if, match), loops,
// try/except/else/finally, returns and raises, `with` blocks (a connection,
// a transaction block, a @contextmanager of the file walked up to its
// yield), assignments. Each connection's flow (flow/scopes.ts) is copied at
// a fork and merged where paths meet.
import { CONNECTION_ATTRIBUTES, ORMS, instanceOrm, opensOnNewConnection, transactionBlockOf } from '../drivers/index.ts';
import { callParts, childNamed, children, dottedName, methodCall, unwrap, type Node } from '../syntax.ts';
import type { WalkInfo } from './bindings.ts';
import { CallWalk, type Instance } from './calls.ts';
import { bodyStatements, defName, isContextManager, literalBool, withItems } from './defs.ts';
import { copyFlow, ended, enterTransaction, leaveTransaction, mergeFlows, noteEnd, scopeOf } from './scopes.ts';
import type { Binding, Conn, Flow } from './types.ts';
import type { EngineFile } from './engine-file.ts';
import { work } from '../../../work.ts';
import { yieldedConnection } from './generators.ts';

/** The yield a statement is: `yield x` on its own, or as the expression of an expression statement. */
function yieldOf(statement: Node): Node | null {
  if (statement.name === 'YieldStatement') return statement;
  if (statement.name !== 'ExpressionStatement') return null;
  // Not getChild(): every statement of every walked body asks.
  return childNamed(statement, 'YieldExpression');
}

export class Walk extends CallWalk {
  /**
   * Walking a @contextmanager at a `with`: stop at its first yield and keep
   * what it yields (a connection, or a row it read), and the ends of its own
   * `with` blocks around the yield, which run when the caller's block ends.
   */
  yieldCapture?: { binding?: Binding; flow?: Flow; instance?: Instance; exits?: (() => void)[] };
  /** The walk stopped at the yield it was looking for. */
  suspended = false;

  protected child(info: WalkInfo, file: EngineFile = this.file): Walk {
    return new Walk(file, info);
  }

  walkBlock(statements: Node[]): void {
    for (const statement of statements) {
      if (this.dead || this.suspended) return;
      if (this.yieldCapture && this.captureYield(statement)) return;
      if (!this.yieldCapture) this.handOut(statement);
      this.walkStatement(statement);
    }
  }

  /** `yield conn` in a @contextmanager: what the caller's `with ... as conn` gets, and its state there. */
  private captureYield(statement: Node): boolean {
    const yieldNode = yieldOf(statement);
    if (!yieldNode) return false;
    const value = children(yieldNode).find((c) => c.name !== 'yield');
    this.walkExpression(yieldNode);
    const binding = value ? this.valueBinding(value, false) : undefined;
    // yield Job.objects.select_for_update().get(...): the caller's `as` gets the row.
    const expr = value ? unwrap(value) : undefined;
    const read = expr?.name === 'CallExpression' ? instanceOrm(this.file)?.readInstance(this, expr) : undefined;
    const instance = read ? { ...read.built.returnsInstance!, assigned: new Map(), conn: read.conn } : undefined;
    this.yieldCapture = { binding, instance, flow: binding && (binding.kind === 'conn' || binding.kind === 'cursor') ? copyFlow(binding.conn.flow) : undefined };
    this.suspended = true;
    this.dead = true;
    return true;
  }

  /**
   * `yield session` in a generator walked on its own (a FastAPI dependency,
   * an @asynccontextmanager called from another module): the caller gets the
   * connection with its transaction open and may commit it, so a rollback
   * after the yield does not settle what was written before it.
   */
  private handOut(statement: Node): void {
    const yieldNode = yieldOf(statement);
    const value = yieldNode ? unwrap(children(yieldNode).find((c) => c.name !== 'yield')) : undefined;
    const name = value ? dottedName(value, this.text) : undefined;
    const binding = name ? this.lookup(name) : undefined;
    if ((binding?.kind === 'conn' || binding?.kind === 'cursor') && binding.conn.flow.dirty !== false) noteEnd(binding.conn, 'unknown');
  }

  private walkStatement(node: Node): void {
    work();
    switch (node.name) {
      case 'ClassDefinition':
        // Module code runs a class body at import: calls in it (a migration's operations = [RunSQL(...)]).
        if (!this.info.def) this.walkClassBodyCalls(node);
        return;
      case 'FunctionDefinition':
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
        // Leaving the function leaves its `with` blocks: each ends its connection's transaction its way.
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
      case 'UpdateStatement':
        return this.walkUpdate(node);
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
    // letters = Letter.objects.select_for_update()... bound before `with transaction.atomic():`, then
    // `for letter in letters:` inside it: the query runs (and locks) at the loop, in the transaction.
    const source = node.name === 'ForStatement' && inAt > 0 ? unwrap(parts[inAt + 1]) : undefined;
    const kept = source?.name === 'VariableName' ? this.file.localValue(source) : undefined;
    if (kept && ORMS.some((o) => o.lazyQuery?.(this, kept))) this.walkExpression(kept);
    if (loopTarget?.name === 'VariableName' && parts[inAt + 1]) {
      const name = this.text.slice(loopTarget.from, loopTarget.to);
      // `async for session in get_session():` with `-> AsyncGenerator[AsyncSession, None]`: a Session handed in.
      const iterable = unwrap(parts[inAt + 1]);
      const driver = iterable ? yieldedConnection(this.file, iterable) : undefined;
      if (driver) this.env.set(name, { kind: 'conn', conn: this.handedInConn(driver.name, loopTarget) });
      else this.bindInstance(name, parts[inAt + 1], true);
    }
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
      const firstSite = this.file.metas.length;
      this.walkBlock(bodyStatements(handler));
      this.handler = outer;
      if (!this.dead) {
        this.markHandlerGoesOn(firstSite, node.from);
        outs.push(this.snapshot());
      }
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

  /** The calls of a class body's statements, its defs aside; names it binds are the class's, not the module's. */
  private walkClassBodyCalls(node: Node): void {
    const body = childNamed(node, 'Body');
    if (!body) return;
    for (const statement of bodyStatements(body)) {
      if (statement.name === 'ClassDefinition') this.walkClassBodyCalls(statement);
      else if (statement.name !== 'FunctionDefinition' && statement.name !== 'DecoratedStatement') this.walkExpression(statement);
    }
  }

  /** The handler's sites whose transaction is still the same one where the handler falls through. */
  private markHandlerGoesOn(firstSite: number, tryAt: number): void {
    for (const meta of this.file.metas.slice(firstSite)) {
      if (meta.inHandler !== tryAt || !meta.conn || meta.site.scope.kind !== 'transaction') continue;
      const now = scopeOf(meta.conn, this.file.model.file);
      if (now.kind === 'transaction' && now.id === meta.site.scope.id) meta.handlerGoesOn = true;
    }
  }

  private walkWith(node: Node): void {
    const exits: (() => void)[] = [];
    for (const item of withItems(node)) {
      this.walkExpressionCalls(item.expr, true);
      const target = item.target ? dottedName(item.target, this.text) : undefined;
      const expr = unwrap(item.expr);
      const method = expr ? methodCall(expr, this.text) : undefined;
      // A transaction block: `with conn.transaction():`, `with session.begin():`, `with conn.begin_nested():`.
      const block = method ? transactionBlockOf(method.method, this.file.driverOfFile) : undefined;
      if (method && block) {
        const receiverText = this.text.slice(method.object.from, method.object.to);
        const object = this.receiver(method.object, true);
        // aiopg's `async with cur.begin():` is a transaction of the cursor's connection.
        if (object?.kind === 'conn' || (object?.kind === 'cursor' && block.onCursor)) {
          const { savepoint } = enterTransaction(object.conn, this.file.model.file, block.form ?? `\`with ${receiverText}.${method.method}()\``);
          this.contexts.push(object.conn);
          exits.push(() => {
            this.flushIfUnitOfWork(object.conn);
            leaveTransaction(object.conn, savepoint);
            this.contexts.pop();
          });
          continue;
        }
        const owner = object?.kind === 'factory' || object?.kind === 'pool' ? object.driver : undefined;
        if (owner && opensOnNewConnection(owner, method.method)) {
          // with engine.begin() as conn:  with SessionLocal.begin() as session:  a new connection in a transaction that commits at the end.
          const made = this.valueBinding(item.expr, true);
          if (made?.kind === 'conn') {
            const conn = made.conn;
            enterTransaction(conn, this.file.model.file, `\`with ${receiverText}.${method.method}()\``);
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
      // A driver's own transaction block: `with transaction.atomic():`.
      const driverBlock = this.driverTransactionBlock(item.expr);
      if (driverBlock) {
        const { conn, form } = driverBlock;
        const { savepoint } = enterTransaction(conn, this.file.model.file, form);
        this.contexts.push(conn);
        exits.push(() => {
          leaveTransaction(conn, savepoint);
          this.contexts.pop();
        });
        continue;
      }
      const entered = this.contextManager(item.expr);
      const managed = entered?.binding;
      if (entered) exits.push(...entered.exits);
      if (entered?.instance && target) {
        this.instances.set(target, entered.instance);
        continue;
      }
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
    const body = childNamed(node, 'Body');
    if (body) this.walkBlock(bodyStatements(body));
    // Stopped at the yield of a @contextmanager: its blocks end where the caller's `with` does.
    if (this.suspended && this.yieldCapture) {
      (this.yieldCapture.exits ??= []).push(...exits.reverse());
      return;
    }
    const dead = this.dead;
    this.dead = false;
    for (const exit of exits.reverse()) exit();
    this.dead = dead;
  }

  private driverTransactionBlock(expr: Node): { conn: Conn; form: string } | undefined {
    for (const driver of this.file.drivers) {
      const block = driver.transactionBlock?.(expr, this);
      if (block) return block;
    }
    return undefined;
  }

  /**
   * `with tenant_connection(t) as conn:` where tenant_connection is a
   * @contextmanager of this file: walk it up to its yield, here, and bind
   * what it yields, in the state it yields it.
   */
  private contextManager(node: Node): { binding?: Binding; instance?: Instance; exits: (() => void)[] } | undefined {
    const call = callParts(node, this.text);
    if (!call || this.stack.length > 4) return undefined;
    const def = this.file.resolveDef(call.callee, node);
    if (!def || def.name !== 'FunctionDefinition' || this.stack.includes(def.from) || !isContextManager(def, this.text)) return undefined;
    this.file.walkedAtCall.add(def.from);
    const walk = new Walk(this.file, { name: defName(def, this.text), className: this.file.classOfDef.get(def.from), def, parent: this });
    walk.yieldCapture = {};
    // The connections a driver keeps per thread (Django's, by alias): the manager's code runs on the caller's.
    for (const [key, binding] of this.env) if (binding.kind === 'conn' && binding.conn.shared && !/^\w+$/.test(key)) walk.env.set(key, binding);
    const bindings = (value: Node): Binding | undefined => {
      const name = dottedName(unwrap(value), this.text);
      return name ? this.lookup(name) : undefined;
    };
    walk.bindParameters(def, call.args, call.callee.name === 'MemberExpression', undefined, bindings);
    walk.walkBlock(bodyStatements(def));
    for (const conn of walk.conns) this.conns.add(conn);
    const captured = walk.yieldCapture;
    const exits = captured?.exits ?? [];
    if (!captured?.binding || captured.binding.kind === 'pool' || captured.binding.kind === 'factory' || !captured.flow) {
      return captured?.instance || exits.length > 0 ? { instance: captured?.instance, exits } : undefined;
    }
    // A yielded connection carries its state at the yield; its blocks' ends are read as before, at the yield.
    walk.runExits(exits);
    captured.binding.conn.flow = copyFlow(captured.flow);
    return { binding: captured.binding, exits: [] };
  }

  private runExits(exits: (() => void)[]): void {
    const dead = this.dead;
    this.dead = false;
    for (const exit of exits) exit();
    this.dead = dead;
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
        // `conn.autocommit = True` (the DB-API's), or an attribute a driver reads (`conn.prepare_threshold = None`).
        const attribute = CONNECTION_ATTRIBUTES.get(property);
        if (property === 'autocommit' || attribute) {
          const object = this.receiver(target.firstChild!, true);
          if (object?.kind === 'conn') {
            if (property === 'autocommit') object.conn.flow.autocommit = literalBool(value, this.text);
            else attribute!(this, object.conn, value);
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

  /** `job.attempts += 1` on an instance: the column written from itself (`attempts = attempts + 1`), as the flush sends it. */
  private walkUpdate(node: Node): void {
    this.walkExpression(node);
    const [target, op, value] = children(node);
    const operator = op?.name === 'UpdateOp' ? this.text.slice(op.from, op.to) : '';
    const name = target?.name === 'MemberExpression' ? dottedName(target, this.text) : undefined;
    if (!name || !value || (operator !== '+=' && operator !== '-=')) return;
    const instance = this.instances.get(name.slice(0, name.lastIndexOf('.')));
    if (instance) this.instanceWrite(instance, name.slice(name.lastIndexOf('.') + 1), value, target, operator[0] as '+' | '-');
  }

  /** `job = <a query that reads one row of a model>`: job is an instance the code can save or delete. */
  private bindInstance(name: string, value: Node, loop = false): void {
    let expr = unwrap(value);
    // for job in jobs, where jobs = <the rows of a read>: each job is a row of it, with its own writes.
    const rows = loop && expr?.name === 'VariableName' ? this.instances.get(this.text.slice(expr.from, expr.to)) : undefined;
    this.instances.delete(name);
    if (rows) {
      this.instances.set(name, { ...rows, assigned: new Map(), pending: undefined });
      return;
    }
    // list(qs), tuple(qs): the rows of the queryset, read at once.
    if (expr?.name === 'CallExpression' && /^(list|tuple)$/.test(this.text.slice(expr.firstChild!.from, expr.firstChild!.to))) {
      const args = expr.lastChild?.name === 'ArgList' ? children(expr.lastChild).filter((c) => !['(', ')', ','].includes(c.name)) : [];
      if (args.length === 1) expr = unwrap(args[0]);
    }
    // qs[:10], qs[0]: rows of the queryset.
    if (expr?.name === 'MemberExpression' && expr.lastChild?.name === ']') expr = unwrap(expr.firstChild);
    // list(rows), rows[:5] with rows a read this walk knows: the same rows, under another name.
    const same = expr?.name === 'VariableName' && expr !== unwrap(value) ? this.instances.get(this.text.slice(expr.from, expr.to)) : undefined;
    if (same) {
      this.instances.set(name, { ...same, assigned: new Map(), pending: undefined });
      return;
    }
    if (!expr || expr.name !== 'CallExpression') return;
    const read = instanceOrm(this.file)?.readInstance(this, expr);
    if (!read) return;
    this.instances.set(name, { ...read.built.returnsInstance!, assigned: new Map(), conn: read.conn });
  }

  /** `job.status = "done"`: kept for save() where the ORM writes at save; else written at the session's next flush. */
  private instanceWrite(instance: Instance, column: string, value: Node, target: Node, from?: '+' | '-'): void {
    if (instanceOrm(this.file)?.writesAtSave) {
      // Django's save() writes the value Python computed; `+=` there is not read (left as before).
      if (!from) instance.assigned?.set(column, value);
      return;
    }
    instance.pending ??= new Map();
    instance.pending.set(column, { value, at: target, ...(from ? { from } : {}) });
    if (instance.conn) this.dirtyInstances.add(instance);
  }
}
