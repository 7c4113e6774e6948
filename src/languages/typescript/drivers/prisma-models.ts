// Prisma model calls as the SQL they send, so the queue rules judge a Prisma
// claim, finish, heartbeat and sweep as they judge raw SQL. Prisma names the
// table after the model and the columns after its fields, quoted
// (`"Job"."leasedUntil"`), unless the schema maps them (the scan does not
// read schema.prisma: the quoted field is the column).
//
// - writes: `update`/`updateMany({ where, data })` are UPDATE, `delete`/
//   `deleteMany({ where })` DELETE; `data` operations (`increment`, `set`)
//   are assignments;
// - reads: `findFirst`/`findFirstOrThrow`/`findUnique`/`findUniqueOrThrow`/
//   `findMany`/`count` are SELECT (`where`, `orderBy`, `take`, `skip`);
// - filters: fields and their operators (`equals`, `not`, `lt`, `lte`, `gt`,
//   `gte`, `in`, `notIn`), `AND`, `OR`, `NOT`. A relation filter, a JSON
//   filter or a cursor is not read: the call sends nothing the scan could judge;
// - a write whose filter takes the row a read of the same model picked in the
//   same function (`const job = await prisma.job.findFirst({ where })` then
//   `updateMany({ where: { id: job.id, status: 'queued' }, data })`) takes
//   it by that read: `"id" = (SELECT "id" FROM "Job" WHERE ... LIMIT 1)`, so
//   the read's filter (its attempt limit, the expired leases it takes back)
//   is the claim's predicate, as a subquery is in SQL. The first row of a
//   findMany (`const [job] = await prisma.job.findMany({ where, take: 1 })`)
//   is such a row; the rows of a findMany taken by their ids (`where: { id:
//   { in: jobs.map((j) => j.id) } }`) are `"id" IN (SELECT "id" FROM "Job"
//   WHERE ... LIMIT <take>)`: a batch claim of the rows the read picked.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { SqlWriter, type ChainReader } from '../builder-sql.ts';
import { propertyName, unwrap, type Node } from '../syntax.ts';

/** Prisma's comparison operators on one field, as SQL. */
const OPERATORS: Record<string, string> = { equals: '=', not: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };
const ARITHMETIC: Record<string, string> = { increment: '+', decrement: '-', multiply: '*', divide: '/' };
const READS = new Set(['findFirst', 'findFirstOrThrow', 'findUnique', 'findUniqueOrThrow', 'findMany', 'count']);
/** Reads that return one row: a write may take the row they picked. */
const ONE_ROW = new Set(['findFirst', 'findFirstOrThrow', 'findUnique', 'findUniqueOrThrow']);
/** Reads that return rows: a write may take those rows, or the first of them (`const [job] = ...`). */
const ROWS = new Set(['findMany']);

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
const tableOf = (model: string) => quoted(model[0].toUpperCase() + model.slice(1));

type Fields = [string, TSESTree.Property][];

/** The fields of an object literal with plain keys, or undefined when one is spread or computed. */
function fields(node: Node | undefined): Fields | undefined {
  const object = unwrap(node);
  if (object?.type !== 'ObjectExpression') return undefined;
  const out: Fields = [];
  for (const p of object.properties) {
    if (p.type !== 'Property' || p.computed) return undefined;
    const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
    if (key === undefined) return undefined;
    out.push([key, p]);
  }
  return out;
}

const isNull = (node: Node | undefined) => node?.type === 'Literal' && node.value === null;
/** `undefined` as a filter's value: Prisma leaves the filter out. */
const isUndefined = (node: Node | undefined) => node?.type === 'Identifier' && node.name === 'undefined';

/**
 * A read of a model in the same function whose row a write takes: `job.id`
 * where `const job = await tx.job.findFirst({ where })` or `const [job] =
 * await tx.job.findMany({ where })` (one row); or whose rows it takes: `{ in:
 * jobs.map((j) => j.id) }` where `const jobs = await tx.job.findMany(...)`.
 */
interface PickedRow {
  read: TSESTree.CallExpression;
  field: string;
  /** The read's rows (`"id" IN (SELECT ...)`), not its first (`"id" = (SELECT ... LIMIT 1)`). */
  rows: boolean;
}

/** Writes a Prisma filter, `where` or a member of AND/OR/NOT, as SQL conditions joined by AND; false when it cannot. */
class FilterWriter {
  /** The one field that takes the picked row: `id` when the filter compares it so, else the first. The others are values. */
  private pickKey?: string;

  constructor(
    private readonly w: SqlWriter,
    /** The model of the write, for a row picked by a read of it; undefined in a read. */
    private readonly model?: string,
  ) {}

