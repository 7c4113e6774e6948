// Django's ORM as the SQL it sends: a queryset chain on `Model.objects`
// ending in a locking read (select_for_update), update(), delete(),
// create(); filter(**lookups) as conditions; `instance.save()` /
// `instance.delete()` on an instance the code read.
import { argsOf, children, dottedName, keyword, methodCall, ownNodes, positional, span, unwrap, type Arg, type Node } from '../../syntax.ts';
import { qualifiedName } from '../../flow/imports.ts';
import type { ModuleSource } from '../../flow/project.ts';
import { moduleConstant } from '../../orm/models.ts';
import { bulkUpdateFields, writeBulkSets } from './bulk-update.ts';
import { emptyHost, flatten, isTrue, listOfStrings, literal, SqlWriter, type BuiltStatement, type ModelRef, type OrmContext, type Step } from '../../orm/writer.ts';

const DJANGO_LOOKUPS: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=', exact: '=', iexact: '=' };

/**
 * A condition of filter(): a lookup (`status="queued"`), or Q objects joined by `&` and `|`; `from`: a lookup
 * written in another def (a function that returns the Q), read there.
 */
type Condition = { kind: 'lookup'; name: string; value: Node; from?: From } | { kind: 'and' | 'or'; parts: Condition[]; at: Node };

/** filter()'s arguments as conditions; a Q it cannot read (`~Q(...)`, a Q built elsewhere) is left out (a weaker filter, never a stronger one). */
function conditionsOf(args: Arg[], ctx: OrmContext): Condition[] {
  return args.flatMap((a): Condition[] => {
    if (a.star) return [];
    if (a.name) return [{ kind: 'lookup', name: a.name, value: a.value }];
    const q = qCondition(a.value, ctx) ?? returnedQ(a.value, ctx);
    return q ? [q] : [];
  });
}

/**
 * `filter(claimable(now))` with `def claimable(now): return Q(...) | Q(...)` in this file or a module of the project:
 * the Q it returns, its lookups read in that def, a parameter standing for what the call passes.
 */
function returnedQ(node: Node, ctx: OrmContext): Condition | undefined {
  const call = unwrap(node);
  if (call?.name !== 'CallExpression' || !ctx.defSource) return undefined;
  const there = ctx.defSource(call.firstChild!, call);
  const returned = there ? onlyReturn(there.def) : undefined;
  if (!there || !returned) return undefined;
  const params = parametersOf(there.def, there.text);
  const locals = onceAssigned(there.def, there.text, new Set(params));
  const own: OrmContext = {
    text: there.text,
    qualify: there.qualify,
    valueOf: (n) => locals.get(there.text.slice(n.from, n.to)),
    isParameter: (name) => params.includes(name),
    model: () => undefined,
    instance: () => undefined,
  };
  const args = new Map<string, Node>();
  const given = argsOf(call.lastChild, ctx.text);
  // `self.claimable(now)`: the method's own first parameter is the object, not an argument.
  const positional = call.firstChild?.name === 'MemberExpression' && (params[0] === 'self' || params[0] === 'cls') ? params.slice(1) : params;
  given.filter((a) => !a.name && !a.star).forEach((a, i) => positional[i] !== undefined && args.set(positional[i], a.value));
  for (const a of given) if (a.name) args.set(a.name, a.value);
  const from: From = { ctx: own, at: call, args };
  const place = (c: Condition): Condition => (c.kind === 'lookup' ? { ...c, from } : { ...c, at: call, parts: c.parts.map(place) });
  const q = qCondition(returned, own);
  return q ? place(q) : undefined;
}

/**
 * `Q(a=1, b=2)`, `Q(...) | Q(...)`, `Q(...) & Q(...)`, or a name the code
 * bound once to one of them (`idle = Q(...) | Q(...)`, then `filter(idle)`);
 * undefined when any part cannot be read.
 */
