// ORM code as the SQL it sends, so the rules judge it as they judge raw SQL:
// Django querysets (Job.objects.select_for_update(skip_locked=True).filter(...),
// .update(...), .delete(), instance save()/delete()) and SQLAlchemy
// (session.query(Job).with_for_update(skip_locked=True), select/update/
// delete/insert builders, instance attribute writes). The SQL is written
// here with every piece mapped onto the code it stands for, and analysed
// like any other; values the code computes become $N placeholders with
// their SqlSite.params.
import type { HostParam } from '../../../model/index.ts';
import { HostTextBuilder } from '../../host-text.ts';
import { hostParam } from '../flow/params.ts';
import type { HostText } from '../flow/strings.ts';
import { argsOf, children, dottedName, keyword, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';

export interface ModelRef {
  /** The table's name (db_table, __tablename__, Table("name"), or Django's app_model default). */
  table: string;
  /** The class or Table variable. */
  name: string;
  /** Attributes assigned on an instance since it was read (Django: written by save()). */
  assigned?: Map<string, Node>;
}

export interface OrmContext {
  text: string;
  qualify(node: Node): string | undefined;
  /** The value of a name assigned once (local or module constant). */
  valueOf(node: Node): Node | undefined;
  isParameter(name: string): boolean;
  /** The model (or Core Table) an expression names. */
  model(node: Node): ModelRef | undefined;
  /** The model instance a name holds. */
  instance(node: Node): ModelRef | undefined;
}

export interface BuiltStatement {
  host: HostText;
  params: HostParam[];
  /** Django's `using(alias)` / `select_for_update` on another database. */
  using?: string;
  /** The statement reads rows of this model that the code keeps (`.first()`, `.get()`). */
  returnsInstance?: ModelRef;
}

/** A chain `root.a(...).b(...)`: the root expression and each call, innermost first. */
interface Step {
  method: string;
  args: Arg[];
  node: Node;
}

function flatten(node: Node, text: string): { root: Node; steps: Step[] } | undefined {
  const steps: Step[] = [];
  let current: Node | undefined = unwrap(node);
  while (current?.name === 'CallExpression') {
    const callee = current.firstChild;
    const argList = current.lastChild;
    if (!callee || callee.name !== 'MemberExpression' || argList?.name !== 'ArgList') break;
    const property = callee.lastChild;
    const object = callee.firstChild;
    if (!object || property?.name !== 'PropertyName') break;
    steps.unshift({ method: text.slice(property.from, property.to), args: argsOf(argList, text), node: current });
    current = unwrap(object);
  }
  return current && steps.length > 0 ? { root: current, steps } : undefined;
}

/** True when the call is not the object of a further `.method(...)` call (the end of a chain). */
export function isOuterCall(node: Node): boolean {
  const parent = node.parent;
  const object = parent?.firstChild;
  if (parent?.name === 'MemberExpression' && object && object.from === node.from && object.to === node.to && parent.parent?.name === 'CallExpression') return false;
  return true;
}

/** SQL written piece by piece, each piece mapped to a node of the host code. */
class SqlWriter {
  readonly out = new HostTextBuilder();
  readonly params: HostParam[] = [];

  constructor(readonly ctx: OrmContext) {}

  raw(sql: string, at: Node | { from: number; to: number }): void {
    this.out.push(sql, at.from, at.to);
  }

  /** A value: a literal, now(), now() +/- a timedelta, a column (F("x"), Job.x), x + 1, else a placeholder. */
  value(node: Node | undefined, at: Node, depth = 0): void {
    const expr = unwrap(node);
    if (!expr || depth > 6) return this.placeholder(node, at);
    const text = this.ctx.text.slice(expr.from, expr.to);
    switch (expr.name) {
      case 'String': {
        const literal = /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(text);
        if (literal) return this.raw(`'${literal[2].replace(/'/g, "''")}'`, expr);
        return this.placeholder(expr, at);
      }
      case 'Number':
        return /^\d+(\.\d+)?$/.test(text) ? this.raw(text, expr) : this.placeholder(expr, at);
      case 'Boolean':
        return this.raw(text.toLowerCase(), expr);
      case 'None':
        return this.raw('NULL', expr);
      case 'UnaryExpression':
        if (/^-\s*\d+$/.test(text)) return this.raw(text.replace(/\s+/g, ''), expr);
        return this.placeholder(expr, at);
      case 'BinaryExpression': {
        const [left, op, right] = children(expr);
        const operator = op ? this.ctx.text.slice(op.from, op.to) : '';
        if ((operator === '+' || operator === '-') && left && right) {
          const seconds = intervalSeconds(right, this.ctx);
          this.value(left, at, depth + 1);
          if (seconds !== undefined) return this.raw(` ${operator} interval '${seconds} seconds'`, right);
          this.raw(` ${operator} `, op!);
          return this.value(right, at, depth + 1);
        }
        return this.placeholder(expr, at);
      }
      case 'CallExpression': {
        const callee = expr.firstChild!;
        const name = this.ctx.qualify(callee) ?? dottedName(callee, this.ctx.text) ?? '';
        if (isNow(name)) return this.raw('now()', expr);
        if (writeSubquery(this, expr)) return;
        const args = argsOf(expr.lastChild, this.ctx.text);
        if (/(^|\.)F$/.test(name)) {
          const column = literal(positional(args, 0), this.ctx);
          if (column) return this.raw(column.replace(/__/g, '.'), expr);
        }
        if (/(^|\.)(text|literal_column)$/.test(name) && /sqlalchemy/.test(name)) {
          const sql = literal(positional(args, 0), this.ctx);
          if (sql) return this.raw(sql, expr);
        }
        return this.placeholder(expr, at);
      }
      case 'MemberExpression': {
        const column = columnOf(expr, this.ctx);
        if (column) return this.raw(column, expr);
        return this.placeholder(expr, at);
      }
      case 'VariableName': {
        if (this.ctx.isParameter(text)) return this.placeholder(expr, at);
        const value = this.ctx.valueOf(expr);
        if (value && unwrap(value)?.name !== 'CallExpression') return this.value(value, expr, depth + 1);
        if (value && isNow(this.ctx.qualify(unwrap(value)!.firstChild!) ?? '')) return this.raw('now()', expr);
        // candidate = select(...).with_for_update(skip_locked=True).scalar_subquery(); ... jobs.c.id == candidate
        if (value && writeSubquery(this, unwrap(value)!)) return;
        return this.placeholder(expr, at);
      }
      default:
        return this.placeholder(expr, at);
    }
  }

  placeholder(node: Node | undefined, at: Node): void {
    const where = node ?? at;
    this.params.push(hostParam(node, this.ctx.text, this.ctx.isParameter, this.ctx.valueOf));
    this.raw(`$${this.params.length}`, where);
  }

  build(span: { start: number; end: number }): { host: HostText; params: HostParam[] } {
    return { host: { ...this.out.done(span), composed: false }, params: this.params };
  }
}

function isNow(name: string): boolean {
  return /^(django\.utils\.timezone\.now|datetime\.datetime\.now|datetime\.datetime\.utcnow|sqlalchemy\.func\.now|sqlalchemy\.sql\.func\.now|func\.now|timezone\.now|datetime\.now|datetime\.utcnow|now|utcnow)$/.test(name);
}

function literal(node: Node | undefined, ctx: OrmContext): string | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName') expr = unwrap(ctx.valueOf(expr));
  if (expr?.name !== 'String') return undefined;
  return /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(ctx.text.slice(expr.from, expr.to))?.[2];
}

