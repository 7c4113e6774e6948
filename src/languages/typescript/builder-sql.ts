// Query builders as the SQL they send, so the queue rules judge an ORM's
// claim, finish and sweep as they judge raw SQL. This is the part every
// builder shares: the chain of calls from its root, and a writer that maps
// each piece of SQL to the code it comes from; what each call of a chain
// means is its driver module's (drivers/drizzle.ts, kysely.ts, knex.ts). The
// SQL goes through the analyzer like any other; values the code computes are
// placeholders (their expressions are the site's params). Selects that lock
// no rows and inserts are left out (no rule reads them), but for Prisma's
// reads: a write may take the row one picked (drivers/prisma-models.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver } from '../../model/index.ts';
import { HostTextBuilder, type HostText } from '../host-text.ts';
import type { TableValue, Value } from './flow/types.ts';
import { clockMilliseconds, clockOffset, isNewDate } from './clock.ts';
import { isFunction, namedProperties, propertyName, stringValue, unwrap, type Node } from './syntax.ts';

export interface BuilderHost {
  /** What an expression holds (a pool, a transaction handle, a table declared in code). */
  value(node: Node): Value | undefined;
  /** The initializer a constant name stands for (`LEASE_MS`), when the host can tell. */
  constantOf?(node: Node): Node | undefined;
  /** False when the file binds `name` to no initializer (no `const name = ...`), told without its constants (bound-names.ts). */
  mayBeBound?(name: string): boolean;
  /** `const [first] = rows`: the initializer a name is an element of, and its index. */
  elementOf?(node: Node): { init: Node; index: number } | undefined;
  /** `node` is a name imported from a module the walk cannot read. */
  importedUnread?(node: Node): boolean;
  /** The drivers the file imports. */
  readonly imports?: { readonly drivers: readonly Driver[] };
  /** What a chain whose root the walk cannot tell runs on, as a driver module tells from the chain (drizzle-builder.ts, knex-builder.ts). */
  unreadRoot?(root: Node, links: readonly ChainLink[]): RootOf | undefined;
  /** The file's program: for what the code around a query says of it (knex-builder.ts guardedLimit). */
  readonly program?: Node;
}

