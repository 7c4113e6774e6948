// Query builders as the SQL they send, so the queue rules judge an ORM's
// claim, finish and sweep as they judge raw SQL: Drizzle
// `db.update(jobs).set({ status: 'done' }).where(eq(jobs.id, id))`, Kysely
// `db.updateTable('jobs').set(...).where('id', '=', id).execute()`, Knex
// `knex('jobs').where({ id }).update({ ... })`, their deletes, and their
// locking selects (`.for('update', { skipLocked: true })`, `.forUpdate().skipLocked()`).
// The SQL is written here, each piece mapped to the code it comes from, and
// goes through the analyzer like any other; values the code computes are
// placeholders (their expressions are the site's params). Selects that lock no
// rows and inserts are left out: no rule reads them.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver } from '../../model/index.ts';
import { HostTextBuilder, type HostText } from '../host-text.ts';
import type { Value } from './drivers.ts';
import { isFunction, objectProperty, propertyName, stringValue, unwrap, type Node } from './syntax.ts';

export interface BuilderHost {
  /** What an expression holds (a pool, a transaction handle, a Drizzle table). */
  value(node: Node): Value | undefined;
}

export interface BuiltQuery {
  host: HostText;
  /** The receiver the chain starts on (`db`, `tx`, `trx`): where the query runs. */
  on: Value | undefined;
  driver: Driver;
  /** Expressions of the placeholders $1, $2, ... in order. */
  values: Node[];
  /** Every call of the chain: they are this one query. */
  calls: TSESTree.CallExpression[];
}

interface Link {
  name: string;
  call: TSESTree.CallExpression;
  args: Node[];
}

function isDb(v: Value | undefined): boolean {
  return v?.kind === 'pool' || v?.kind === 'tx' || v?.kind === 'conn';
}

/** The calls of a chain from its root: `db.update(jobs).set(x).where(y)` -> root `db`, links update, set, where. */
function chainOf(top: TSESTree.CallExpression): { root: Node; links: Link[] } | undefined {
  const links: Link[] = [];
  let node: Node | undefined = top;
  for (let i = 0; i < 40 && node; i++) {
    if (node.type === 'CallExpression') {
      const callee = unwrap(node.callee);
      if (callee?.type === 'MemberExpression') {
        const name = propertyName(callee);
        if (name === undefined) return undefined;
        links.unshift({ name, call: node, args: node.arguments as Node[] });
        node = unwrap(callee.object);
        continue;
      }
      // knex('jobs') / trx('jobs'): the root is the call of the pool itself.
      if (callee) {
        links.unshift({ name: '()', call: node, args: node.arguments as Node[] });
        return { root: callee, links };
      }
      return undefined;
    }
    return { root: node, links };
  }
  return undefined;
}

const TERMINALS = new Set(['execute', 'executeTakeFirst', 'executeTakeFirstOrThrow', 'then', 'run']);

/** A Drizzle table: `pgTable('jobs', { lockedUntil: timestamp('locked_until') })`. */
export interface TableValue {
  name: string;
  /** Property name -> column name. */
  columns: Map<string, string>;
}

/** The column a Drizzle column builder names: `timestamp('locked_until', ...).notNull()` -> locked_until. */
function columnName(key: string, init: Node | undefined): string {
  let n = unwrap(init);
  for (let i = 0; i < 20 && n?.type === 'CallExpression'; i++) {
    const callee = unwrap(n.callee);
    const first = stringValue(n.arguments[0] as Node | undefined);
    if (callee?.type === 'Identifier' && first) return first;
    n = callee?.type === 'MemberExpression' ? unwrap(callee.object) : undefined;
  }
  return snake(key);
}

/** camelCase -> snake_case: the column a key stands for when the code does not name it (Kysely's CamelCasePlugin, Drizzle's casing). */
export function snake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export function readTable(call: TSESTree.CallExpression): TableValue | undefined {
  const name = stringValue(call.arguments[0] as Node | undefined);
  const shape = unwrap(call.arguments[1] as Node | undefined);
  if (!name) return undefined;
  const columns = new Map<string, string>();
  if (shape?.type === 'ObjectExpression') {
    for (const p of shape.properties) {
      if (p.type !== 'Property' || p.computed) continue;
      const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
      if (key) columns.set(key, columnName(key, p.value as Node));
    }
  }
  return { name, columns };
}