/** timedelta(minutes=5) -> 300; a name assigned such a value too. */
function intervalSeconds(node: Node, ctx: OrmContext, depth = 0): number | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) expr = unwrap(ctx.valueOf(expr));
  if (expr?.name !== 'CallExpression') return undefined;
  const name = ctx.qualify(expr.firstChild!) ?? dottedName(expr.firstChild, ctx.text) ?? '';
  if (!/(^|\.)timedelta$/.test(name)) return undefined;
  const units: Record<string, number> = { weeks: 604800, days: 86400, hours: 3600, minutes: 60, seconds: 1, milliseconds: 0.001 };
  let total = 0;
  const args = argsOf(expr.lastChild, ctx.text);
  for (const a of args) {
    const unit = a.name ?? (a === args[0] ? 'days' : undefined);
    const value = unwrap(a.value);
    if (!unit || !(unit in units) || value?.name !== 'Number') return undefined;
    total += Number(ctx.text.slice(value.from, value.to)) * units[unit];
  }
  return total;
}

/** `Job.status`, `jobs.c.status`, `jobs.c["status"]`: the column name. */
function columnOf(node: Node, ctx: OrmContext): string | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'MemberExpression') return undefined;
  const parts = children(expr);
  const object = parts[0];
  const last = parts[parts.length - 1];
  if (last?.name === ']') {
    const key = literal(parts[parts.length - 2], ctx);
    return key && object && /\.c$/.test(ctx.text.slice(object.from, object.to)) ? key : undefined;
  }
  if (last?.name !== 'PropertyName' || !object) return undefined;
  const name = ctx.text.slice(last.from, last.to);
  const owner = ctx.text.slice(object.from, object.to);
  if (/\.c$/.test(owner)) return name;
  return ctx.model(object) ? name : undefined;
}

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