  /** `{ a, b: { lt: 5 }, OR: [...] }` as `"a" = $1 AND "b" < 5 AND (...)`; `wrote` false for an empty filter. */
  filter(node: Node | undefined, depth = 0): { ok: boolean; wrote: boolean } {
    const parts = fields(node);
    if (!parts || depth > 6) return { ok: false, wrote: false };
    if (depth === 0 && this.model !== undefined) {
      const picking = parts.filter(([key, p]) => pickedRow(this.w, unwrap(p.value as Node), key, this.model!)).map(([key]) => key);
      this.pickKey = picking.includes('id') ? 'id' : picking[0];
    }
    let wrote = false;
    const and = (at: Node) => {
      if (wrote) this.w.text(' AND ', at);
      wrote = true;
    };
    for (const [key, p] of parts) {
      const value = unwrap(p.value as Node);
      if (isUndefined(value)) continue;
      if (key === 'AND' || key === 'OR' || key === 'NOT') {
        const members = value?.type === 'ArrayExpression' ? (value.elements as (Node | null)[]) : [value];
        if (members.some((m) => !m || m.type === 'SpreadElement')) return { ok: false, wrote };
        if (members.length === 0) continue;
        and(p);
        this.w.text(key === 'NOT' ? 'NOT (' : '(', p);
        let first = true;
        for (const member of members as Node[]) {
          if (!first) this.w.text(key === 'OR' ? ' OR ' : ' AND ', member);
          first = false;
          this.w.text('(', member);
          const inner = this.filter(member, depth + 1);
          if (!inner.ok) return { ok: false, wrote };
          if (!inner.wrote) this.w.text('TRUE', member);
          this.w.text(')', member);
        }
        this.w.text(')', p);
        continue;
      }
      and(p);
      if (!this.field(key, p, value, depth)) return { ok: false, wrote };
    }
    return { ok: true, wrote };
  }

  /** One field's filter: a value, null, or an object of operators. */
  private field(key: string, p: TSESTree.Property, value: Node | undefined, depth: number): boolean {
    const w = this.w;
    const column = quoted(key);
    if (depth > 6) return false;
    const picked = key === this.pickKey && depth === 0 ? pickedRow(w, value, key, this.model!) : undefined;
    if (picked) return this.picked(column, p, picked);
    if (value?.type !== 'ObjectExpression') {
      if (isNull(value)) {
        w.text(`${column} IS NULL`, p);
        return true;
      }
      w.text(`${column} = `, p);
      w.value(p.value as Node);
      return true;
    }
    const operators = fields(value);
    if (!operators || operators.length === 0 || !operators.every(([op]) => op in OPERATORS || op === 'in' || op === 'notIn')) return false; // a relation or JSON filter
    for (const [i, [op, o]] of operators.entries()) {
      if (i > 0) w.text(' AND ', o);
      const operand = unwrap(o.value as Node);
      if (op === 'in' || op === 'notIn') {
        w.text(`${column} ${op === 'in' ? '= ANY' : '<> ALL'}(`, o);
        w.value(o.value as Node);
        w.text(')', o);
      } else if (isNull(operand)) w.text(`${column} IS ${op === 'not' ? 'NOT ' : ''}NULL`, o);
      else if (op === 'not' && operand?.type === 'ObjectExpression') {
        // `not: { lt: 5 }`: the nested filter, negated.
        w.text('NOT (', o);
        if (!this.field(key, o, operand, depth + 1)) return false;
        w.text(')', o);
      } else {
        w.text(`${column} ${OPERATORS[op]} `, o);
        w.value(o.value as Node);
      }
    }
    return true;
  }

  /**
   * `"id" = (SELECT "id" FROM "Job" WHERE <the read's filter> ... LIMIT 1)`: the row the read picked;
   * `"id" IN (SELECT "id" FROM "Job" WHERE ... LIMIT <take>)`: the rows it picked.
   */
  private picked(column: string, p: TSESTree.Property, picked: PickedRow): boolean {
    const w = this.w;
    w.text(`${column} ${picked.rows ? 'IN' : '='} (`, p);
    if (!select(w, picked.read, this.model!, picked.rows ? 'findMany' : 'findFirst', [quoted(picked.field)])) return false;
    w.text(')', p);
    return true;
  }
}

/**
 * The row or rows of a read of the same model in the function that a write's
 * filter on `key` takes: `job.id` (or `job?.id`, `job!.id`) where `job` is a
 * const bound to a one-row read, or the first element of a findMany
 * (`const [job] = ...`); `{ in: jobs.map((j) => j.id) }` (or a const bound to
 * that map) where `jobs` is a const bound to a findMany.
 */
