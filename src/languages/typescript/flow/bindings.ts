// Bindings and values for the walk: what a name or an expression holds
// (a pool, a connection, a transaction handle, a function of the project),
// made once per node; and the services the driver modules call at the calls
// they read (drivers/model.ts's DriverContext). What a driver's member, method
// or maker gives is its module's answer; this file names no driver.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver, FunctionRef, SqlSite } from '../../../model/index.ts';
import type { PlaceholderStyle } from '../../../sql/index.ts';
import type { DriverContext } from '../drivers/model.ts';
import { children, dottedName, isFunction, objectProperty, patternNames, propertyName, span, unwrap, type Call, type FunctionNode, type Node } from '../syntax.ts';
import { makeConfig, optionHooks } from './configs.ts';
import type { Env } from './env.ts';
import { MAX_REUSE_READS, type TsFile } from './file.ts';
import { handleMadeOf, type Adoption } from './adoption.ts';
import { reuseOf } from './pool-facts.ts';
import { destructured, heldBy, typedObject } from './handed-objects.ts';
import { injected, openerAround, type Bound } from './receivers.ts';
import type { State } from './state.ts';
import { driverOfValue, type ConfigEntry, type Conn, type QueryCall, type TableValue, type Tx, type Value } from './types.ts';

/** The key of `this` itself in a class's thisEnv: no property name has a space. */
export const THIS = ' this';

export interface WalkOptions {
  name: string | undefined;
  /** What `this.x` holds in a class's methods; under THIS, what `this` itself is (a class that extends a driver's pool). */
  thisEnv?: Map<string, Value | undefined>;
  callbackTxs?: Tx[];
  outerTries?: TSESTree.TryStatement[];
  /** `$transaction([...])`: calls on this value run in that transaction. */
  arrayTx?: { on: Value; tx: Tx };
  /** The function being walked (its returns are recorded). */
  fn?: FunctionNode;
  /** The walk is inside a pool's hook: its sites run on each connection the pool sets up. */
  callback?: SqlSite['callback'];
  /** The function whose parameters a call here may run: the walked function, or for a callback run now, the function it runs in. */
  paramsOf?: FunctionNode;
  /** The walk is in a function passed to a call of a project function: which one, as which argument, and its parameters' names. */
  callbackOf?: { function: FunctionRef; argument: number; parameters: (string | undefined)[]; touched?: Set<string> };
  /**
   * A walk of a function of the file at a call that hands it a connection, for
   * what it does to that connection (BEGIN, COMMIT, release): it records no
   * site (the function's own walk did), only releases and the state it leaves.
   */
  shadow?: boolean;
  /** That walk runs at a call that hands it the caller's transaction: its SQL in it is the caller's (helper-calls.ts). */
  adopt?: Adoption;
  /** That walk's returns (they go back to the call) and the try frames below `tryBase` (the caller's). */
  inline?: { returns: State[]; tryBase: number; stack: FunctionNode[] };
  /**
   * The calls a shadow walk has read as part of a query: its own, so that the
   * function's own walk and every other call's walk of it read each query again.
   */
  shadowConsumed?: WeakSet<Node>;
  /** The functions being inlined around a nested function's walk (a callback inside an inlined function): the depth bound holds across them. */
  inlineStack?: FunctionNode[];
}

export interface TryFrame {
  node: TSESTree.TryStatement;
  phase: 'block' | 'handler';
  throws: State[];
  returns: State[];
}

export abstract class Bindings implements DriverContext {
  protected tries: TryFrame[] = [];
  protected loops: State[][] = [];

  constructor(
    readonly file: TsFile,
    readonly env: Env,
    public state: State,
    readonly options: WalkOptions,
  ) {}

  // ---- what the driver modules may ask -------------------------------------------

  get imports() {
    return this.file.imports;
  }

  get fileDriver(): Driver {
    return this.file.fileDriver;
  }

  get text(): string {
    return this.file.text;
  }

  checkout(driver: Driver, use: Conn['use'], origin: Conn['origin'], configId?: string): Value {
    return this.conn(this.file.newConn(driver, use, origin, configId));
  }

  newConn(driver: Driver, use: Conn['use'], origin: Conn['origin'], configId?: string): Conn {
    return this.file.newConn(driver, use, origin, configId);
  }

  begin(conn: Conn, at: Node, form: string): void {
    const tx = this.file.txAt(`begin@${at.range[0]}`, 'flow', form, span(at));
    this.state.set(conn, { kind: 'open', tx, error: false });
  }