function emptyHost(node: Node): HostText {
  return { text: '', starts: [], ends: [], holes: [], span: span(node), composed: false };
}

function isTrue(node: Node | undefined, ctx: OrmContext): boolean {
  const expr = unwrap(node);
  if (!expr) return false;
  if (expr.name === 'VariableName') return isTrue(ctx.valueOf(expr), ctx);
  return ctx.text.slice(expr.from, expr.to) === 'True';
}

function listOfStrings(node: Node, ctx: OrmContext): string[] | undefined {
  const expr = unwrap(node);
  if (!expr || (expr.name !== 'ArrayExpression' && expr.name !== 'TupleExpression')) return undefined;
  const items = children(expr).filter((c) => !['[', ']', '(', ')', ','].includes(c.name));
  const values = items.map((i) => literal(i, ctx));
  return values.every((v) => v !== undefined) ? (values as string[]) : undefined;
}

// ---- SQLAlchemy -------------------------------------------------------------------------

const COMPARE: Record<string, string> = { '==': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

/** A SQLAlchemy where-clause expression as SQL; false when it is not one we read (then nothing was written). */
function saCondition(node: Node, w: SqlWriter, depth = 0): boolean {
  const expr = unwrap(node);
  if (!expr || depth > 8) return false;
  const ctx = w.ctx;
  if (expr.name === 'BinaryExpression') {
    const [left, op, right] = children(expr);
    const operator = op ? ctx.text.slice(op.from, op.to) : '';
    if ((operator === '&' || operator === '|' || operator === 'and' || operator === 'or') && left && right) {
      w.raw('(', expr);
      if (!saCondition(left, w, depth + 1)) w.raw('true', left);
      w.raw(operator === '&' || operator === 'and' ? ' AND ' : ' OR ', op!);
      if (!saCondition(right, w, depth + 1)) w.raw('true', right);
      w.raw(')', expr);
      return true;
    }
    if (op?.name === 'CompareOp' && left && right && COMPARE[operator]) {
      const column = columnOf(left, ctx);
      if (!column) return false;
      w.raw(column, left);
      if (unwrap(right)?.name === 'None') {
        w.raw(operator === '==' ? ' IS NULL' : ' IS NOT NULL', right);
        return true;
      }
      w.raw(` ${COMPARE[operator]} `, op);
      w.value(right, right);
      return true;
    }
    return false;
  }
  if (expr.name === 'CallExpression') {
    const callee = expr.firstChild!;
    const name = ctx.qualify(callee) ?? dottedName(callee, ctx.text) ?? '';
    const args = argsOf(expr.lastChild, ctx.text);
    if (/(^|\.)(and_|or_)$/.test(name)) {
      w.raw('(', expr);
      args.forEach((a, k) => {
        if (k > 0) w.raw(/and_$/.test(name) ? ' AND ' : ' OR ', a.value);
        if (!saCondition(a.value, w, depth + 1)) w.raw('true', a.value);
      });
      w.raw(')', expr);
      return true;
    }
    if (callee.name === 'MemberExpression') {
      const method = ctx.text.slice(callee.lastChild!.from, callee.lastChild!.to);
      const column = columnOf(callee.firstChild!, ctx);
      if (column && (method === 'in_' || method === 'is_' || method === 'isnot' || method === 'is_not')) {
        if (method === 'in_') {
          const list = positional(args, 0);
          w.raw(`${column} IN `, expr);
          if (!list || !writeSubquery(w, unwrap(list)!)) {
            w.raw('(SELECT unnest(', expr);
            w.placeholder(list, expr);
            w.raw('))', expr);
          }
        } else w.raw(`${column} IS ${method === 'is_' ? '' : 'NOT '}NULL`, expr);
        return true;
      }
    }
  }
  return false;
}

function saWhere(steps: Step[], w: SqlWriter): void {
  let first = true;
  for (const step of steps) {
    if (step.method === 'where' || step.method === 'filter') {
      for (const a of step.args.filter((x) => !x.name && !x.star)) {
        const at = w.out.text.length;
        w.raw(first ? ' WHERE ' : ' AND ', a.value);
        if (!saCondition(a.value, w)) {
          // Not read: leave it out.
          w.out.text = w.out.text.slice(0, at);
          w.out.starts.length = at;
          w.out.ends.length = at;
          continue;
        }
        first = false;
      }
    } else if (step.method === 'filter_by') {
      for (const a of step.args.filter((x) => x.name)) {
        w.raw(first ? ' WHERE ' : ' AND ', a.value);
        first = false;
        w.raw(`${a.name} = `, a.value);
        w.value(a.value, a.value);
      }
    }
  }
}

/** values(status="done", attempts=Job.attempts + 1) or values({Job.status: "done"}) / update({"status": "done"}). */
function saAssignments(args: Arg[], w: SqlWriter): boolean {
  const pairs: [string, Node, Node][] = [];
  for (const a of args) if (a.name) pairs.push([a.name, a.value, a.value]);
  const dict = unwrap(positional(args, 0));
  if (dict?.name === 'DictionaryExpression') {
    const parts = children(dict).filter((c) => c.name !== '{' && c.name !== '}');
    for (let i = 0; i + 2 < parts.length + 1; i++) {
      if (parts[i].name === ',') continue;
      const key = parts[i];
      const value = parts[i + 2];
      if (parts[i + 1]?.name !== ':' || !value) break;
      const column = literal(key, w.ctx) ?? columnOf(key, w.ctx);
      if (column) pairs.push([column, value, key]);
      i += 2;
    }
  }
  if (pairs.length === 0) return false;
  pairs.forEach(([column, value, at], k) => {
    if (k > 0) w.raw(', ', at);
    w.raw(`${column} = `, at);
    w.value(value, value);
  });
  return true;
}

/**
 * SQLAlchemy statements as SQL: select(M)...with_for_update(skip_locked=True),
 * update(M).where(...).values(...), delete(M).where(...), insert(M).values(...),
 * and session.query(M)....with_for_update(...)/.update({...})/.delete().
 * A name holding such a statement is followed to its one assignment.
 */
export function sqlalchemyStatement(node: Node, ctx: OrmContext, depth = 0): BuiltStatement | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) {
    const value = ctx.valueOf(expr);
    return value ? sqlalchemyStatement(value, ctx, depth + 1) : undefined;
  }
  if (!expr || expr.name !== 'CallExpression') return undefined;
  const chain = flatten(expr, ctx.text);
  // The builder: select(M) / update(M) / delete(M) / insert(M) at the root, or session.query(M).
  let rootCall: Node | undefined;
  let kind: string | undefined;
  let steps: Step[] = [];
  let modelArg: Node | undefined;
  if (chain && chain.steps[0].method === 'query' && chain.steps.length > 1) {
    kind = 'query';
    modelArg = positional(chain.steps[0].args, 0);
    steps = chain.steps.slice(1);
    rootCall = chain.steps[0].node;
  } else {
    const root = chain ? chain.root : expr;
    if (root.name !== 'CallExpression') return undefined;
    const name = ctx.qualify(root.firstChild!) ?? '';
    const builder = /^sqlalchemy(\.sql|\.sql\.expression|\.future|\.dialects\.postgresql)?\.(select|update|delete|insert)$/.exec(name);
    if (!builder) return undefined;
    kind = builder[2];
    modelArg = positional(argsOf(root.lastChild, ctx.text), 0);
    steps = chain ? chain.steps : [];
    rootCall = root;
  }
  const model = modelArg ? (ctx.model(modelArg) ?? ownerModel(modelArg, ctx)) : undefined;
  if (!model || !rootCall) return undefined;
  const w = new SqlWriter(ctx);
  const last = steps[steps.length - 1];
  const lock = steps.find((s) => s.method === 'with_for_update');
  if (kind === 'update' || (kind === 'query' && last?.method === 'update')) {
    w.raw(`UPDATE ${model.table} SET `, rootCall);
    const values = kind === 'update' ? steps.filter((s) => s.method === 'values').flatMap((s) => s.args) : last.args;
    if (!saAssignments(values, w)) return undefined;
    saWhere(steps, w);
    if (steps.some((s) => s.method === 'returning')) w.raw(' RETURNING id', steps.find((s) => s.method === 'returning')!.node);
  } else if (kind === 'delete' || (kind === 'query' && last?.method === 'delete')) {
    w.raw(`DELETE FROM ${model.table}`, rootCall);
    saWhere(steps, w);
    if (steps.some((s) => s.method === 'returning')) w.raw(' RETURNING id', steps.find((s) => s.method === 'returning')!.node);
  } else if (kind === 'insert') {
    const values = steps.filter((s) => s.method === 'values').flatMap((s) => s.args).filter((a) => a.name);
    if (values.length === 0) return undefined;
    w.raw(`INSERT INTO ${model.table} (${values.map((a) => a.name).join(', ')}) VALUES (`, rootCall);
    values.forEach((a, k) => {
      if (k > 0) w.raw(', ', a.value);
      w.value(a.value, a.value);
    });
    w.raw(')', rootCall);
  } else if (lock) {
    writeSelect(w, rootCall, modelArg!, model, steps);
    return { ...w.build(span(expr)), returnsInstance: { table: model.table, name: model.name } };
  } else {
    if (kind === 'query' && last && ['first', 'one', 'one_or_none', 'get'].includes(last.method)) {
      return { host: emptyHost(expr), params: [], returnsInstance: { table: model.table, name: model.name } };
    }
    return undefined;
  }
  return w.build(span(expr));
}