function qCondition(node: Node, ctx: OrmContext, depth = 0): Condition | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'VariableName') {
    const value = depth < 3 ? unwrap(ctx.valueOf(expr)) : undefined;
    return value ? qCondition(value, ctx, depth + 1) : undefined;
  }
  if (expr?.name === 'CallExpression') {
    const callee = expr.firstChild!;
    const name = ctx.qualify(callee) ?? dottedName(callee, ctx.text) ?? '';
    if (!/(^|\.)Q$/.test(name)) return undefined;
    const args = argsOf(expr.lastChild, ctx.text);
    if (args.length === 0 || args.some((a) => a.star)) return undefined;
    const parts = args.map((a) => (a.name ? ({ kind: 'lookup', name: a.name, value: a.value } as Condition) : qCondition(a.value, ctx, depth)));
    return parts.every((p) => p !== undefined) ? { kind: 'and', parts: parts as Condition[], at: expr } : undefined;
  }
  if (expr?.name === 'BinaryExpression') {
    const [left, op, right] = children(expr);
    const operator = op ? ctx.text.slice(op.from, op.to) : '';
    if ((operator !== '|' && operator !== '&') || !left || !right) return undefined;
    const a = qCondition(left, ctx, depth);
    const b = qCondition(right, ctx, depth);
    return a && b ? { kind: operator === '|' ? 'or' : 'and', parts: [a, b], at: expr } : undefined;
  }
  return undefined;
}

/**
 * Where conditions are read from: the file's own code, or a method of the
 * model's manager in the models module (`at`: the call in this file they are
 * written onto, their values as literals or unknown placeholders).
 */
interface From {
  ctx: OrmContext;
  at?: Node;
  /** What the call passes for each parameter of the def the conditions are read in (in the calling file's text). */
  args?: Map<string, Node>;
}

/** Django filter(**kwargs) and Q objects as SQL conditions. */
function djangoConditions(args: Arg[], w: SqlWriter, first: { value: boolean }, from: From = { ctx: w.ctx }): void {
  writeConditions(conditionsOf(args, from.ctx), w, first, from);
}

function writeConditions(conditions: Condition[], w: SqlWriter, first: { value: boolean }, from: From = { ctx: w.ctx }): void {
  for (const c of conditions) {
    w.raw(first.value ? ' WHERE ' : ' AND ', from.at ?? (c.kind === 'lookup' ? c.value : c.at));
    first.value = false;
    writeCondition(c, w, from);
  }
}

function writeCondition(c: Condition, w: SqlWriter, from: From): void {
  if (c.kind === 'lookup') return writeLookup(c.name, c.value, w, c.from ?? from);
  const at = from.at ?? c.at;
  w.raw('(', at);
  c.parts.forEach((part, k) => {
    if (k > 0) w.raw(c.kind === 'or' ? ' OR ' : ' AND ', at);
    writeCondition(part, w, from);
  });
  w.raw(')', at);
}

/** A value of the conditions: written where it is in this file; from a manager's module, its literal or an unknown placeholder. */
function writeValue(value: Node, w: SqlWriter, from: From): void {
  if (!from.at) return w.value(value, value);
  // A parameter of the def the lookup is read in: what the call passes, as the calling code wrote it.
  const name = unwrap(value)?.name === 'VariableName' ? from.ctx.text.slice(value.from, value.to) : undefined;
  const passed = name !== undefined && from.ctx.isParameter(name) ? from.args?.get(name) : undefined;
  if (passed) return w.value(passed, passed);
  const own = new SqlWriter(from.ctx);
  own.value(value, value);
  if (own.params.length > 0) return w.placeholder(undefined, from.at);
  w.raw(own.build({ start: from.at.from, end: from.at.to }).host.text, from.at);
}

function writeLookup(name: string, value: Node, w: SqlWriter, from: From): void {
  const [field, lookup] = splitLookup(name);
  const at = from.at ?? value;
  if (lookup === 'in') {
    const items = literalItems(value, from.ctx);
    if (items) {
      // status__in=[Job.Status.QUEUED, "failed"]: the states it names.
      w.raw(`${field} IN (`, at);
      items.forEach((item, k) => {
        if (k > 0) w.raw(', ', from.at ?? item);
        writeValue(item, w, from);
      });
      w.raw(')', at);
    } else {
      w.raw(`${field} = ANY(`, at);
      w.placeholder(from.at ? undefined : value, at);
      w.raw(')', at);
    }
  } else if (lookup === 'isnull') {
    const text = from.ctx.text.slice(value.from, value.to);
    w.raw(`${field} IS ${text === 'False' ? 'NOT ' : ''}NULL`, at);
  } else {
    w.raw(`${field} ${DJANGO_LOOKUPS[lookup ?? 'exact'] ?? '='} `, at);
    writeValue(value, w, from);
  }
}

