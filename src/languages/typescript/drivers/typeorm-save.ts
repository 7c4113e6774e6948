// `m.save(job)` of an entity the same function loaded with the query builder
// (`const job = await m.createQueryBuilder(Job, 'job')...getOne()`), read as
// the UPDATE TypeORM sends for it: the columns the code assigned on `job`
// between the load and the save (`job.status = 'done'`, `job.attempts += 1`,
// `job.attempts = job.attempts + 1`) by its primary column. TypeORM sends the
// changed columns only, so an assignment is a column it writes. An entity
// not loaded so (a new one, a parameter), an assignment the reader cannot
// place (in a nested function), or an entity without a known primary column:
// no query the scan reads.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { chainOf, type SqlWriter } from '../builder-sql.ts';
import { children, isFunction, propertyName, unwrap, type Node } from '../syntax.ts';
import { columnOf, entityTable, type EntityTable } from './typeorm-entities.ts';

/** The entity a one-row query builder read loaded into `name`: the chain's entity. */
function loadedBy(name: TSESTree.Identifier, w: SqlWriter, declarationOf: (n: Node) => Node | undefined): { entity: EntityTable; init: Node } | undefined {
  const init = unwrap(w.host.constantOf?.(name));
  if (init?.type !== 'CallExpression') return undefined;
  const chain = chainOf(init);
  const links = chain?.links ?? [];
  const last = links[links.length - 1]?.name;
  if (last !== 'getOne' && last !== 'getOneOrFail') return undefined;
  const qb = links.find((l) => l.name === 'createQueryBuilder');
  const repository = links.find((l) => l.name === 'getRepository');
  const entity = entityTable(repository?.args[0] ?? qb?.args[0], declarationOf);
  return entity ? { entity, init } : undefined;
}

/** The function body around `node`. */
function bodyAround(program: Node, node: Node): Node | undefined {
  let found: Node | undefined;
  const visit = (n: Node) => {
    if (n.range[0] > node.range[0] || n.range[1] < node.range[1]) return;
    if (isFunction(n)) found = n.body as Node;
    for (const c of children(n)) visit(c);
  };
  visit(program);
  return found;
}

/** `job.prop = v`, `job.prop += n`, `job.prop++` between `from` and `to`, not in a nested function. */
function assignmentsOn(body: Node, name: string, from: number, to: number): { property: string; node: Node; value?: Node; plus?: Node | number }[] | undefined {
  const out: { property: string; node: Node; value?: Node; plus?: Node | number }[] = [];
  let unplaced = false;
  const target = (n: Node): string | undefined => {
    const m = unwrap(n);
    return m?.type === 'MemberExpression' && unwrap(m.object)?.type === 'Identifier' && (unwrap(m.object) as TSESTree.Identifier).name === name ? propertyName(m) : undefined;
  };
  const visit = (n: Node, nested: boolean) => {
    if (n.range[1] < from || n.range[0] > to) return;
    const inner = nested || isFunction(n);
    if (n.type === 'AssignmentExpression' || n.type === 'UpdateExpression') {
      const property = target(n.type === 'AssignmentExpression' ? (n.left as Node) : (n.argument as Node));
      if (property && inner) unplaced = true;
      else if (property && n.type === 'UpdateExpression') out.push({ property, node: n, plus: n.operator === '++' ? 1 : -1 });
      else if (property && n.type === 'AssignmentExpression') {
        if (n.operator === '=') out.push({ property, node: n, value: n.right as Node });
        else if (n.operator === '+=') out.push({ property, node: n, plus: n.right as Node });
        else unplaced = true;
      }
    }
    for (const c of children(n)) visit(c, inner);
  };
  for (const c of children(body)) visit(c, false);
  return unplaced ? undefined : out;
}

/** The ends of `x.save(name)` calls between `from` and `to`. */
function earlierSaves(body: Node, name: string, from: number, to: number): number[] {
  const ends: number[] = [];
  const visit = (n: Node) => {
    if (n.range[1] < from || n.range[0] > to) return;
    if (n.type === 'CallExpression' && n.range[1] < to) {
      const callee = unwrap(n.callee);
      const arg = unwrap(n.arguments[n.arguments.length - 1] as Node | undefined);
      if (callee?.type === 'MemberExpression' && propertyName(callee) === 'save' && arg?.type === 'Identifier' && arg.name === name) ends.push(n.range[1]);
    }
    for (const c of children(n)) visit(c);
  };
  visit(body);
  return ends;
}

/** `job.prop + n` where prop is the assigned property: the column's own value plus n. */
function selfPlus(value: Node | undefined, name: string, property: string): Node | undefined {
  const v = unwrap(value);
  if (v?.type !== 'BinaryExpression' || v.operator !== '+') return undefined;
  const left = unwrap(v.left as Node);
  const own = left?.type === 'MemberExpression' && unwrap(left.object)?.type === 'Identifier' && (unwrap(left.object) as TSESTree.Identifier).name === name && propertyName(left) === property;
  return own ? (v.right as Node) : undefined;
}

/** `m.save(job)` (or `m.save(Job, job)`) of an entity loaded by a query builder read: its UPDATE; false when it cannot. */
export function readSave(call: TSESTree.CallExpression, args: readonly Node[], w: SqlWriter, declarationOf: (n: Node) => Node | undefined): boolean {
  const saved = unwrap(args[args.length - 1]);
  if (saved?.type !== 'Identifier' || args.length > 2 || !w.host.program) return false;
  const loaded = loadedBy(saved, w, declarationOf);
  if (!loaded?.entity.primary) return false;
  const body = bodyAround(w.host.program, call);
  if (!body || body.range[0] > loaded.init.range[0]) return false;
  // TypeORM sends what changed since the entity was loaded or last saved: the assignments after the last save before this one.
  const from = Math.max(loaded.init.range[1], ...earlierSaves(body, saved.name, loaded.init.range[1], call.range[0]));
  const assigned = assignmentsOn(body, saved.name, from, call.range[0]);
  // One assignment per column: a column assigned twice is one TypeORM computes from both.
  if (!assigned || assigned.length === 0 || new Set(assigned.map((a) => a.property)).size !== assigned.length) return false;
  const { entity } = loaded;
  w.text(`UPDATE ${entity.table} SET `, call);
  assigned.forEach((a, i) => {
    if (i > 0) w.text(', ', a.node);
    const column = columnOf(entity, a.property);
    const plus = a.plus ?? selfPlus(a.value, saved.name, a.property);
    if (plus !== undefined) {
      w.text(`${column} = ${column} + `, a.node);
      if (typeof plus === 'number') w.text(String(plus), a.node);
      else w.value(plus);
    } else {
      w.text(`${column} = `, a.node);
      w.value(a.value!);
    }
  });
  w.text(` WHERE ${entity.primary} = `, call);
  w.param(saved);
  return true;
}