/** SELECT <column or *> FROM t WHERE ... [LIMIT 1] FOR UPDATE [SKIP LOCKED]: a select() chain. */
function writeSelect(w: SqlWriter, rootCall: Node, selected: Node, model: ModelRef, steps: Step[]): void {
  const ctx = w.ctx;
  const column = ctx.model(selected) ? undefined : columnOf(selected, ctx);
  w.raw(`SELECT ${column ?? '*'} FROM ${model.table}`, rootCall);
  saWhere(steps, w);
  const last = steps[steps.length - 1];
  const limit = steps.find((s) => s.method === 'limit');
  if (limit || (last && ['first', 'one', 'one_or_none', 'scalar'].includes(last.method))) w.raw(' LIMIT 1', (limit ?? last).node);
  const lock = steps.find((s) => s.method === 'with_for_update');
  if (!lock) return;
  const skip = keyword(lock.args, 'skip_locked');
  const nowait = keyword(lock.args, 'nowait');
  w.raw(isTrue(keyword(lock.args, 'key_share'), ctx) || isTrue(keyword(lock.args, 'read'), ctx) ? ' FOR SHARE' : ' FOR UPDATE', lock.node);
  if (isTrue(skip, ctx)) w.raw(' SKIP LOCKED', skip!);
  else if (isTrue(nowait, ctx)) w.raw(' NOWAIT', nowait!);
}