class Writer {
  readonly out = new HostTextBuilder();
  readonly values: Node[] = [];
  /** Calls of builders inlined as subqueries: they are part of this query. */
  readonly calls: TSESTree.CallExpression[] = [];

  constructor(private readonly host: BuilderHost) {}

  text(chars: string, at: Node | { range: [number, number] }): void {
    this.out.push(chars, at.range[0], at.range[1]);
  }

  param(node: Node): void {
    this.values.push(node);
    this.text(`$${this.values.length}`, node);
  }

  /** A column reference: `jobs.lockedUntil` (a Drizzle table's column), `'locked_until'`, `'jobs.locked_until'`. */
  column(node: Node): string | undefined {
    const n = unwrap(node);
    if (!n) return undefined;
    const literal = stringValue(n);
    if (literal !== undefined) {
      if (!/^[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)?( as \w+)?$/.test(literal)) return undefined;
      return literal.split(' ')[0].split('.').pop();
    }
    if (n.type === 'MemberExpression') {
      const table = this.host.value(n.object);
      const key = propertyName(n);
      if (table?.kind === 'table' && key) return table.table.columns.get(key) ?? snake(key);
    }
    return undefined;
  }

  /** A value: a literal, a column, an SQL template or raw text, or a placeholder for what the code computes. */
  value(node: Node, depth = 0): void {
    const n = unwrap(node);
    if (!n || depth > 6) return;
    if (n.type === 'Literal') {
      if (typeof n.value === 'string') this.text(`'${n.value.replace(/'/g, "''")}'`, n);
      else if (typeof n.value === 'number') this.text(String(n.value), n);
      else if (typeof n.value === 'boolean') this.text(n.value ? 'TRUE' : 'FALSE', n);
      else if (n.value === null) this.text('NULL', n);
      else this.param(n);
      return;
    }
    const column = n.type === 'MemberExpression' ? this.column(n) : undefined;
    if (column) {
      this.text(column, n);
      return;
    }
    if (n.type === 'TaggedTemplateExpression' && /(^|\.)sql$/.test(this.dotted(n.tag) ?? '')) {
      this.template(n.quasi);
      return;
    }
    if (n.type === 'CallExpression') {
      const callee = unwrap(n.callee);
      const name = callee?.type === 'MemberExpression' ? propertyName(callee) : callee?.type === 'Identifier' ? callee.name : undefined;
      const dotted = this.dotted(callee);
      // knex.raw('attempts + 1'), sql.raw('now()'), knex.fn.now()
      if ((name === 'raw' || name === 'ref') && stringValue(n.arguments[0] as Node | undefined) !== undefined) {
        const text = stringValue(n.arguments[0] as Node)!;
        this.text(name === 'ref' ? text.split('.').pop()! : `(${text})`, n);
        return;
      }
      if (dotted?.endsWith('fn.now')) {
        this.text('now()', n);
        return;
      }
      // Kysely eb('attempts', '+', 1)
      if (n.arguments.length === 3 && stringValue(n.arguments[1] as Node) && /^[+\-*/]$/.test(stringValue(n.arguments[1] as Node)!)) {
        const left = this.column(n.arguments[0] as Node);
        if (left) {
          this.text(`(${left} ${stringValue(n.arguments[1] as Node)} `, n);
          this.value(n.arguments[2] as Node, depth + 1);
          this.text(')', n);
          return;
        }
      }
    }
    if (isFunction(n) && n.body && n.body.type !== 'BlockStatement') {
      this.value(n.body as Node, depth + 1);
      return;
    }
    this.param(n);
  }

  /** An SQL template's text, its interpolations as columns, nested templates or placeholders. */
  template(quasi: TSESTree.TemplateLiteral): void {
    quasi.quasis.forEach((q, i) => {
      const cooked = q.value.cooked ?? '';
      if (cooked) this.text(cooked, q);
      const e = quasi.expressions[i];
      if (e) this.value(e as Node, 1);
    });
  }