/** What a chain runs on, when a driver module tells: the value, the whole chain where it continues one held in a const, and whether it runs. */
export interface RootOf {
  on: Value;
  links?: ChainLink[];
  executes?: boolean;
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

export interface ChainLink {
  name: string;
  call: TSESTree.CallExpression;
  args: Node[];
}

/** Reads a chain's links as SQL into the writer; false when it is not a query the driver knows. */
export type ChainReader = (input: {
  links: ChainLink[];
  top: TSESTree.CallExpression;
  executes: boolean;
  writer: SqlWriter;
  build: (inner: TSESTree.CallExpression) => BuiltQuery | undefined;
  /** The node the chain starts on (`repo` of `repo.update(...)`): a driver may read what it was made from. */
  root?: Node;
}) => boolean;

function isDb(v: Value | undefined): boolean {
  return v?.kind === 'pool' || v?.kind === 'tx' || v?.kind === 'conn' || v?.kind === 'opaque';
}

/** The calls of a chain from its root: `db.update(jobs).set(x).where(y)` -> root `db`, links update, set, where. */
export function chainOf(top: TSESTree.CallExpression): { root: Node; links: ChainLink[] } | undefined {
  const links: ChainLink[] = [];
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

/** camelCase -> snake_case: the column a key stands for when the code does not name it (Kysely's CamelCasePlugin, Drizzle's casing). */
export function snake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export class SqlWriter {
  readonly out = new HostTextBuilder();
  readonly values: Node[] = [];
  /** Calls of builders inlined as subqueries: they are part of this query. */
  readonly calls: TSESTree.CallExpression[] = [];
  /** Tables named by an import the walk cannot read (`jobs` of `db.update(jobs)`), by name: their columns are snake_case of their keys. */
  readonly assumedTables = new Map<string, TableValue>();

  constructor(readonly host: BuilderHost) {}

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
      const object = unwrap(n.object);
      if (object?.type === 'Identifier' && key && this.assumedTables.has(object.name)) return snake(key);
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
    // A const that holds a time computed from the clock (`const cutoff = new Date(Date.now() - 5 * 60 * 1000)`): that time.
    const clock = n.type === 'Identifier' ? clockConstant(unwrap(this.host.constantOf?.(n))) : n;
    const time = clock && timeOf(clock, (c) => this.host.constantOf?.(c));
    if (time) {
      this.text(time, n);
      return;
    }
    // An offset the code computes (`new Date(Date.now() + this.leaseMs)`): that far from now, the amount a value.
    const offset = clock && clockOffset(clock);
    if (offset) {
      this.text(`(now() ${offset.operator} `, n);
      this.param(offset.amount);
      this.text(" * interval '1 millisecond')", n);
      return;
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

/** A builder passed as a value: its SELECT, inline. */
export function subquery(w: SqlWriter, node: Node, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined): boolean {
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

/**
 * The assignments of `.set({...})` / `.update({...})`: `status = 'done', attempts = attempts + 1`. `writeValue`
 * writes a property's value (by default as the value it is); a driver module may read its own forms there.
 */
export function assignments(
  w: SqlWriter,
  node: Node | undefined,
  keyColumn: (key: string) => string,
  writeValue: (column: string, value: Node) => void = (_column, value) => w.value(value),
): boolean {
  let object = unwrap(node);
  if (isFunction(object) && object.body && object.body.type !== 'BlockStatement') object = unwrap(object.body as Node);
  if (object?.type !== 'ObjectExpression') return false;
  const parts = namedProperties(object);
  if (parts.length === 0) return false;
  parts.forEach(({ key, property: p }, i) => {
    if (i > 0) w.text(', ', p);
    const column = keyColumn(key);
    w.text(`${column} = `, p);
    writeValue(column, p.value as Node);
  });
  return true;
}

/** The first link named `name`. */
export function linkNamed(links: readonly ChainLink[], name: string): ChainLink | undefined {
  return links.find((l) => l.name === name);
}

/**
 * The query a chain of builder calls sends, when `top` is the last call of
 * one that runs on a pool, a client or a transaction handle of a driver whose
 * module reads builders (`readerOf`).
 */
export function builtQuery(top: TSESTree.CallExpression, host: BuilderHost, executes: boolean, readerOf: (driver: Driver) => ChainReader | undefined): BuiltQuery | undefined {
  const chain = chainOf(top);
  if (!chain || chain.links.length === 0) return undefined;
  const build = (inner: TSESTree.CallExpression) => builtQuery(inner, host, true, readerOf);
  let on = host.value(chain.root);
  // this.db('jobs') / repo.knex('jobs'): the pool called as a function, reached through a member.
  const calleeOfFirst = unwrap(chain.links[0].call.callee);
  if (!isDb(on) && calleeOfFirst?.type === 'MemberExpression' && isDb(host.value(calleeOfFirst))) {
    on = host.value(calleeOfFirst);
    chain.links[0] = { ...chain.links[0], name: '()' };
  }
  if (!isDb(on)) {
    const root = host.unreadRoot?.(chain.root, chain.links);
    if (root) {
      on = root.on;
      if (root.links) chain.links = root.links;
      if (root.executes) executes = true;
    }
  }
  const driver = on && 'driver' in on ? on.driver : on?.kind === 'conn' ? on.conn.driver : undefined;
  if (!on || !isDb(on) || !driver) return undefined;
  const read = readerOf(driver);
  if (!read) return undefined;
  const w = new SqlWriter(host);
  const calls = w.calls;
  calls.push(...chain.links.map((l) => l.call));
  if (!read({ links: chain.links, top, executes, writer: w, build, root: chain.root })) return undefined;
  return { host: w.out.done({ start: top.range[0], end: top.range[1] }), on, driver, values: w.values, calls };
}

/**
 * A time the code computes from the clock, as the SQL it stands for: `new Date()`
 * is `now()`, `new Date(Date.now() + 60_000)` is `now() + interval '60000
 * milliseconds'` (a lease end written from the application), with the offset
 * a product of number literals or constants that hold them (clock.ts). An offset the code computes is the writer's
 * `now() + $n * interval '1 millisecond'` (clockOffset): a lease whose length the code decides.
 */
function timeOf(n: Node, constant: (node: Node) => Node | undefined): string | undefined {
  const ms = clockMilliseconds(n, constant);
  if (ms === undefined) return undefined;
  if (isNewDate(n) && n.arguments.length === 0) return 'now()';
  return `(now() ${ms < 0 ? '-' : '+'} interval '${Math.abs(ms)} milliseconds')`;
}

/** The initializer of a const when it is a time read from the clock (`new Date(...)`); the writer reads it as timeOf does. */
function clockConstant(init: Node | undefined): Node | undefined {
  return isNewDate(init) ? init : undefined;
}