/** select(jobs.c.id) / select(Job.id): the model the column belongs to. */
function ownerModel(node: Node, ctx: OrmContext): ModelRef | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'MemberExpression') return undefined;
  let owner = expr.firstChild ?? undefined;
  if (owner?.name === 'MemberExpression' && ctx.text.slice(owner.from, owner.to).endsWith('.c')) owner = owner.firstChild ?? undefined;
  return owner ? ctx.model(owner) : undefined;
}

/** `select(...)....scalar_subquery()` as a value: its SQL in parentheses, or false when it is not one. */
function writeSubquery(w: SqlWriter, node: Node): boolean {
  const ctx = w.ctx;
  const chain = flatten(node, ctx.text);
  const root = chain ? chain.root : node;
  if (root.name !== 'CallExpression' || !/^sqlalchemy(\.sql|\.sql\.expression|\.future)?\.select$/.test(ctx.qualify(root.firstChild!) ?? '')) return false;
  const selected = positional(argsOf(root.lastChild, ctx.text), 0);
  const model = selected ? (ctx.model(selected) ?? ownerModel(selected, ctx)) : undefined;
  if (!model || !selected) return false;
  w.raw('(', node);
  writeSelect(w, root, selected, model, chain ? chain.steps : []);
  w.raw(')', node);
  return true;
}