/** The items of a list or tuple display whose every item is a literal or a class constant. */
function literalItems(node: Node, ctx: OrmContext): Node[] | undefined {
  const expr = unwrap(node);
  if (!expr || (expr.name !== 'ArrayExpression' && expr.name !== 'TupleExpression')) return undefined;
  const items = children(expr).filter((c) => !['[', ']', '(', ')', ','].includes(c.name));
  const literalItem = (item: Node) => item.name === 'String' || item.name === 'Number' || (item.name === 'MemberExpression' && ctx.constant?.(item) !== undefined);
  return items.length > 0 && items.every(literalItem) ? items : undefined;
}

function splitLookup(name: string): [string, string | undefined] {
  const parts = name.split('__');
  const lookup = parts.length > 1 && (parts[parts.length - 1] in DJANGO_LOOKUPS || ['in', 'isnull'].includes(parts[parts.length - 1])) ? parts.pop() : undefined;
  const field = parts.join('_') === 'pk' ? 'id' : parts.join('_');
  return [field, lookup];
}

const FINAL_READS = new Set(['first', 'last', 'get', 'earliest', 'latest']);
/** QuerySet methods whose meaning the chain reads itself (or that add no condition): never a manager's own method. */
const QUERYSET_METHODS = new Set([
  'filter', 'exclude', 'get', 'first', 'last', 'earliest', 'latest', 'update', 'delete', 'create', 'bulk_create', 'bulk_update', 'select_for_update',
  'order_by', 'using', 'all', 'only', 'defer', 'values', 'values_list', 'select_related', 'prefetch_related', 'annotate', 'distinct',
  'count', 'exists', 'iterator', 'none', 'get_or_create', 'update_or_create', 'in_bulk', 'aggregate', 'reverse', 'extra', 'raw',
]);

/**
 * The conditions a custom manager or queryset adds: its `get_queryset()`
 * override, and each of its own methods the chain calls (`Job.objects.
 * claimable()` where `def claimable(self): return self.filter(...)`), read
 * from the class in the models module (`objects = JobQuerySet.as_manager()`,
 * `JobManager()`, `JobManager.from_queryset(JobQuerySet)()`) and written onto
 * the call of the chain.
 */
function managerConditions(model: ModelRef, steps: Step[], w: SqlWriter, first: { value: boolean }): void {
  const manager = model.manager;
  if (!manager) return;
  const { source } = manager;
  const classes = managerClasses(manager.value, source.text).flatMap((name) => {
    const def = topClass(source, name);
    return def ? [def] : [];
  });
  if (classes.length === 0) return;
  const methodOf = (name: string) => classes.map((c) => classMethod(c, name, source.text)).find((d) => d !== undefined);
  const at = steps[0].node;
  const write = (def: Node, depth: number) => {
    const returned = onlyReturn(def);
    const params = new Set(parametersOf(def, source.text));
    const locals = onceAssigned(def, source.text, params);
    // `rows = self.get_queryset()` ... `return rows.filter(idle)`: the chain from `self`.
    const chain = returned ? throughLocals(flatten(returned, source.text), locals, source.text) : undefined;
    if (!chain || !isSelfOrSuper(chain.root, source.text)) return;
    const ctx: OrmContext = {
      text: source.text,
      qualify: (n) => qualifiedName(n, source.text, source.imports),
      valueOf: (n) => locals.get(source.text.slice(n.from, n.to)) ?? source.constants.get(source.text.slice(n.from, n.to)),
      isParameter: (name) => params.has(name),
      model: () => undefined,
      instance: () => undefined,
      constant: (n) => moduleConstant(source, n),
    };
    for (const step of chain.steps) {
      if (step.method === 'filter') djangoConditions(step.args, w, first, { ctx, at });
      else if (!QUERYSET_METHODS.has(step.method) && step.method !== 'get_queryset' && depth < 2) {
        const inner = methodOf(step.method);
        if (inner) write(inner, depth + 1);
      }
    }
  };
  const base = methodOf('get_queryset');
  if (base) write(base, 1);
  for (const step of steps) {
    if (QUERYSET_METHODS.has(step.method) || step.method === 'get_queryset') continue;
    const def = methodOf(step.method);
    if (def) write(def, 0);
  }
}

