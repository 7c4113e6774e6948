// TypeORM's query builder and its entity manager's writes as the SQL they
// send, so the queue rules judge a TypeORM claim and its finish as raw SQL:
// - `m.createQueryBuilder(Job, 'job')` (or `m.getRepository(Job)
//   .createQueryBuilder('job')`, `.select().from(Job, 'job')`) with
//   `.setLock('pessimistic_write')` and `.setOnLocked('skip_locked')`, run by
//   getOne/getMany/getRawOne/getRawMany/execute: `SELECT * FROM job WHERE ...
//   ORDER BY ... LIMIT n FOR UPDATE SKIP LOCKED`. A select that locks nothing
//   is left out, as the other builders leave it;
// - `.update(Job).set({...}).where(...)`.execute(), `.delete().from(Job)`;
// - `m.update(Job, criteria, partial)`, `m.increment(Job, criteria, 'col', n)`,
//   `m.delete(Job, criteria)`, and the same on `m.getRepository(Job)`;
// - `m.find(Job, { where, order, take, lock })` and findOne: a locking read
//   when its lock option asks for one.
// A where string is SQL whose `alias.property` TypeORM replaces by the
// column and whose `:name` by the parameter of that name; a where object is
// columns and their values or find operators (`LessThan(n)`, `In([...])`).
// What the reader cannot read (a Brackets group, an unknown operator, a
// parameter it cannot find) makes the call no query it knows.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { chainOf, linkNamed, type BuilderHost, type ChainLink, type ChainReader, type SqlWriter } from '../builder-sql.ts';
import { isFunction, stringValue, unwrap, type Node } from '../syntax.ts';
import { columnOf, entityTable, plainKeys, type EntityTable } from './typeorm-entities.ts';
import { readSave } from './typeorm-save.ts';

/** Calls that run a query builder's statement. */
export const RUNS: ReadonlySet<string> = new Set(['getOne', 'getMany', 'getOneOrFail', 'getRawOne', 'getRawMany', 'getRawAndEntities', 'getManyAndCount', 'execute', 'stream']);
const WHERES = /^(where|andWhere|orWhere)$/;
const LOCKS: Record<string, string> = {
  pessimistic_write: 'FOR UPDATE',
  pessimistic_read: 'FOR SHARE',
  pessimistic_partial_write: 'FOR UPDATE SKIP LOCKED',
  pessimistic_write_or_fail: 'FOR UPDATE NOWAIT',
  for_no_key_update: 'FOR NO KEY UPDATE',
  for_key_share: 'FOR KEY SHARE',
};
const ON_LOCKED: Record<string, string> = { skip_locked: ' SKIP LOCKED', nowait: ' NOWAIT' };
const OPERATORS: Record<string, string> = { LessThan: '<', LessThanOrEqual: '<=', MoreThan: '>', MoreThanOrEqual: '>=', Equal: '=', Not: '<>' };

interface Target {
  entity: EntityTable;
  /** The aliases that name it in where strings. */
  aliases: Set<string>;
}

/** The parameters of where strings and setParameter(s): name -> value expression. */
type Params = Map<string, Node>;

function collectParams(links: readonly ChainLink[]): Params | undefined {
  const params: Params = new Map();
  for (const l of links) {
    const object = WHERES.test(l.name) || l.name === 'setParameters' ? l.args[l.name === 'setParameters' ? 0 : 1] : undefined;
    if (object) {
      const keys = plainKeys(object);
      if (!keys) return undefined;
      for (const { key, property } of keys) params.set(key, property.value as Node);
    }
    if (l.name === 'setParameter') {
      const key = stringValue(l.args[0]);
      if (!key || !l.args[1]) return undefined;
      params.set(key, l.args[1]);
    }
  }
  return params;
}

/** A where string as SQL: `alias.prop` the column, `:name` the parameter's value, `:...name` its list. */
function whereText(w: SqlWriter, text: string, at: Node, target: Target, params: Params): boolean {
  const parts = text.split(/(:\.\.\.\w+|(?<!:):\w+|"?\w+"?\."?\w+"?)/);
  for (const part of parts) {
    if (!part) continue;
    const param = /^:(\.\.\.)?(\w+)$/.exec(part);
    if (param) {
      const value = params.get(param[2]);
      if (!value) return false;
      if (param[1]) {
        w.text('(', at);
        w.param(value);
        w.text(')', at);
      } else w.value(value);
      continue;
    }
    const dotted = /^"?(\w+)"?\."?(\w+)"?$/.exec(part);
    if (dotted && target.aliases.has(dotted[1])) {
      w.text(columnOf(target.entity, dotted[2]), at);
      continue;
    }
    w.text(part, at);
  }
  return true;
}

