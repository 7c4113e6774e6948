// Django's ORM as the SQL it sends: a queryset chain on `Model.objects`
// ending in a locking read (select_for_update), update(), delete(),
// create(); filter(**lookups) as conditions; `instance.save()` /
// `instance.delete()` on an instance the code read.
import { keyword, positional, span, type Arg, type Node } from '../../syntax.ts';
import { emptyHost, flatten, isTrue, listOfStrings, literal, SqlWriter, type BuiltStatement, type ModelRef, type OrmContext } from '../../orm/writer.ts';

const DJANGO_LOOKUPS: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=', exact: '=', iexact: '=' };

/** Django filter(**kwargs) as SQL conditions. */
function djangoConditions(args: Arg[], w: SqlWriter, first: { value: boolean }): void {
  for (const a of args) {
    if (!a.name) continue; // Q objects: conditions we do not read
    const [field, lookup] = splitLookup(a.name);
    w.raw(first.value ? ' WHERE ' : ' AND ', a.value);
    first.value = false;
    if (lookup === 'in') {
      w.raw(`${field} = ANY(`, a.value);
      w.placeholder(a.value, a.value);
      w.raw(')', a.value);
    } else if (lookup === 'isnull') {
      const value = w.ctx.text.slice(a.value.from, a.value.to);
      w.raw(`${field} IS ${value === 'False' ? 'NOT ' : ''}NULL`, a.value);
    } else {
      w.raw(`${field} ${DJANGO_LOOKUPS[lookup ?? 'exact'] ?? '='} `, a.value);
      w.value(a.value, a.value);
    }
  }
}

function splitLookup(name: string): [string, string | undefined] {
  const parts = name.split('__');
  const lookup = parts.length > 1 && (parts[parts.length - 1] in DJANGO_LOOKUPS || ['in', 'isnull'].includes(parts[parts.length - 1])) ? parts.pop() : undefined;
  const field = parts.join('_') === 'pk' ? 'id' : parts.join('_');
  return [field, lookup];
}

const FINAL_READS = new Set(['first', 'last', 'get', 'earliest', 'latest']);

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
