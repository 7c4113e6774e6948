// Django's ORM as the SQL it sends: a queryset chain on `Model.objects`
// ending in a locking read (select_for_update), update(), delete(),
// create(); filter(**lookups) as conditions; `instance.save()` /
// `instance.delete()` on an instance the code read.
import { argsOf, children, dottedName, keyword, positional, span, unwrap, type Arg, type Node } from '../../syntax.ts';
import { emptyHost, flatten, isTrue, listOfStrings, literal, SqlWriter, type BuiltStatement, type ModelRef, type OrmContext } from '../../orm/writer.ts';

const DJANGO_LOOKUPS: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=', exact: '=', iexact: '=' };

/** A condition of filter(): a lookup (`status="queued"`), or Q objects joined by `&` and `|`. */
type Condition = { kind: 'lookup'; name: string; value: Node } | { kind: 'and' | 'or'; parts: Condition[]; at: Node };

/** filter()'s arguments as conditions; a Q it cannot read (`~Q(...)`, a Q built elsewhere) is left out (a weaker filter, never a stronger one). */
function conditionsOf(args: Arg[], ctx: OrmContext): Condition[] {
  return args.flatMap((a): Condition[] => {
    if (a.star) return [];
    if (a.name) return [{ kind: 'lookup', name: a.name, value: a.value }];
    const q = qCondition(a.value, ctx);
    return q ? [q] : [];
  });
}

/** `Q(a=1, b=2)`, `Q(...) | Q(...)`, `Q(...) & Q(...)`; undefined when any part cannot be read. */
function qCondition(node: Node, ctx: OrmContext): Condition | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'CallExpression') {
    const callee = expr.firstChild!;
    const name = ctx.qualify(callee) ?? dottedName(callee, ctx.text) ?? '';
    if (!/(^|\.)Q$/.test(name)) return undefined;
    const args = argsOf(expr.lastChild, ctx.text);
    if ( args.length === 0 || args.some((a) => a.star)) return undefined;
    const parts = args.map((a) => (a.name ? ({ kind: 'lookup', name: a.name, value: a.value } as Condition) : qCondition(a.value, ctx)));
    return parts.every((p) => p !== undefined) ? { kind: 'and', parts: parts as Condition[], at: expr } : undefined;
  }
  if (expr?.name === 'BinaryExpression') {
    const [left, op, right] = children(expr);
    const operator = op ? ctx.text.slice(op.from, op.to) : '';
    if ((operator !== '|' && operator !== '&') || !left || !right) return undefined;
    const a = qCondition(left, ctx);
    const b = qCondition(right, ctx);
    return a && b ? { kind: operator === '|' ? 'or' : 'and', parts: [a, b], at: expr } : undefined;
  }
  return undefined;
}

/** Django filter(**kwargs) and Q objects as SQL conditions. */
function djangoConditions(args: Arg[], w: SqlWriter, first: { value: boolean }): void {
  writeConditions(conditionsOf(args, w.ctx), w, first);
}

function writeConditions(conditions: Condition[], w: SqlWriter, first: { value: boolean }): void {
  for (const c of conditions) {
    w.raw(first.value ? ' WHERE ' : ' AND ', c.kind === 'lookup' ? c.value : c.at);
    first.value = false;
    writeCondition(c, w);
  }
}

function writeCondition(c: Condition, w: SqlWriter): void {
  if (c.kind === 'lookup') return writeLookup(c.name, c.value, w);
  w.raw('(', c.at);
  c.parts.forEach((part, k) => {
    if (k > 0) w.raw(c.kind === 'or' ? ' OR ' : ' AND ', c.at);
    writeCondition(part, w);
  });
  w.raw(')', c.at);
}

function writeLookup(name: string, value: Node, w: SqlWriter): void {
  const [field, lookup] = splitLookup(name);
  if (lookup === 'in') {
    const items = literalItems(value, w.ctx);
    if (items) {
      // status__in=[Job.Status.QUEUED, "failed"]: the states it names.
      w.raw(`${field} IN (`, value);
      items.forEach((item, k) => {
        if (k > 0) w.raw(', ', item);
        w.value(item, item);
      });
      w.raw(')', value);
    } else {
      w.raw(`${field} = ANY(`, value);
      w.placeholder(value, value);
      w.raw(')', value);
    }
  } else if (lookup === 'isnull') {
    const text = w.ctx.text.slice(value.from, value.to);
    w.raw(`${field} IS ${text === 'False' ? 'NOT ' : ''}NULL`, value);
  } else {
    w.raw(`${field} ${DJANGO_LOOKUPS[lookup ?? 'exact'] ?? '='} `, value);
    w.value(value, value);
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
    if (!chain || root?.name !== 'MemberExpression' || !/\.(objects|_default_manager|_base_manager)$/.test(ctx.text.slice(root.from, root.to))) continue;
    if (ctx.model(root.firstChild!)?.table !== table) continue;
    for (const step of chain.steps) if (step.method === 'filter' || step.method === 'get') djangoConditions(step.args, w, first);
    return;
  }
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
  const chain = expr ? flatten(expr, ctx.text) : undefined;
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
  const chain = flatten(node, ctx.text);
  if (!chain) return undefined;
  const { root, steps } = chain;
  const last = steps[steps.length - 1];
  // instance.save() / instance.delete()
  if (steps.length === 1 && (last.method === 'save' || last.method === 'delete')) {
    const instance = ctx.instance(root);
    if (!instance) return undefined;
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
      columns.forEach(([column, value], k) => {
        if (k > 0) w.raw(', ', value);
        w.raw(`${column} = `, value);
        w.value(value, value);
      });
      w.raw(' WHERE id = ', last.node);
      w.placeholder(undefined, last.node);
    }
    return w.build(span(node));
  }
  // Model.objects....
  if (root.name !== 'MemberExpression') return undefined;
  const manager = root.lastChild;
  if (manager?.name !== 'PropertyName' || !['objects', '_default_manager', '_base_manager'].includes(ctx.text.slice(manager.from, manager.to))) return undefined;
  const model = ctx.model(root.firstChild!);
  if (!model) return undefined;
  const using = steps.find((s) => s.method === 'using');
  const alias = using ? literal(positional(using.args, 0), ctx) : undefined;
  const filters = steps.filter((s) => s.method === 'filter' || (s.method === 'get' && s === last));
  const lock = steps.find((s) => s.method === 'select_for_update');
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
    compareAndSet(filters.flatMap((f) => f.args), last.args, model.table, node, w, first);
  } else if (last.method === 'delete') {
    w.raw(`DELETE FROM ${model.table}`, last.node);
    for (const f of filters) djangoConditions(f.args, w, first);
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