  dotted(node: Node | null | undefined): string | undefined {
    const n = unwrap(node);
    if (n?.type === 'Identifier') return n.name;
    if (n?.type === 'ThisExpression') return 'this';
    if (n?.type === 'MemberExpression') {
      const object = this.dotted(n.object);
      const name = propertyName(n);
      return object && name ? `${object}.${name}` : undefined;
    }
    return undefined;
  }
}

const OPERATORS: Record<string, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

/** A Drizzle condition: eq(jobs.id, id), and(...), or(...), lt(...), isNull(...), inArray(..., subquery), sql`...`. */
function drizzleCondition(w: Writer, node: Node, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined, depth = 0): boolean {
  const n = unwrap(node);
  if (!n || depth > 8) return false;
  if (n.type === 'TaggedTemplateExpression') {
    w.text('(', n);
    w.template(n.quasi);
    w.text(')', n);
    return true;
  }
  if (n.type !== 'CallExpression' || unwrap(n.callee)?.type !== 'Identifier') return false;
  const name = (unwrap(n.callee) as TSESTree.Identifier).name;
  const args = n.arguments as Node[];
  if (name === 'and' || name === 'or') {
    const parts = args.filter((a) => a && a.type !== 'SpreadElement');
    if (parts.length === 0) return false;
    w.text('(', n);
    parts.forEach((a, i) => {
      if (i > 0) w.text(` ${name.toUpperCase()} `, n);
      if (!drizzleCondition(w, a, build, depth + 1)) w.text('TRUE', a);
    });
    w.text(')', n);
    return true;
  }
  if (name === 'not' && args[0]) {
    w.text('NOT (', n);
    if (!drizzleCondition(w, args[0], build, depth + 1)) w.text('TRUE', n);
    w.text(')', n);
    return true;
  }
  const column = args[0] ? w.column(args[0]) : undefined;
  if (!column) return false;
  if (name in OPERATORS && args[1]) {
    w.text(`${column} ${OPERATORS[name]} `, n);
    w.value(args[1]);
    return true;
  }
  if (name === 'isNull' || name === 'isNotNull') {
    w.text(`${column} IS ${name === 'isNull' ? '' : 'NOT '}NULL`, n);
    return true;
  }
  if ((name === 'inArray' || name === 'notInArray') && args[1]) {
    w.text(`${column} ${name === 'inArray' ? '' : 'NOT '}IN (`, n);
    if (!subquery(w, args[1], build)) w.param(args[1]);
    w.text(')', n);
    return true;
  }
  return false;
}

/** A builder passed as a value: its SELECT, inline. */
function subquery(w: Writer, node: Node, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined): boolean {
  let n = unwrap(node);
  if (isFunction(n) && n.body && n.body.type !== 'BlockStatement') n = unwrap(n.body as Node);
  if (n?.type !== 'CallExpression') return false;
  const inner = build(n);
  if (!inner) return false;
  // The inner text, its placeholders numbered after ours, each character where the inner text had it.
  const offset = w.values.length;
  const text = inner.host.text;
  for (let i = 0; i < text.length; ) {
    const placeholder = /^\$(\d+)/.exec(text.slice(i, i + 8));
    if (placeholder) {
      w.out.push(`$${Number(placeholder[1]) + offset}`, inner.host.starts[i], inner.host.ends[i]);
      i += placeholder[0].length;
      continue;
    }
    w.out.push(text[i], inner.host.starts[i], inner.host.ends[i]);
    i++;
  }
  w.values.push(...inner.values);
  w.calls.push(...inner.calls);
  return true;
}