function pickedRow(w: SqlWriter, value: Node | undefined, key: string, model: string): PickedRow | undefined {
  let found: { read: Node | undefined; methods: Set<string>; rows: boolean } | undefined;
  if (value?.type === 'MemberExpression' && propertyName(value) === key) {
    const holder = unwrap(value.object);
    if (holder?.type !== 'Identifier') return undefined;
    const element = w.host.elementOf?.(holder);
    if (element) found = element.index === 0 ? { read: unwrap(element.init), methods: ROWS, rows: false } : undefined;
    else found = { read: unwrap(w.host.constantOf?.(holder)), methods: ONE_ROW, rows: false };
  } else if (value?.type === 'ObjectExpression') {
    const operators = fields(value);
    if (operators?.length !== 1 || operators[0][0] !== 'in') return undefined;
    const rows = mappedRows(w, unwrap(operators[0][1].value as Node), key);
    found = rows && { read: unwrap(w.host.constantOf?.(rows)), methods: ROWS, rows: true };
  }
  const read = found?.read;
  if (!found || read?.type !== 'CallExpression') return undefined;
  const call = modelCall(w, read);
  if (!call || call.model !== model || !found.methods.has(call.method)) return undefined;
  // A read whose filter the scan cannot write leaves the write taking a value (`"id" = $1`), as before.
  if (!select(new SqlWriter(w.host), read, model, found.rows ? 'findMany' : 'findFirst', [quoted(key)])) return undefined;
  return { read, field: key, rows: found.rows };
}

/** `jobs.map((j) => j.id)`, `jobs.map(({ id }) => id)` (or a const bound to it): the name of the rows whose `key` it lists. */
function mappedRows(w: SqlWriter, node: Node | undefined, key: string, depth = 0): TSESTree.Identifier | undefined {
  if (node?.type === 'Identifier' && depth === 0) return mappedRows(w, unwrap(w.host.constantOf?.(node)), key, depth + 1);
  if (node?.type !== 'CallExpression' || node.arguments.length !== 1) return undefined;
  const callee = unwrap(node.callee);
  const rows = callee?.type === 'MemberExpression' && propertyName(callee) === 'map' ? unwrap(callee.object) : undefined;
  const fn = unwrap(node.arguments[0] as Node);
  if (rows?.type !== 'Identifier' || (fn?.type !== 'ArrowFunctionExpression' && fn?.type !== 'FunctionExpression') || fn.params.length !== 1) return undefined;
  let body: Node | undefined = fn.body;
  if (body?.type === 'BlockStatement') body = body.body.length === 1 && body.body[0].type === 'ReturnStatement' ? (body.body[0].argument ?? undefined) : undefined;
  body = unwrap(body);
  const param = fn.params[0];
  // `(j) => j.id`
  if (param.type === 'Identifier') {
    const object = body?.type === 'MemberExpression' ? unwrap(body.object) : undefined;
    return body?.type === 'MemberExpression' && propertyName(body) === key && object?.type === 'Identifier' && object.name === param.name ? rows : undefined;
  }
  // `({ id }) => id`
  if (param.type === 'ObjectPattern' && body?.type === 'Identifier') {
    const bound = param.properties.find((p) => p.type === 'Property' && !p.computed && p.key.type === 'Identifier' && p.key.name === key);
    const local = bound?.type === 'Property' ? bound.value : undefined;
    return local?.type === 'Identifier' && local.name === body.name ? rows : undefined;
  }
  return undefined;
}

/** `<client>.<model>.<method>(...)` on a Prisma client or transaction client. */
function modelCall(w: SqlWriter, call: TSESTree.CallExpression): { model: string; method: string } | undefined {
  const callee = unwrap(call.callee);
  if (callee?.type !== 'MemberExpression') return undefined;
  const delegate = unwrap(callee.object);
  if (delegate?.type !== 'MemberExpression') return undefined;
  const model = propertyName(delegate);
  const method = propertyName(callee);
  if (!model || !method || model.startsWith('$')) return undefined;
  const on = w.host.value(delegate);
  if (on?.kind !== 'pool' && on?.kind !== 'tx') return undefined;
  return { model, method };
}

/** The argument object's member `name`. */
function argOf(call: TSESTree.CallExpression, name: string): Node | undefined {
  return fields(call.arguments[0] as Node | undefined)?.find(([key]) => key === name)?.[1].value as Node | undefined;
}