/** A where object's value: a find operator (`LessThan(n)`, `In([...])`, `IsNull()`) or a value. */
function findValue(w: SqlWriter, column: string, node: Node, at: Node): boolean {
  const n = unwrap(node);
  if (n?.type === 'CallExpression' && unwrap(n.callee)?.type === 'Identifier') {
    const name = (unwrap(n.callee) as TSESTree.Identifier).name;
    if (name === 'IsNull' && n.arguments.length === 0) {
      w.text(`${column} IS NULL`, at);
      return true;
    }
    if (name === 'In' && n.arguments[0]) {
      w.text(`${column} = ANY(`, at);
      w.param(n.arguments[0] as Node);
      w.text(')', at);
      return true;
    }
    const op = OPERATORS[name];
    if (op && n.arguments.length === 1) {
      w.text(`${column} ${op} `, at);
      w.value(n.arguments[0] as Node);
      return true;
    }
    if (/^[A-Z]/.test(name)) return false;
  }
  w.text(`${column} = `, at);
  w.value(node);
  return true;
}

/** A where object (`{ id, status: 'pending' }`) or an array of them (OR); false when it cannot. */
function whereObject(w: SqlWriter, node: Node, at: Node, entity: EntityTable): boolean {
  const n = unwrap(node);
  if (n?.type === 'ArrayExpression') {
    if (n.elements.length === 0) return false;
    w.text('(', at);
    for (const [i, e] of n.elements.entries()) {
      if (!e || e.type === 'SpreadElement') return false;
      if (i > 0) w.text(' OR ', at);
      w.text('(', at);
      if (!whereObject(w, e as Node, at, entity)) return false;
      w.text(')', at);
    }
    w.text(')', at);
    return true;
  }
  const keys = plainKeys(n);
  if (!keys || keys.length === 0) return false;
  for (const [i, { key, property }] of keys.entries()) {
    if (i > 0) w.text(' AND ', property);
    if (!findValue(w, columnOf(entity, key), property.value as Node, property)) return false;
  }
  return true;
}

function writeWheres(w: SqlWriter, links: readonly ChainLink[], target: Target): boolean {
  const params = collectParams(links);
  if (!params) return false;
  const wheres = links.filter((l) => WHERES.test(l.name));
  for (const [i, l] of wheres.entries()) {
    w.text(i === 0 ? ' WHERE ' : l.name === 'orWhere' ? ' OR ' : ' AND ', l.call);
    // Each condition where its argument is written: a finding on it points at that line.
    const at = l.args[0] ?? l.call;
    const text = stringValue(l.args[0]);
    w.text('(', at);
    const ok = text !== undefined ? whereText(w, text, at, target, params) : l.args[0] ? whereObject(w, l.args[0], at, target.entity) : false;
    if (!ok) return false;
    w.text(')', at);
  }
  return true;
}

/** `.set({...})`: columns and values; `() => 'attempts + 1'` is SQL as TypeORM sends it. */
function writeSet(w: SqlWriter, node: Node | undefined, entity: EntityTable): boolean {
  const keys = plainKeys(node);
  if (!keys || keys.length === 0) return false;
  keys.forEach(({ key, property }, i) => {
    if (i > 0) w.text(', ', property);
    w.text(`${columnOf(entity, key)} = `, property);
    const value = unwrap(property.value as Node);
    const raw = isFunction(value) && value.body.type !== 'BlockStatement' ? stringValue(value.body as Node) : undefined;
    if (raw !== undefined) w.text(`(${raw})`, property);
    else w.value(property.value as Node);
  });
  return true;
}

/** The entity of a query builder chain and its aliases: createQueryBuilder(Job, 'job'), getRepository(Job).createQueryBuilder('job'), from(Job, 'job'), update(Job). */
function builderTarget(links: readonly ChainLink[], declarationOf: (n: Node) => Node | undefined): Target | undefined {
  const repository = linkNamed(links, 'getRepository');
  const qb = linkNamed(links, 'createQueryBuilder');
  const from = linkNamed(links, 'from') ?? linkNamed(links, 'update') ?? linkNamed(links, 'delete');
  const entityNode = (qb && qb.args.length >= 1 && !repository ? qb.args[0] : undefined) ?? repository?.args[0] ?? from?.args[0];
  const entity = entityTable(entityNode, declarationOf);
  if (!entity) return undefined;
  const aliases = new Set<string>();
  const alias = stringValue(repository ? qb?.args[0] : qb?.args[1]) ?? stringValue(linkNamed(links, 'from')?.args[1]);
  if (alias) aliases.add(alias);
  return { entity, aliases };
}