/** `JobQuerySet.as_manager()`, `JobManager()`, `JobManager.from_queryset(JobQuerySet)()`: the classes named. */
function managerClasses(value: Node, text: string): string[] {
  const call = unwrap(value);
  if (call?.name !== 'CallExpression') return [];
  const callee = unwrap(call.firstChild);
  if (callee?.name === 'VariableName') return [text.slice(callee.from, callee.to)];
  if (callee?.name === 'MemberExpression') {
    const name = dottedName(callee, text);
    if (name?.endsWith('.as_manager') && !name.slice(0, -11).includes('.')) return [name.slice(0, -11)];
  }
  if (callee?.name === 'CallExpression') {
    const inner = methodCall(callee, text);
    const owner = inner ? dottedName(inner.object, text) : undefined;
    const queryset = inner ? dottedName(unwrap(positional(inner.call.args, 0)), text) : undefined;
    if (inner?.method === 'from_queryset' && owner && queryset) return [owner, queryset];
  }
  return [];
}

function topClass(source: ModuleSource, name: string): Node | undefined {
  for (const statement of children(source.tree.topNode)) {
    const def = statement.name === 'DecoratedStatement' ? statement.getChild('ClassDefinition') : statement;
    const id = def?.name === 'ClassDefinition' ? def.getChild('VariableName') : null;
    if (def && id && source.text.slice(id.from, id.to) === name) return def;
  }
  return undefined;
}

function classMethod(def: Node, name: string, text: string): Node | undefined {
  for (const member of children(def.getChild('Body') ?? def)) {
    const method = member.name === 'DecoratedStatement' ? member.getChild('FunctionDefinition') : member;
    const id = method?.name === 'FunctionDefinition' ? method.getChild('VariableName') : null;
    if (method && id && text.slice(id.from, id.to) === name) return method;
  }
  return undefined;
}

/** The expression of a def's one return statement. */
function onlyReturn(def: Node): Node | undefined {
  const returns: Node[] = [];
  const visit = (node: Node) => {
    for (const child of children(node)) {
      if (child.name === 'FunctionDefinition' || child.name === 'ClassDefinition' || child.name === 'LambdaExpression') continue;
      if (child.name === 'ReturnStatement') returns.push(child);
      else visit(child);
    }
  };
  visit(def.getChild('Body') ?? def);
  const value = returns.length === 1 ? children(returns[0]).find((c) => c.name !== 'return') : undefined;
  return value ? unwrap(value) : undefined;
}

/** The names a def binds once with a plain `name = value` among its own statements (not its parameters), and the values. */
function onceAssigned(def: Node, text: string, params: ReadonlySet<string>): Map<string, Node> {
  const seen = new Map<string, Node | undefined>();
  ownNodes(def, (node) => {
    if (node.name !== 'AssignStatement' && node.name !== 'UpdateStatement' && node.name !== 'ForStatement' && node.name !== 'WithStatement') return;
    const parts = children(node);
    const targets = node.name === 'AssignStatement' || node.name === 'UpdateStatement' ? parts.slice(0, 1) : parts.filter((p) => p.name === 'VariableName');
    const plain = node.name === 'AssignStatement' && parts.length === 3 && parts[1]?.name === 'AssignOp';
    for (const target of targets) {
      if (target.name !== 'VariableName') continue;
      const name = text.slice(target.from, target.to);
      seen.set(name, seen.has(name) || !plain ? undefined : parts[2]);
    }
  });
  const values = new Map<string, Node>();
  for (const [name, value] of seen) if (value && !params.has(name)) values.set(name, value);
  return values;
}

/** A chain whose root is a name bound once in the def (`rows.filter(...)`, `rows = self.get_queryset()`): the steps of both, up to three names deep. */
function throughLocals(chain: ReturnType<typeof flatten>, locals: ReadonlyMap<string, Node>, text: string, depth = 0): ReturnType<typeof flatten> {
  const root = chain ? unwrap(chain.root) : undefined;
  if (!chain || root?.name !== 'VariableName' || depth >= 3) return chain;
  const value = locals.get(text.slice(root.from, root.to));
  const before = value ? throughLocals(flatten(value, text), locals, text, depth + 1) : undefined;
  return before ? { root: before.root, steps: [...before.steps, ...chain.steps] } : chain;
}