/** `orderBy: { runAt: 'asc' }` or `[{ priority: 'desc' }, { id: 'asc' }]`; nothing for what it cannot read (a relation's field). */
function orderBy(w: SqlWriter, node: Node | undefined): void {
  const n = unwrap(node);
  const items = n?.type === 'ArrayExpression' ? (n.elements as (Node | null)[]) : n ? [n] : [];
  const terms: [string, TSESTree.Property][] = [];
  for (const item of items) {
    for (const [key, p] of fields(item ?? undefined) ?? []) {
      const v = unwrap(p.value as Node);
      // `{ runAt: 'asc' }` or `{ runAt: { sort: 'asc', nulls: 'last' } }`
      const sort = v?.type === 'ObjectExpression' ? unwrap(fields(v)?.find(([k]) => k === 'sort')?.[1].value as Node | undefined) : v;
      const direction = sort?.type === 'Literal' ? sort.value : undefined;
      if (direction !== 'asc' && direction !== 'desc') return;
      terms.push([`${quoted(key)} ${direction.toUpperCase()}`, p]);
    }
  }
  terms.forEach(([text, p], i) => w.text(`${i === 0 ? ' ORDER BY ' : ', '}${text}`, p));
}

/** A read as its SELECT: the columns (or `*`, or count), the filter, the order, the limit. */
function select(w: SqlWriter, call: TSESTree.CallExpression, model: string, method: string, columns?: string[]): boolean {
  if (argOf(call, 'cursor') !== undefined || argOf(call, 'distinct') !== undefined) return false;
  const list = method === 'count' ? 'count(*)' : (columns ?? ['*']).join(', ');
  w.text(`SELECT ${list} FROM ${tableOf(model)}`, call);
  const where = argOf(call, 'where');
  if (where !== undefined) {
    w.text(' WHERE ', call);
    const { ok, wrote } = new FilterWriter(w).filter(where);
    if (!ok) return false;
    if (!wrote) w.text('TRUE', call);
  }
  if (method !== 'count') orderBy(w, argOf(call, 'orderBy'));
  const take = argOf(call, 'take');
  if (ONE_ROW.has(method)) w.text(' LIMIT 1', call);
  else if (take !== undefined) {
    w.text(' LIMIT ', call);
    w.value(take);
  }
  const skip = argOf(call, 'skip');
  if (skip !== undefined && method !== 'count') {
    w.text(' OFFSET ', call);
    w.value(skip);
  }
  return true;
}

/** `data: { status: 'done', attempts: { increment: 1 } }` as `"status" = 'done', "attempts" = "attempts" + 1`. */
function data(w: SqlWriter, node: Node | undefined): boolean {
  const parts = fields(node);
  if (!parts || parts.length === 0) return false;
  for (const [i, [key, p]] of parts.entries()) {
    if (i > 0) w.text(', ', p);
    const value = unwrap(p.value as Node);
    const operation = value?.type === 'ObjectExpression' ? fields(value) : undefined;
    if (operation) {
      const [op, o] = operation.length === 1 ? operation[0] : [];
      if (op === 'set') {
        w.text(`${quoted(key)} = `, p);
        w.value(o!.value as Node);
      } else if (op && ARITHMETIC[op]) {
        w.text(`${quoted(key)} = ${quoted(key)} ${ARITHMETIC[op]} `, p);
        w.value(o!.value as Node);
      } else return false; // a relation write (connect, create): not a column
      continue;
    }
    w.text(`${quoted(key)} = `, p);
    w.value(p.value as Node);
  }
  return true;
}

/** ` WHERE ...` of a write, reading a field that takes a row a read picked; false when the filter cannot be read. */
function writeWhere(w: SqlWriter, top: TSESTree.CallExpression, model: string): boolean {
  const where = argOf(top, 'where');
  if (where === undefined) return true;
  w.text(' WHERE ', top);
  const { ok, wrote } = new FilterWriter(w, model).filter(where);
  if (ok && !wrote) w.text('TRUE', top);
  return ok;
}

/** A model call on the client or a transaction client: `prisma.job.update({ where, data })`, `tx.job.findFirst({ where })`. */
export const readModelCall: ChainReader = ({ links, top, writer: w }) => {
  if (links.length !== 1) return false;
  const callee = unwrap(top.callee);
  const model = callee?.type === 'MemberExpression' && unwrap(callee.object)?.type === 'MemberExpression' ? propertyName(unwrap(callee.object) as TSESTree.MemberExpression) : undefined;
  if (!model || model.startsWith('$')) return false;
  const table = tableOf(model);
  const method = links[0].name;
  if (method === 'update' || method === 'updateMany') {
    w.text(`UPDATE ${table} SET `, top);
    if (!data(w, argOf(top, 'data'))) return false;
    if (!writeWhere(w, top, model)) return false;
    if (method === 'update') w.text(' RETURNING *', top);
    return true;
  }
  if (method === 'delete' || method === 'deleteMany') {
    w.text(`DELETE FROM ${table}`, top);
    return writeWhere(w, top, model);
  }
  if (READS.has(method)) return select(w, top, model, method);
  return false;
};