  end(conn: Conn): void {
    this.state.set(conn, { kind: 'none' });
  }

  abstract release(conn: Conn, call: Call): void;
  abstract textArg(arg: Node, on: Value | undefined, driver: Driver, placeholders: PlaceholderStyle, call: Call): QueryCall;
  abstract taggedArg(tagged: TSESTree.TaggedTemplateExpression, on: Value | undefined, driver: Driver, call: Call): QueryCall;

  txAt(key: string, kind: Tx['kind'], form: string, at: { start: number; end: number }): Tx {
    return this.file.txAt(key, kind, form, at);
  }

  consume(node: Node): void {
    (this.options.shadowConsumed ?? this.file.consumed).add(node);
  }

  /** A node a query of this walk already took in as part of it. */
  protected isConsumed(node: Node): boolean {
    return (this.options.shadowConsumed ?? this.file.consumed).has(node);
  }

  addTable(node: Node, table: TableValue): void {
    this.file.tables.push({ node, table });
  }

  tableAround(node: Node): TableValue | undefined {
    return this.file.tables.find((t) => t.node.range[0] < node.range[0] && node.range[1] <= t.node.range[1])?.table;
  }

  awaited(node: Node): boolean {
    return this.file.awaited.has(node);
  }

  importedUnread(node: Node): boolean {
    const n = unwrap(node);
    if (n?.type !== 'Identifier' || this.env.lookup(n.name).found) return false;
    const entry = this.file.imports.project.get(n.name);
    return entry !== undefined && !entry.typeOnly && !this.file.imports.names.has(n.name) && this.file.module(entry.specifier) === undefined;
  }

  injected(node: Node): boolean {
    return injected(this.file.program, node);
  }

  openerAround(receiver: Node, at: Node): { method: string; bound: Bound } | undefined {
    const opener = openerAround(this.file.program, at, receiver);
    if (!opener) return undefined;
    const use = this.file.drivers.callback({ method: opener.method, on: this.value(opener.object), call: opener.call, fileDriver: this.file.fileDriver });
    return use?.kind === 'tx' ? { method: opener.method, bound: opener.bound } : undefined;
  }

  unsetHere(node: Node): boolean {
    const id = unwrap(node);
    const body = this.options.fn?.body;
    if (id?.type !== 'Identifier' || !body) return false;
    let empty = false;
    let set = false;
    const visit = (n: Node, nested: boolean): void => {
      if (!nested && n.type === 'VariableDeclarator' && n.id.type === 'Identifier' && n.id.name === id.name) {
        const init = n.init ? unwrap(n.init) : undefined;
        if (!init || (init.type === 'Literal' && (init.value === null || init.value === false)) || (init.type === 'Identifier' && init.name === 'undefined')) empty = true;
        else set = true;
      }
      if (!nested && (n.type === 'AssignmentExpression' || n.type === 'UpdateExpression')) {
        const target = n.type === 'AssignmentExpression' ? n.left : n.argument;
        if (patternNames(target).some((p) => p.name === id.name)) set = true;
      }
      for (const c of children(n)) visit(c, nested || isFunction(c));
    };
    visit(body, false);
    return empty && !set;
  }

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
  protected bindRequire(pattern: Node): void {
    for (const id of patternNames(pattern)) this.env.vars.set(id.name, this.file.imports.names.get(id.name) ?? this.file.importedValue(id.name));
  }

  lookup(name: string): Value | undefined {
    const local = this.env.lookup(name);
    if (local.found) return local.value;
    const imported = this.file.imports.names.get(name) ?? this.file.importedValue(name);
    if (imported) return imported;
    // A runtime's global (Bun's `Bun`).
    return this.file.drivers.global(name);
  }

  /** `object.name` of a value the walk holds: a namespace's export, or what its driver says the member is. */
  protected memberValue(object: Value | undefined, name: string): Value | undefined {
    if (!object) return undefined;
    if (object.kind === 'namespace') return object.member(name);
    for (const driver of this.file.drivers.modelsFor(driverOfValue(object))) {
      const member = driver.member?.(object, name);
      if (member) return member;
    }
    return undefined;
  }