function isSelfOrSuper(root: Node, text: string): boolean {
  const expr = unwrap(root);
  if (expr?.name === 'VariableName') return text.slice(expr.from, expr.to) === 'self';
  return expr?.name === 'CallExpression' && /^super\(\s*\)$/.test(text.slice(expr.from, expr.to));
}

function parametersOf(def: Node, text: string): string[] {
  const list = def.getChild('ParamList');
  return list ? children(list).filter((c) => c.name === 'VariableName').map((c) => text.slice(c.from, c.to)) : [];
}

/**
 * An optimistic compare-and-set: `Job.objects.filter(id=job.id,
 * locked_until=old).update(...)` where `old` is `job.locked_until` of a row
 * the code read with `Job.objects.filter(...)` (looped over, or assigned from
 * `.first()`), and the update sets that column. The update matches only while the row still holds what the
 * read saw, so the read and the update are one claim, as a locking read and
 * the update after it are: the read's conditions are written into the
 * update's (`AND (locked_until IS NULL OR locked_until < now())`), and it is
 * judged as the claim it is.
 */
function compareAndSet(args: Arg[], sets: Arg[], table: string, update: Node, w: SqlWriter, first: { value: boolean }): void {
  const ctx = w.ctx;
  for (const a of args) {
    if (!a.name) continue;
    const [field, lookup] = splitLookup(a.name);
    // The value compared is the one the update swaps (a fence on another column is a finish's or a heartbeat's).
    if ((lookup && lookup !== 'exact') || field === 'id' || !sets.some((s) => s.name === field)) continue;
    let value = unwrap(a.value);
    if (value?.name === 'VariableName') value = unwrap(ctx.valueOf(value));
    if (value?.name !== 'MemberExpression' || dottedName(value, ctx.text)?.split('.').length !== 2) continue;
    if (ctx.text.slice(value.lastChild!.from, value.lastChild!.to) !== field) continue;
    const holder = value.firstChild!;
    const read = unwrap(ctx.valueOf(holder)) ?? loopSource(update, ctx.text.slice(holder.from, holder.to), ctx.text);
    const chain = read ? readChain(read, ctx) : undefined;
    const root = chain?.root;
    if (!chain || root?.name !== 'MemberExpression' || !MANAGER_ROOT.test(ctx.text.slice(root.from, root.to))) continue;
    if (ctx.model(root.firstChild!)?.table !== table) continue;
    for (const step of chain.steps) if (step.method === 'filter' || step.method === 'get') djangoConditions(step.args, w, first);
    return;
  }
}

const MANAGER_ROOT = /\.(objects|_default_manager|_base_manager)$/;

/**
 * A chain that starts at a helper of this file returning a manager or a
 * queryset (`def rows(self): return Job.objects.using("queue")`, called as
 * `self.rows().filter(...)` or `rows().filter(...)`): the helper's one
 * returned chain in front of the call's own steps, so the chain is read from
 * `Job.objects` as if written there. Any other root is left as it is.
 */
function throughHelper(chain: { root: Node; steps: Step[] }, ctx: OrmContext): { root: Node; steps: Step[] } {
  const { root, steps } = chain;
  let call: Node | undefined;
  let rest = steps;
  if (root.name === 'CallExpression' && unwrap(root.firstChild)?.name === 'VariableName') call = root;
  else if (root.name === 'VariableName' && steps.length > 1 && /^(self|cls)$/.test(ctx.text.slice(root.from, root.to))) {
    call = steps[0].node;
    rest = steps.slice(1);
  }
  const def = call && ctx.defOf ? ctx.defOf(call.firstChild!, call) : undefined;
  const returned = def?.name === 'FunctionDefinition' ? onlyReturn(def) : undefined;
  if (!returned) return chain;
  const inner = returned.name === 'MemberExpression' ? { root: returned, steps: [] } : flatten(returned, ctx.text);
  if (inner?.root.name !== 'MemberExpression' || !MANAGER_ROOT.test(ctx.text.slice(inner.root.from, inner.root.to))) return chain;
  return { root: inner.root, steps: [...inner.steps, ...rest] };
}