/** A query builder chain: a locking select, an update or a delete, when it runs. */
function readQueryBuilder(links: readonly ChainLink[], executes: boolean, w: SqlWriter, declarationOf: (n: Node) => Node | undefined): boolean {
  const runs = links[links.length - 1];
  if (!RUNS.has(runs.name) && !executes) return false;
  const start = links.findIndex((l) => l.name === 'createQueryBuilder');
  const qbLinks = links.slice(start);
  const target = builderTarget(links, declarationOf);
  if (!target) return false;
  const { table } = target.entity;
  const update = linkNamed(qbLinks, 'update');
  const del = linkNamed(qbLinks, 'delete');
  if (update) {
    const set = linkNamed(qbLinks, 'set');
    w.text(`UPDATE ${table} SET `, update.call);
    if (!set || !writeSet(w, set.args[0], target.entity)) return false;
    return writeWheres(w, qbLinks, target);
  }
  if (del) {
    w.text(`DELETE FROM ${table}`, del.call);
    return writeWheres(w, qbLinks, target);
  }
  const lock = linkNamed(qbLinks, 'setLock');
  const mode = lock ? LOCKS[stringValue(lock.args[0]) ?? ''] : undefined;
  if (!lock || !mode) return false;
  w.text(`SELECT * FROM ${table}`, links[start].args[0] ?? links[start].call);
  if (!writeWheres(w, qbLinks, target)) return false;
  const orders = qbLinks.filter((l) => l.name === 'orderBy' || l.name === 'addOrderBy');
  for (const [i, o] of orders.entries()) {
    const key = stringValue(o.args[0]);
    const dotted = key ? /^"?(\w+)"?\."?(\w+)"?$/.exec(key) : null;
    const column = dotted && target.aliases.has(dotted[1]) ? columnOf(target.entity, dotted[2]) : key && /^\w+$/.test(key) ? columnOf(target.entity, key) : undefined;
    if (!column) return false;
    const direction = stringValue(o.args[1]) === 'DESC' ? ' DESC' : '';
    w.text(`${i === 0 ? ' ORDER BY ' : ', '}${column}${direction}`, o.args[0]);
  }
  const limit = linkNamed(qbLinks, 'limit') ?? linkNamed(qbLinks, 'take');
  if (limit?.args[0]) {
    w.text(' LIMIT ', limit.args[0]);
    w.value(limit.args[0]);
  } else if (runs.name === 'getOne' || runs.name === 'getOneOrFail' || runs.name === 'getRawOne') w.text(' LIMIT 1', runs.call);
  const onLocked = linkNamed(qbLinks, 'setOnLocked');
  const wait = onLocked ? ON_LOCKED[stringValue(onLocked.args[0]) ?? ''] : '';
  if (wait === undefined) return false;
  w.text(` ${mode}${mode.includes(' SKIP LOCKED') || mode.includes('NOWAIT') ? '' : wait}`, lock.args[0]);
  return true;
}

/** The criteria of update/delete/increment: a where object, or a primary key's value. */
function criteria(w: SqlWriter, node: Node | undefined, entity: EntityTable, at: Node): boolean {
  if (!node) return false;
  w.text(' WHERE ', at);
  const n = unwrap(node);
  if (n?.type === 'ObjectExpression' || n?.type === 'ArrayExpression') return whereObject(w, node, at, entity);
  // A primary key's value (or several): TypeORM compares the primary column.
  if (!entity.primary) return false;
  w.text(`${entity.primary} = `, at);
  w.value(node);
  return true;
}

/** `m.update(Job, criteria, partial)`, `m.increment(Job, criteria, 'col', n)`, `m.delete(Job, criteria)`, and on `m.getRepository(Job)`. */
function readManagerWrite(links: readonly ChainLink[], w: SqlWriter, declarationOf: (n: Node) => Node | undefined): boolean {
  const last = links[links.length - 1];
  const repository = links.length >= 2 && links[links.length - 2].name === 'getRepository' ? links[links.length - 2] : undefined;
  if (links.length !== (repository ? 2 : 1)) return false;
  if (last.name === 'save') return readSave(last.call, last.args, w, declarationOf);
  const args = repository ? [repository.args[0], ...last.args] : last.args;
  const entity = entityTable(args[0], declarationOf);
  if (!entity) return false;
  if (FINDS.has(last.name)) return readLockingFind(w, args[1], entity, last);
  if (last.name === 'update') {
    w.text(`UPDATE ${entity.table} SET `, last.call);
    if (!writeSet(w, args[2], entity)) return false;
    return criteria(w, args[1], entity, last.call);
  }
  if (last.name === 'increment' || last.name === 'decrement') {
    const column = stringValue(args[2]);
    if (!column || !args[3]) return false;
    const col = columnOf(entity, column);
    w.text(`UPDATE ${entity.table} SET ${col} = ${col} ${last.name === 'increment' ? '+' : '-'} `, last.call);
    w.value(args[3]);
    return criteria(w, args[1], entity, last.call);
  }
  if (last.name === 'delete') {
    w.text(`DELETE FROM ${entity.table}`, last.call);
    return criteria(w, args[1], entity, last.call);
  }
  return false;
}