/** A Kysely where: where('id', '=', id), where(eb => eb.and([...])), where(eb => eb('attempts', '<', 5)). */
function kyselyCondition(w: Writer, args: Node[], build: (top: TSESTree.CallExpression) => BuiltQuery | undefined, depth = 0): boolean {
  if (depth > 8) return false;
  if (args.length === 3) {
    const column = w.column(args[0]);
    const op = stringValue(args[1]);
    if (!column || !op || !/^(=|<>|!=|<|<=|>|>=|in|not in|is|is not|like)$/i.test(op)) return false;
    const span = { range: [args[0].range[0], args[2].range[1]] as [number, number] };
    w.text(`${column} ${op.toUpperCase()} `, span);
    const value = unwrap(args[2]);
    if (/in$/i.test(op)) {
      w.text('(', span);
      if (!subquery(w, args[2], build)) w.param(args[2]);
      w.text(')', span);
    } else if (value?.type === 'Literal' && value.value === null) {
      w.text('NULL', value);
    } else {
      w.value(args[2]);
    }
    return true;
  }
  if (args.length === 1) {
    let fn = unwrap(args[0]);
    if (isFunction(fn) && fn.body && fn.body.type !== 'BlockStatement') fn = unwrap(fn.body as Node);
    if (fn?.type !== 'CallExpression') return false;
    const callee = unwrap(fn.callee);
    const name = callee?.type === 'MemberExpression' ? propertyName(callee) : undefined;
    if ((name === 'and' || name === 'or') && unwrap(fn.arguments[0] as Node)?.type === 'ArrayExpression') {
      const parts = (unwrap(fn.arguments[0] as Node) as TSESTree.ArrayExpression).elements.filter((e): e is TSESTree.Expression => !!e && e.type !== 'SpreadElement');
      if (parts.length === 0) return false;
      w.text('(', fn);
      parts.forEach((p, i) => {
        if (i > 0) w.text(` ${name.toUpperCase()} `, fn!);
        const inner = unwrap(p as Node);
        if (!(inner?.type === 'CallExpression' && kyselyCondition(w, inner.arguments as Node[], build, depth + 1))) w.text('TRUE', p);
      });
      w.text(')', fn);
      return true;
    }
    if (callee?.type === 'Identifier' && fn.arguments.length === 3) return kyselyCondition(w, fn.arguments as Node[], build, depth + 1);
  }
  return false;
}

/** A Knex where: where({ id, status: 'running' }), where('id', id), where('attempts', '<', 5), whereIn, whereNull, whereRaw. */
function knexCondition(w: Writer, link: Link, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined): boolean {
  const args = link.args;
  const name = link.name;
  if (name === 'whereNull' || name === 'whereNotNull') {
    const column = args[0] ? w.column(args[0]) : undefined;
    if (!column) return false;
    w.text(`${column} IS ${name === 'whereNull' ? '' : 'NOT '}NULL`, link.call);
    return true;
  }
  if (name === 'whereIn' || name === 'whereNotIn') {
    const column = args[0] ? w.column(args[0]) : undefined;
    if (!column || !args[1]) return false;
    w.text(`${column} ${name === 'whereIn' ? '' : 'NOT '}IN (`, link.call);
    if (!subquery(w, args[1], build)) w.param(args[1]);
    w.text(')', link.call);
    return true;
  }
  if (name === 'whereRaw') {
    const text = stringValue(args[0]);
    if (!text) return false;
    w.text(`(${text.replace(/\?/g, () => `$${w.values.length + 1}`)})`, link.call);
    return true;
  }
  const object = unwrap(args[0]);
  if (args.length === 1 && object?.type === 'ObjectExpression') {
    const parts = object.properties.filter((p) => p.type === 'Property' && !p.computed) as TSESTree.Property[];
    if (parts.length === 0) return false;
    parts.forEach((p, i) => {
      if (i > 0) w.text(' AND ', link.call);
      const key = p.key.type === 'Identifier' ? p.key.name : String((p.key as TSESTree.Literal).value);
      w.text(`${key} = `, p);
      w.value(p.value as Node);
    });
    return true;
  }
  if (args.length === 2 || args.length === 3) {
    const column = w.column(args[0]);
    const op = args.length === 3 ? stringValue(args[1]) : '=';
    if (!column || !op || !/^(=|<>|!=|<|<=|>|>=)$/.test(op)) return false;
    w.text(`${column} ${op} `, link.call);
    w.value(args[args.length - 1]);
    return true;
  }
  return false;
}