/** The query chain of a read, without its slice (`qs[:10]`). */
function readChain(read: Node, ctx: OrmContext, depth = 0): ReturnType<typeof flatten> {
  let expr: Node | undefined = read;
  if (expr.name === 'MemberExpression' && expr.lastChild?.name === ']') expr = unwrap(expr.firstChild);
  // candidates = Job.objects.filter(...); for job in candidates[:10]
  if (expr?.name === 'VariableName' && depth < 3) {
    const value = unwrap(ctx.valueOf(expr));
    return value ? readChain(value, ctx, depth + 1) : undefined;
  }
  const flat = expr ? flatten(expr, ctx.text) : undefined;
  const chain = flat ? throughHelper(flat, ctx) : undefined;
  // pending.order_by("id") where pending = Task.objects.filter(...): the steps of both.
  if (chain?.root.name === 'VariableName' && depth < 3) {
    const value = unwrap(ctx.valueOf(chain.root));
    const before = value ? readChain(value, ctx, depth + 1) : undefined;
    return before ? { root: before.root, steps: [...before.steps, ...chain.steps] } : undefined;
  }
  return chain;
}

/** The iterable of the `for <name> in ...` loop around `node`. */
function loopSource(node: Node, name: string, text: string): Node | undefined {
  for (let at: Node | null = node.parent; at; at = at.parent) {
    if (at.name === 'FunctionDefinition' || at.name === 'ClassDefinition') return undefined;
    if (at.name !== 'ForStatement') continue;
    const parts = children(at);
    const inAt = parts.findIndex((p) => p.name === 'in');
    const target = parts[inAt - 1];
    if (inAt > 0 && target?.name === 'VariableName' && text.slice(target.from, target.to) === name && parts[inAt + 1]) return unwrap(parts[inAt + 1]);
  }
  return undefined;
}

/**
 * A Django ORM call as SQL: a queryset chain on `Model.objects` ending in a
 * locking read (select_for_update), update(), delete(), create(); or
 * `instance.save()` / `instance.delete()` on an instance the code read.
 */
export function djangoStatement(node: Node, ctx: OrmContext): BuiltStatement | undefined {
  const flat = flatten(node, ctx.text);
  if (!flat) return undefined;
  return djangoChainStatement(node, throughHelper(flat, ctx), ctx);
}

/**
 * A queryset kept in a name bound once (`free = Job.objects.idle(now).filter(pk=pk)`,
 * then `free.update(...)`): the chain of its value in front of the call's own
 * steps, as if written there. Only a queryset: a value that reads rows
 * (`.first()`, `.get()`) is an instance, read by `instance.save()`.
 */
function djangoStatementThrough(node: Node, root: Node, steps: Step[], ctx: OrmContext, depth = 0): BuiltStatement | undefined {
  const value = depth < 3 ? unwrap(ctx.valueOf(root)) : undefined;
  const flat = value ? flatten(value, ctx.text) : undefined;
  if (!flat || flat.steps.some((s) => !QUERYSET_STEPS.has(s.method) && QUERYSET_METHODS.has(s.method))) return undefined;
  const inner = throughHelper(flat, ctx);
  const chain = { root: inner.root, steps: [...inner.steps, ...steps] };
  if (chain.root.name === 'VariableName') return djangoStatementThrough(node, chain.root, chain.steps, ctx, depth + 1);
  return chain.root.name === 'MemberExpression' ? djangoChainStatement(node, chain, ctx) : undefined;
}

/** The queryset methods that return a queryset (a chain may go on from them). */
const QUERYSET_STEPS = new Set(['filter', 'exclude', 'select_for_update', 'order_by', 'using', 'all', 'only', 'defer', 'select_related', 'prefetch_related', 'annotate', 'distinct', 'none', 'reverse', 'extra']);