/** The find methods whose options may lock what they read. */
const FINDS: ReadonlySet<string> = new Set(['find', 'findOne', 'findOneOrFail']);

/**
 * `m.find(Job, { where, order, take, lock: { mode, onLocked } })` (or a
 * repository's find): a locking read, `SELECT * FROM job WHERE ... ORDER BY
 * ... LIMIT n FOR UPDATE SKIP LOCKED`. A find that locks nothing is left out,
 * as a query builder select is; options it cannot read make it no query.
 */
function readLockingFind(w: SqlWriter, options: Node | undefined, entity: EntityTable, find: ChainLink): boolean {
  const keys = plainKeys(options);
  if (!keys) return false;
  const option = (name: string) => keys.find((k) => k.key === name)?.property.value as Node | undefined;
  const lock = plainKeys(option('lock'));
  const modeNode = lock?.find((k) => k.key === 'mode')?.property.value as Node | undefined;
  const mode = LOCKS[stringValue(modeNode) ?? ''];
  if (!lock || !modeNode || !mode) return false;
  const onLockedNode = lock.find((k) => k.key === 'onLocked')?.property.value as Node | undefined;
  const wait = onLockedNode ? ON_LOCKED[stringValue(onLockedNode) ?? ''] : '';
  if (wait === undefined) return false;
  w.text(`SELECT * FROM ${entity.table}`, find.call);
  const where = option('where');
  if (where) {
    w.text(' WHERE ', where);
    if (!whereObject(w, where, where, entity)) return false;
  }
  const order = option('order');
  if (order) {
    const orders = plainKeys(order);
    if (!orders) return false;
    for (const [i, { key, property }] of orders.entries()) {
      const direction = stringValue(property.value as Node)?.toUpperCase();
      if (direction !== 'ASC' && direction !== 'DESC') return false;
      w.text(`${i === 0 ? ' ORDER BY ' : ', '}${columnOf(entity, key)}${direction === 'DESC' ? ' DESC' : ''}`, property);
    }
  }
  const take = option('take');
  if (take) {
    w.text(' LIMIT ', take);
    w.value(take);
  } else if (find.name !== 'find') w.text(' LIMIT 1', find.call);
  w.text(` ${mode}${mode.includes(' SKIP LOCKED') || mode.includes('NOWAIT') ? '' : wait}`, modeNode);
  return true;
}

/**
 * The links a chain continues when its root is a const that holds a
 * repository (`const repo = m.getRepository(Job)`) or a query builder not yet
 * run (`const qb = m.createQueryBuilder(Job, 'job').where(...)`): the const's
 * chain first, and the node that chain starts on.
 */
export function heldChain(root: Node | undefined, host: BuilderHost): { root: Node; links: ChainLink[] } | undefined {
  const n = unwrap(root);
  if (n?.type !== 'Identifier') return undefined;
  const init = unwrap(host.constantOf?.(n));
  if (init?.type !== 'CallExpression') return undefined;
  const inner = chainOf(init);
  if (!inner || inner.links.length === 0) return undefined;
  const names = inner.links.map((l) => l.name);
  const last = names[names.length - 1];
  if (last !== 'getRepository' && (!names.includes('createQueryBuilder') || RUNS.has(last))) return undefined;
  return inner;
}

/** A TypeORM chain on a data source, its manager, a query runner's manager or a transaction's. */
export function typeormReader(declarationOf: (host: SqlWriter, n: Node) => Node | undefined): ChainReader {
  return ({ links: own, executes, writer: w, root }) => {
    const declared = (n: Node) => declarationOf(w, n);
    // A chain on a repository held in a const (the const holds a database value, so the walk gave its root): the const's chain first.
    const held = heldChain(root, w.host);
    const links = held ? [...held.links, ...own] : own;
    if (held) w.calls.push(...held.links.map((l) => l.call));
    if (links.some((l) => l.name === 'createQueryBuilder')) return readQueryBuilder(links, executes, w, declared);
    return readManagerWrite(links, w, declared);
  };
}

export const typeormChain: ChainReader = typeormReader((w, n) => w.host.constantOf?.(n));