/** The assignments of `.set({...})` / `.update({...})`: `status = 'done', attempts = attempts + 1`. */
function assignments(w: Writer, node: Node | undefined, keyColumn: (key: string) => string): boolean {
  let object = unwrap(node);
  if (isFunction(object) && object.body && object.body.type !== 'BlockStatement') object = unwrap(object.body as Node);
  if (object?.type !== 'ObjectExpression') return false;
  const parts = object.properties.filter((p) => p.type === 'Property' && !p.computed) as TSESTree.Property[];
  if (parts.length === 0) return false;
  parts.forEach((p, i) => {
    if (i > 0) w.text(', ', p);
    const key = p.key.type === 'Identifier' ? p.key.name : String((p.key as TSESTree.Literal).value);
    w.text(`${keyColumn(key)} = `, p);
    w.value(p.value as Node);
  });
  return true;
}

/**
 * The query a chain of builder calls sends, when `top` is the last call of
 * one that runs on a pool, a client or a transaction handle of a known driver.
 */
export function builtQuery(top: TSESTree.CallExpression, host: BuilderHost, executes: boolean): BuiltQuery | undefined {
  const chain = chainOf(top);
  if (!chain || chain.links.length === 0) return undefined;
  const build = (inner: TSESTree.CallExpression) => builtQuery(inner, host, true);
  let on = host.value(chain.root);
  // this.db('jobs') / repo.knex('jobs'): the pool called as a function, reached through a member.
  const calleeOfFirst = unwrap(chain.links[0].call.callee);
  if (!isDb(on) && calleeOfFirst?.type === 'MemberExpression' && isDb(host.value(calleeOfFirst))) {
    on = host.value(calleeOfFirst);
    chain.links[0] = { ...chain.links[0], name: '()' };
  }
  const driver = on && 'driver' in on ? on.driver : on?.kind === 'conn' ? on.conn.driver : undefined;
  if (!on || !(on.kind === 'pool' || on.kind === 'tx' || on.kind === 'conn') || !driver) return undefined;
  const w = new Writer(host);
  const names = chain.links.map((l) => l.name);
  const link = (name: string) => chain.links.find((l) => l.name === name);
  const linksNamed = (re: RegExp) => chain.links.filter((l) => re.test(l.name));
  const first = chain.links[0];
  const calls = w.calls;
  calls.push(...chain.links.map((l) => l.call));

  if (driver === 'drizzle' && (first.name === 'update' || first.name === 'delete')) {
    const table = first.args[0] ? host.value(first.args[0]) : undefined;
    if (table?.kind !== 'table' || !executes) return undefined;
    const columnOf = (key: string) => table.table.columns.get(key) ?? snake(key);
    const where = link('where');
    if (first.name === 'update') {
      const set = link('set');
      if (!set) return undefined;
      w.text(`UPDATE ${table.table.name} SET `, first.call);
      if (!assignments(w, set.args[0], columnOf)) return undefined;
    } else {
      w.text(`DELETE FROM ${table.table.name}`, first.call);
    }
    if (where) {
      w.text(' WHERE ', where.call);
      if (!drizzleCondition(w, where.args[0], build)) return undefined;
    }
    if (link('returning')) w.text(' RETURNING *', link('returning')!.call);
    return { host: w.out.done({ start: top.range[0], end: top.range[1] }), on, driver, values: w.values, calls };
  }
  if (driver === 'drizzle' && (first.name === 'select' || first.name === 'selectDistinct') && link('from')) {
    // select().from(jobs).where(...).limit(1).for('update', { skipLocked: true })
    const from = link('from')!;
    const table = from.args[0] ? host.value(from.args[0]) : undefined;
    const lock = link('for');
    if (table?.kind !== 'table' || !lock || stringValue(lock.args[0]) !== 'update' || !executes) return undefined;
    w.text(`SELECT * FROM ${table.table.name}`, from.call);
    const where = link('where');
    if (where) {
      w.text(' WHERE ', where.call);
      if (!drizzleCondition(w, where.args[0], build)) return undefined;
    }
    const limit = link('limit');
    if (limit?.args[0]) {
      w.text(' LIMIT ', limit.call);
      w.value(limit.args[0]);
    }
    const options = unwrap(lock.args[1]);
    const skip = options?.type === 'ObjectExpression' ? unwrap(objectProperty(options, 'skipLocked')?.value as Node | undefined) : undefined;
    w.text(` FOR UPDATE${skip?.type === 'Literal' && skip.value === true ? ' SKIP LOCKED' : ''}`, lock.call);
    return { host: w.out.done({ start: top.range[0], end: top.range[1] }), on, driver, values: w.values, calls };
  }

  if (driver === 'kysely') {
    const table = stringValue(first.args[0])?.split(' ')[0];
    if (!table) return undefined;
    const runs = executes || TERMINALS.has(names[names.length - 1]);
    const wheres = linksNamed(/^where$/);
    const writeWheres = () => {
      wheres.forEach((wh, i) => {
        w.text(i === 0 ? ' WHERE ' : ' AND ', wh.call);
        if (!kyselyCondition(w, wh.args, build)) w.text('TRUE', wh.call);
      });
    };
    if (first.name === 'updateTable') {
      const set = link('set');
      if (!set || !runs) return undefined;
      w.text(`UPDATE ${table} SET `, first.call);
      if (!assignments(w, set.args[0], (k) => k)) return undefined;
      writeWheres();
    } else if (first.name === 'deleteFrom') {
      if (!runs) return undefined;
      w.text(`DELETE FROM ${table}`, first.call);
      writeWheres();
    } else if (first.name === 'selectFrom') {
      const lock = link('forUpdate');
      if (!lock || !runs) return undefined;
      w.text(`SELECT * FROM ${table}`, first.call);
      writeWheres();
      const limit = link('limit');
      if (limit?.args[0]) {
        w.text(' LIMIT ', limit.call);
        w.value(limit.args[0]);
      }
      w.text(` FOR UPDATE${link('skipLocked') ? ' SKIP LOCKED' : ''}`, lock.call);
    } else {
      return undefined;
    }
    if (names.some((n) => n.startsWith('returning'))) w.text(' RETURNING *', top);
    return { host: w.out.done({ start: top.range[0], end: top.range[1] }), on, driver, values: w.values, calls };
  }

  if (driver === 'knex') {
    const tableLink = first.name === '()' || first.name === 'from' || first.name === 'table' || first.name === 'into' ? first : link('from');
    const table = tableLink ? stringValue(tableLink.args[0])?.split(' ')[0] : undefined;
    if (!table) return undefined;
    const wheres = linksNamed(/^(where|andWhere|orWhere|whereIn|whereNotIn|whereNull|whereNotNull|whereRaw)$/);
    const writeWheres = () => {
      wheres.forEach((wh, i) => {
        w.text(i === 0 ? ' WHERE ' : wh.name === 'orWhere' ? ' OR ' : ' AND ', wh.call);
        if (!knexCondition(w, wh, build)) w.text('TRUE', wh.call);
      });
    };
    const update = link('update');
    const increment = link('increment') ?? link('decrement');
    const del = link('del') ?? link('delete');
    if (update || increment) {
      w.text(`UPDATE ${table} SET `, (update ?? increment)!.call);
      let wrote = false;
      if (update) wrote = assignments(w, update.args[0], (k) => k);
      if (increment) {
        const column = increment.args[0] ? w.column(increment.args[0]) : undefined;
        if (column) {
          if (wrote) w.text(', ', increment.call);
          w.text(`${column} = ${column} ${increment.name === 'increment' ? '+' : '-'} `, increment.call);
          if (increment.args[1]) w.value(increment.args[1]);
          else w.text('1', increment.call);
          wrote = true;
        }
      }
      if (!wrote) return undefined;
      writeWheres();
    } else if (del) {
      w.text(`DELETE FROM ${table}`, del.call);
      writeWheres();
    } else if (link('forUpdate') && executes) {
      w.text(`SELECT * FROM ${table}`, tableLink!.call);
      writeWheres();
      const limit = link('limit') ?? link('first');
      if (limit) {
        w.text(' LIMIT ', limit.call);
        if (limit.args[0] && limit.name === 'limit') w.value(limit.args[0]);
        else w.text('1', limit.call);
      }
      w.text(` FOR UPDATE${link('skipLocked') ? ' SKIP LOCKED' : ''}`, link('forUpdate')!.call);
    } else {
      return undefined;
    }
    if (link('returning')) w.text(' RETURNING *', link('returning')!.call);
    return { host: w.out.done({ start: top.range[0], end: top.range[1] }), on, driver, values: w.values, calls };
  }
  return undefined;
}