function djangoChainStatement(node: Node, chain: { root: Node; steps: Step[] }, ctx: OrmContext): BuiltStatement | undefined {
  const { root, steps } = chain;
  const last = steps[steps.length - 1];
  // instance.save() / instance.delete()
  if (steps.length === 1 && (last.method === 'save' || last.method === 'delete')) {
    const instance = ctx.instance(root);
    if (!instance) return root.name === 'VariableName' && last.method === 'delete' ? djangoStatementThrough(node, root, steps, ctx) : undefined;
    const w = new SqlWriter(ctx);
    if (last.method === 'delete') {
      w.raw(`DELETE FROM ${instance.table} WHERE id = `, last.node);
      w.placeholder(undefined, last.node);
    } else {
      const fields = keyword(last.args, 'update_fields');
      const named = fields ? listOfStrings(fields, ctx) : undefined;
      const columns = [...(instance.assigned ?? new Map<string, Node>())].filter(([c]) => !named || named.includes(c));
      if (columns.length === 0) return undefined;
      w.raw(`UPDATE ${instance.table} SET `, last.node);
      w.ownRow = instance.table;
      columns.forEach(([column, value], k) => {
        if (k > 0) w.raw(', ', value);
        w.raw(`${column} = `, value);
        w.value(value, value);
      });
      w.ownRow = undefined;
      w.raw(' WHERE id = ', last.node);
      w.placeholder(undefined, last.node);
    }
    return w.build(span(node));
  }
  // Model.objects....
  if (root.name === 'VariableName') return djangoStatementThrough(node, root, steps, ctx);
  if (root.name !== 'MemberExpression') return undefined;
  const manager = root.lastChild;
  if (manager?.name !== 'PropertyName' || !['objects', '_default_manager', '_base_manager'].includes(ctx.text.slice(manager.from, manager.to))) return undefined;
  const lock = steps.find((s) => s.method === 'select_for_update');
  const model = ctx.model(root.firstChild!) ?? (lock ? computedModel(root.firstChild!, ctx) : undefined);
  if (!model) return undefined;
  const using = steps.find((s) => s.method === 'using');
  const alias = using ? literal(positional(using.args, 0), ctx) : undefined;
  const filters = steps.filter((s) => s.method === 'filter' || (s.method === 'get' && s === last));
  const w = new SqlWriter(ctx);
  const first = { value: true };
  let returnsInstance: ModelRef | undefined;
  if (last.method === 'update') {
    w.raw(`UPDATE ${model.table} SET `, last.node);
    last.args.filter((a) => a.name).forEach((a, k) => {
      if (k > 0) w.raw(', ', a.value);
      w.raw(`${a.name} = `, a.value);
      w.value(a.value, a.value);
    });
    for (const f of filters) djangoConditions(f.args, w, first);
    managerConditions(model, steps, w, first);
    compareAndSet(filters.flatMap((f) => f.args), last.args, model.table, node, w, first);
  } else if (last.method === 'bulk_update') {
    // UPDATE ... SET <field> = CASE WHEN id = <pk> THEN ... END WHERE id IN (<pks>): by the ids of the objects handed in.
    const fields = bulkUpdateFields(last.args, ctx);
    if (!fields) return undefined;
    w.raw(`UPDATE ${model.table} SET `, last.node);
    writeBulkSets(fields, model, last.node, w);
    for (const f of filters) djangoConditions(f.args, w, first);
    managerConditions(model, steps, w, first);
    w.raw(first.value ? ' WHERE id = ANY(' : ' AND id = ANY(', last.node);
    w.placeholder(undefined, last.node);
    w.raw(')', last.node);
  } else if (last.method === 'delete') {
    w.raw(`DELETE FROM ${model.table}`, last.node);
    for (const f of filters) djangoConditions(f.args, w, first);
    managerConditions(model, steps, w, first);
  } else if (last.method === 'create' || last.method === 'bulk_create') {
    const fields = last.args.filter((a) => a.name);
    if (last.method === 'bulk_create' || fields.length === 0) return undefined;
    w.raw(`INSERT INTO ${model.table} (${fields.map((a) => a.name).join(', ')}) VALUES (`, last.node);
    fields.forEach((a, k) => {
      if (k > 0) w.raw(', ', a.value);
      w.value(a.value, a.value);
    });
    w.raw(')', last.node);
  } else if (lock) {
    w.raw(`SELECT * FROM ${model.table}`, lock.node);
    for (const f of filters) djangoConditions(f.args, w, first);
    managerConditions(model, steps, w, first);
    if (FINAL_READS.has(last.method)) w.raw(' LIMIT 1', last.node);
    const skip = keyword(lock.args, 'skip_locked');
    const nowait = keyword(lock.args, 'nowait');
    const no_key = keyword(lock.args, 'no_key');
    w.raw(isTrue(no_key, ctx) ? ' FOR NO KEY UPDATE' : ' FOR UPDATE', lock.node);
    if (isTrue(skip, ctx)) w.raw(' SKIP LOCKED', skip!);
    else if (isTrue(nowait, ctx)) w.raw(' NOWAIT', nowait!);
    returnsInstance = { table: model.table, name: model.name };
  } else {
    if (FINAL_READS.has(last.method)) return { host: emptyHost(node), params: [], returnsInstance: { table: model.table, name: model.name } };
    return undefined;
  }
  const built = w.build(span(node));
  return { ...built, ...(alias ? { using: alias } : {}), ...(returnsInstance ? { returnsInstance } : {}) };
}