/** session.delete(job): DELETE of the instance's row. */
export function deleteInstance(instance: ModelRef, at: Node): BuiltStatement {
  const w = new SqlWriter({ text: '', qualify: () => undefined, valueOf: () => undefined, isParameter: () => false, model: () => undefined, instance: () => undefined });
  w.raw(`DELETE FROM ${instance.table} WHERE id = $1`, at);
  return { ...w.build(span(at)), params: [{ kind: 'unknown' }] };
}

/** `job.status = "done"; job.attempts = Job.attempts + 1` on a SQLAlchemy instance: the one UPDATE its session flushes. */
export function updateInstance(instance: ModelRef, assigned: Map<string, { value: Node; at: Node }>, ctx: OrmContext): BuiltStatement | undefined {
  const writes = [...assigned];
  if (writes.length === 0) return undefined;
  const first = writes[0][1].at;
  const w = new SqlWriter(ctx);
  w.raw(`UPDATE ${instance.table} SET `, first);
  writes.forEach(([column, { value, at }], k) => {
    if (k > 0) w.raw(', ', at);
    w.raw(`${column} = `, at);
    w.value(value, value);
  });
  w.raw(' WHERE id = ', first);
  w.placeholder(undefined, first);
  return w.build(span(first));
}

/**
 * A SQLAlchemy read of one row: session.query(M)...first(), session.get(M, id),
 * session.scalars(select(M)...).first(), session.execute(select(M)...).scalar_one().
 */
export function sqlalchemyInstanceRead(node: Node, ctx: OrmContext): BuiltStatement | undefined {
  const chain = flatten(node, ctx.text);
  if (!chain) return undefined;
  const { steps } = chain;
  if (steps[0].method === 'get' && steps.length === 1) {
    const model = positional(steps[0].args, 0);
    const ref = model ? ctx.model(model) : undefined;
    return ref ? { host: emptyHost(node), params: [], returnsInstance: { table: ref.table, name: ref.name } } : undefined;
  }
  const direct = sqlalchemyStatement(node, ctx);
  if (direct?.returnsInstance) return direct;
  // session.scalars(stmt).first() / session.execute(stmt).scalar_one()
  const run = steps.findIndex((s) => s.method === 'scalars' || s.method === 'execute' || s.method === 'scalar');
  if (run < 0) return undefined;
  const statement = positional(steps[run].args, 0);
  const built = statement ? sqlalchemyStatement(statement, ctx) : undefined;
  const model = built?.returnsInstance ?? selectModel(statement, ctx);
  return model ? { host: emptyHost(node), params: [], returnsInstance: model } : undefined;
}

function selectModel(node: Node | undefined, ctx: OrmContext, depth = 0): ModelRef | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) expr = unwrap(ctx.valueOf(expr));
  if (expr?.name !== 'CallExpression') return undefined;
  const chain = flatten(expr, ctx.text);
  const root = chain ? chain.root : expr;
  if (root.name !== 'CallExpression' || !/\.select$/.test(ctx.qualify(root.firstChild!) ?? '')) return undefined;
  const model = positional(argsOf(root.lastChild, ctx.text), 0);
  const ref = model ? ctx.model(model) : undefined;
  return ref ? { table: ref.table, name: ref.name } : undefined;
}