  /** What an expression holds, when it is a driver value. Makes pools, configs and connections once per node. */
  value(node: Node | null | undefined): Value | undefined {
    const n = unwrap(node);
    if (!n) return undefined;
    switch (n.type) {
      case 'Identifier':
        return this.lookup(n.name);
      case 'ThisExpression':
        return this.options.thisEnv?.get(THIS);
      case 'MemberExpression': {
        const name = propertyName(n);
        if (name === undefined) return undefined;
        if (unwrap(n.object)?.type === 'ThisExpression') return this.options.thisEnv?.get(name);
        const path = dottedName(n);
        const assigned = path === undefined ? undefined : this.env.member(path);
        if (assigned?.found) return assigned.value;
        return this.memberValue(this.value(n.object), name);
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
        if (this.options.adopt && n.type === 'CallExpression' && handleMadeOf(this.file.made, n)) return this.options.adopt.made(n, () => this.make(n));
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
      // f(...), ns.f(...), and this.m(...) of a method of the class (its returns, recorded when it was walked).
      const onThis = callee.type === 'MemberExpression' && unwrap(callee.object)?.type === 'ThisExpression';
      const fn = callee.type === 'Identifier' || onThis || (callee.type === 'MemberExpression' && this.value(callee.object)?.kind === 'namespace') ? this.value(callee) : undefined;
      if (fn?.kind === 'function') return this.callResult(fn, n);
    }
    if (n.type === 'CallExpression' && callee.type === 'MemberExpression') {
      const method = propertyName(callee);
      const on = this.value(callee.object);
      if (method === undefined) return undefined;
      if (!on) return this.file.drivers.methodOfUnknown(method, n, this);
      for (const driver of this.file.drivers.modelsFor(driverOfValue(on))) {
        const made = driver.method?.(on, method, n, this);
        if (made) return made;
      }
      return undefined;
    }
    const maker = this.value(callee);
    if (maker?.kind !== 'maker') return undefined;
    const model = this.file.drivers.of(maker.driver);
    if (maker.makes === 'client') {
      const entry = this.config(n, maker.driver, 'client', n.arguments);
      return this.conn(this.file.newConn(maker.driver, 'dedicated', 'new-client', entry.config.id));
    }
    if (maker.makes !== 'pool') return model?.make?.(maker, n, this);
    // drizzle(pool), new Kysely({ dialect: new PostgresDialect({ pool }) }), new PrismaClient({ adapter }):
    // they run on the pool they wrap, with its config (its connect hooks, its reuse).
    const wrapped = model?.wrapsPool ? this.wrappedPool(n.arguments) : undefined;
    if (wrapped) {
      for (const hook of optionHooks(maker.driver, this.optionArguments(n.arguments), this.file.drivers)) this.file.registerHook(hook, wrapped, this);
      return { kind: 'pool', driver: maker.driver, configId: wrapped };
    }
    const entry = this.config(n, maker.driver, 'pool', n.arguments);
    return { kind: 'pool', driver: maker.driver, configId: entry.config.id };
  }

  /** The config of a pool an ORM is made over: `drizzle(pool)`, `{ client: pool }`, `{ dialect: new PostgresDialect({ pool }) }`, `{ adapter }`. */
  wrappedPool(args: readonly TSESTree.CallExpressionArgument[], depth = 0): string | undefined {
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
      if ((value?.kind === 'pool' || value?.kind === 'adapter') && value.configId) return value.configId;
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
    const perCall = returned.kind === 'pool' ? this.poolPerCall(fn, returned, call) : undefined;
    if (perCall) return perCall;
    return fn.owner === this.file ? returned : this.file.adopt(returned, fn.owner as TsFile, span(call.callee));
  }

  /**
   * The options of a maker's call, with a call of a helper of this file
   * (`Knex(this.configFor(tenantId))`, `new Pool(poolOptions(url))`) read as
   * the object literal it returns: the helper's hooks are the pool's hooks.
   */
  optionArguments(args: readonly TSESTree.CallExpressionArgument[]): TSESTree.CallExpressionArgument[] {
    return args.map((arg) => {
      const call = unwrap(arg as Node);
      if (call?.type !== 'CallExpression') return arg;
      const fn = this.helperOf(call);
      const returned = fn ? returnedObject(fn) : undefined;
      return returned ?? arg;
    });
  }

  /** The function of this file a call runs: a function the walk knows by name, or `this.method(...)` of the enclosing class. */
  protected helperOf(call: TSESTree.CallExpression): FunctionNode | undefined {
    const callee = unwrap(call.callee);
    if (!callee) return undefined;
    if (callee.type === 'MemberExpression' && unwrap(callee.object)?.type === 'ThisExpression') {
      const member = thisMember(this.file.program, call);
      return member?.method ? member.fn : undefined;
    }
    const value = this.value(callee);
    return value?.kind === 'function' && value.owner === this.file ? value.node : undefined;
  }

  /**
   * A pool the function makes at each call (`createClient()` returning
   * `postgres(url, { max: 1 })`), here or in another module: each call is a
   * maker of its own pool, whose reuse is read where the call is kept and ended.
   */
  private poolPerCall(fn: Extract<Value, { kind: 'function' }>, returned: Extract<Value, { kind: 'pool' }>, call: Call): Value | undefined {
    const owner = fn.owner as TsFile;
    const entry = returned.configId ? owner.configById(returned.configId) : undefined;
    if (!entry || entry.imported) return undefined;
    const made = entry.config.span;
    if (made.start < fn.node.range[0] || made.end > fn.node.range[1]) return undefined;
    const node = call as TSESTree.CallExpression;
    const id = `${this.file.model.file}#${entry.config.driver}@${node.range[0]}`;
    if (!this.file.configById(id)) {
      const reuse = this.file.configs.length <= MAX_REUSE_READS ? reuseOf(node, 'pool', [], this.file.program, this.file.functions, entry.oneConnection === true) : undefined;
      this.file.adoptMade(entry, owner, span(node), id, reuse);
    }
    return { ...returned, configId: id };
  }

  config(node: Node, driver: Driver, kind: 'pool' | 'client', given: readonly TSESTree.CallExpressionArgument[]): ConfigEntry {
    let entry = this.file.configByNode.get(node);
    if (!entry) {
      const args = this.optionArguments(given);
      entry = makeConfig(this.file.model.file, node, driver, kind, args, this.file.drivers);
      this.file.configByNode.set(node, entry);
      this.file.configs.push(entry);
      const hooks = optionHooks(driver, args, this.file.drivers);
      // Reading how a pool is kept costs a look through its scope: the first pools of a file only (a file of thousands is generated code).
      if ((node.type === 'NewExpression' || node.type === 'CallExpression') && this.file.configs.length <= MAX_REUSE_READS) {
        const reuse = reuseOf(node, kind, hooks, this.file.program, this.file.functions);
        if (reuse) entry.config.reuse = reuse;
      }
      for (const hook of hooks) this.file.registerHook(hook, entry.config.id, this);
    }
    return entry;
  }

  protected conn(conn: Conn): Value {
    this.state.set(conn, { kind: 'none' });
    return { kind: 'conn', conn };
  }

  /** The value of a parameter from its type annotation. */
  parameterValue(param: Node): Value | undefined {
    const target = param.type === 'TSParameterProperty' ? param.parameter : param;
    const annotation = (target.type === 'AssignmentPattern' ? target.left : target) as { typeAnnotation?: TSESTree.TSTypeAnnotation };
    const type = annotation.typeAnnotation?.typeAnnotation;
    if (!type) return this.file.runnerParameter(target);
    // `{ client }: { client: PoolClient }`: the properties its type gives a connection.
    if (target.type === 'ObjectPattern') return typedObject(type, this.file.program, (t) => this.typedValue(t, param));
    return this.typedValue(type, param);
  }

  /** What a parameter (or a property of one) typed `type` holds. */
  private typedValue(type: TSESTree.TypeNode, param: Node): Value | undefined {
    const known = this.file.typeMeaning(type, this);
    if (!known) return undefined;
    // `typeof db`: the value itself (a pool, most often).
    if ('kind' in known) return known.kind === 'pool' || known.kind === 'opaque' ? known : undefined;
    const label = type?.type === 'TSTypeReference' ? (type.typeName.type === 'Identifier' ? type.typeName.name : type.typeName.type === 'TSQualifiedName' ? type.typeName.right.name : 'typed') : 'typed';
    switch (known.what) {
      case 'pool':
        return known.orTx ? { kind: 'pool', driver: known.driver, orTx: true } : { kind: 'pool', driver: known.driver };
      case 'tx': {
        const tx = this.file.txAt(`param@${param.range[0]}`, 'callback', `${label} parameter`, span(param));
        return { kind: 'tx', driver: known.driver, tx };
      }
      case 'checked-out':
      case 'client': {
        const conn = this.file.newConn(known.driver, known.what === 'client' ? 'dedicated' : 'pooled-client', 'parameter');
        this.state.set(conn, { kind: 'unknown' });
        return { kind: 'conn', conn };
      }
      default:
        return undefined;
    }
  }


  bindPattern(pattern: Node, value: Value | undefined): void {
    if (pattern.type === 'Identifier') {
      if (this.env.vars.has(pattern.name)) this.env.rebound.add(pattern.name);
      this.env.vars.set(pattern.name, value);
      this.env.flags.delete(pattern.name);
      return;
    }
    // An object handed in at an inlined call (`({ client }) => ...`): its names get what the literal gave them.
    const given = pattern.type === 'ObjectPattern' && value?.kind === 'namespace' && heldBy(value).length > 0 ? destructured(pattern, value) : undefined;
    // `const { manager } = queryRunner`: each name what `queryRunner.manager` is.
    const members = !given && pattern.type === 'ObjectPattern' && value && value.kind !== 'namespace' ? this.destructuredMembers(pattern, value) : undefined;
    for (const id of patternNames(pattern)) {
      if (this.env.vars.has(id.name)) this.env.rebound.add(id.name);
      this.env.vars.set(id.name, given?.get(id.name) ?? members?.get(id.name));
      this.env.flags.delete(id.name);
    }
  }

  /** The names an object pattern takes straight from a driver value's members (`{ manager }`, `{ manager: m }`), by the driver's say. */
  private destructuredMembers(pattern: TSESTree.ObjectPattern, value: Value): Map<string, Value> {
    const out = new Map<string, Value>();
    for (const p of pattern.properties) {
      if (p.type !== 'Property' || p.computed) continue;
      const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' && typeof p.key.value === 'string' ? p.key.value : undefined;
      const target = p.value.type === 'Identifier' ? p.value : undefined;
      if (key === undefined || !target) continue;
      const member = this.memberValue(value, key);
      if (member) out.set(target.name, member);
    }
    return out;
  }

  // ---- statements ------------------------------------------------------------------
}

export function isRequire(node: Node | null | undefined): boolean {
  const n = unwrap(node);
  return n?.type === 'CallExpression' && n.callee.type === 'Identifier' && n.callee.name === 'require' && n.arguments.length === 1;
}

export type { FunctionNode, SqlSite };

/** The object literal a function returns, when it returns one: `return { ...base, pool: {...} }` or `() => ({...})`. */
function returnedObject(fn: FunctionNode): TSESTree.ObjectExpression | undefined {
  const body = fn.body;
  if (!body) return undefined;
  if (body.type !== 'BlockStatement') {
    const expression = unwrap(body as Node);
    return expression?.type === 'ObjectExpression' ? expression : undefined;
  }
  const returns = body.body.filter((s): s is TSESTree.ReturnStatement => s.type === 'ReturnStatement');
  if (returns.length !== 1) return undefined;
  const value = unwrap(returns[0].argument as Node | null);
  return value?.type === 'ObjectExpression' ? value : undefined;
}

/**
 * `this.name(...)`: the function the class around the call declares under
 * `name`, as a method or as a property that holds a function.
 */
export function thisMember(program: TSESTree.Program, call: TSESTree.CallExpression): { fn: FunctionNode; name: string; method: boolean } | undefined {
  const callee = unwrap(call.callee);
  if (callee?.type !== 'MemberExpression' || unwrap(callee.object)?.type !== 'ThisExpression') return undefined;
  const name = propertyName(callee);
  if (name === undefined) return undefined;
  for (const member of classAround(program, call)?.body.body ?? []) {
    if ((member.type !== 'MethodDefinition' && member.type !== 'PropertyDefinition') || member.computed || member.key.type !== 'Identifier' || member.key.name !== name) continue;
    if (member.type === 'MethodDefinition' && member.value.type === 'FunctionExpression') return { fn: member.value, name, method: true };
    if (member.type === 'PropertyDefinition' && isFunction(member.value)) return { fn: member.value, name, method: false };
  }
  return undefined;
}

/** The class whose body holds a node. */
function classAround(program: TSESTree.Program, node: Node): TSESTree.ClassDeclaration | TSESTree.ClassExpression | undefined {
  let best: TSESTree.ClassDeclaration | TSESTree.ClassExpression | undefined;
  const stack: Node[] = [program];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.range[0] > node.range[0] || n.range[1] < node.range[1]) continue;
    if (n.type === 'ClassDeclaration' || n.type === 'ClassExpression') best = n;
    stack.push(...children(n));
  }
  return best;
}