/**
 * A model the code picks at run time (`self.model_class = import_string(settings.X)`, a class handed in):
 * `<it>.objects...select_for_update()` locks rows of a table it cannot name. Written as the name the code
 * computes in braces (`"{self.model_class}"`, as dynamic SQL's names are), so the lock counts where a
 * transaction's locks do (side effects after it) and never matches a table the project names.
 */
function computedModel(node: Node, ctx: OrmContext): ModelRef | undefined {
  const name = dottedName(node, ctx.text);
  if (!name || ctx.instance(node)) return undefined;
  return { table: `"{${name.replace(/"/g, '')}}"`, name };
}

/**
 * Django's value expressions the writer meets inside an update: `Value("dead")`
 * as its literal, `Case(When(attempts__gte=5, then=Value("dead")),
 * default=Value("queued"))` as the CASE it is. false when the node is none.
 */
export function djangoValue(w: SqlWriter, node: Node): boolean {
  const ctx = w.ctx;
  if (node.name !== 'CallExpression') return false;
  const name = ctx.qualify(node.firstChild!) ?? '';
  if (!/^django\.db\.models(\.expressions)?\.(Value|Case)$/.test(name)) return false;
  const args = argsOf(node.lastChild, ctx.text);
  if (name.endsWith('.Value')) {
    const value = positional(args, 0);
    if (!value) return false;
    w.value(value, value);
    return true;
  }
  const whens = args.filter((a) => !a.name && !a.star).map((a) => unwrap(a.value));
  const fallback = keyword(args, 'default');
  const parts = whens.map((when) => {
    const call = when?.name === 'CallExpression' && /^django\.db\.models(\.expressions)?\.When$/.test(ctx.qualify(when.firstChild!) ?? '') ? when : undefined;
    const whenArgs = call ? argsOf(call.lastChild, ctx.text) : [];
    const then = keyword(whenArgs, 'then');
    const conditions = conditionsOf(whenArgs.filter((a) => a.name !== 'then'), ctx);
    return call && then && conditions.length > 0 ? { call, then, conditions } : undefined;
  });
  if (parts.length === 0 || parts.some((p) => !p)) return false;
  w.raw('CASE', node);
  for (const part of parts as NonNullable<(typeof parts)[number]>[]) {
    w.raw(' WHEN ', part.call);
    part.conditions.forEach((c, k) => {
      if (k > 0) w.raw(' AND ', part.call);
      writeCondition(c, w, { ctx });
    });
    w.raw(' THEN ', part.call);
    w.value(part.then, part.then);
  }
  if (fallback) {
    w.raw(' ELSE ', fallback);
    w.value(fallback, fallback);
  }
  w.raw(' END', node);
  return true;
}

/**
 * A locking queryset kept unevaluated (`Model.objects.select_for_update().filter(...)`, every step a
 * queryset step): Django sends it, and PostgreSQL takes its row locks, only where the code iterates it.
 */
export function isLazyLockingQueryset(value: Node, text: string): boolean {
  const chain = flatten(value, text);
  if (!chain || chain.root.name !== 'MemberExpression' || !/\.(objects|_default_manager|_base_manager)$/.test(text.slice(chain.root.from, chain.root.to))) return false;
  return chain.steps.some((s) => s.method === 'select_for_update') && chain.steps.every((s) => QUERYSET_STEPS.has(s.method));
}
