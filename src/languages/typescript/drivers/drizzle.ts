// Drizzle: `drizzle(pool)` runs on the pool it wraps; `db.transaction(fn)`;
// `db.execute(sql`...`)` and `sql.raw(text)`; `pgTable('jobs', {...})`
// declares a table whose columns its builders name
// (`db.update(jobs).set({...}).where(eq(jobs.id, id))`, `db.delete(jobs)`,
// `db.select().from(jobs).for('update', { skipLocked: true })`), read as the
// SQL they send; and row-level security declared in the schema
// (`pgPolicy('name', { as, for, to, using: sql`...`, withCheck })`,
// `.enableRLS()`), read as the CREATE POLICY and ALTER TABLE drizzle-kit
// writes, each clause mapped to its code.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { assignments, linkNamed, snake, subquery, type BuiltQuery, type ChainReader, type SqlWriter } from '../builder-sql.ts';
import { namedCondition, tableArg, tableSql, unreadDatabase } from './drizzle-builder.ts';
import { HostTextBuilder, type HostText } from '../../host-text.ts';
import type { TableValue, Value } from '../flow/types.ts';
import { templateText } from '../strings.ts';
import { dottedName, methodOf, objectProperty, stringValue, unwrap, type Call, type Node } from '../syntax.ts';
import { databaseReceiver } from './conventions.ts';
import type { DriverContext, DriverModel } from './model.ts';

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

/** A Drizzle table: `pgTable('jobs', { lockedUntil: timestamp('locked_until') })`. */
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

const OPERATORS: Record<string, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

/** A Drizzle condition: eq(jobs.id, id), and(...), or(...), lt(...), isNull(...), inArray(..., subquery), sql`...`. */
function condition(w: SqlWriter, node: Node, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined, depth = 0): boolean {
  const n = unwrap(node);
  if (!n || depth > 8) return false;
  const named = namedCondition(w, n, (into, c) => condition(into, c, build, depth + 1));
  if (named !== undefined) return named;
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
      if (!condition(w, a, build, depth + 1)) w.text('TRUE', a);
    });
    w.text(')', n);
    return true;
  }
  if (name === 'not' && args[0]) {
    w.text('NOT (', n);
    if (!condition(w, args[0], build, depth + 1)) w.text('TRUE', n);
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

const readChain: ChainReader = ({ links, executes, writer: w, build }) => {
  const first = links[0];
  const link = (name: string) => linkNamed(links, name);
  if (first.name === 'update' || first.name === 'delete') {
    const table = tableArg(w, first.args[0]);
    if (!table || !executes) return false;
    const columnOf = (key: string) => table.columns.get(key) ?? snake(key);
    const where = link('where');
    if (first.name === 'update') {
      const set = link('set');
      if (!set) return false;
      w.text(`UPDATE ${tableSql(table)} SET `, first.call);
      if (!assignments(w, set.args[0], columnOf)) return false;
    } else {
      w.text(`DELETE FROM ${tableSql(table)}`, first.call);
    }
    if (where) {
      w.text(' WHERE ', where.call);
      if (!condition(w, where.args[0], build)) return false;
    }
    if (link('returning')) w.text(' RETURNING *', link('returning')!.call);
    return true;
  }
  if ((first.name === 'select' || first.name === 'selectDistinct') && link('from')) {
    // select().from(jobs).where(...).limit(1).for('update', { skipLocked: true })
    const from = link('from')!;
    const table = tableArg(w, from.args[0]);
    const lock = link('for');
    if (!table || !lock || stringValue(lock.args[0]) !== 'update' || !executes) return false;
    w.text(`SELECT * FROM ${tableSql(table)}`, from.call);
    const where = link('where');
    if (where) {
      w.text(' WHERE ', where.call);
      if (!condition(w, where.args[0], build)) return false;
    }
    const limit = link('limit');
    if (limit?.args[0]) {
      w.text(' LIMIT ', limit.call);
      w.value(limit.args[0]);
    }
    const options = unwrap(lock.args[1]);
    const skip = options?.type === 'ObjectExpression' ? unwrap(objectProperty(options, 'skipLocked')?.value as Node | undefined) : undefined;
    w.text(` FOR UPDATE${skip?.type === 'Literal' && skip.value === true ? ' SKIP LOCKED' : ''}`, lock.call);
    return true;
  }
  return false;
};

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The CREATE POLICY (or ALTER TABLE ... ENABLE ROW LEVEL SECURITY) drizzle-kit writes for a pgPolicy(...) or enableRLS() call. */
export function policyText(call: TSESTree.CallExpression, table: string, enableRls: boolean, source: string): HostText | undefined {
  const out = new HostTextBuilder();
  const at = (text: string, node: { range: [number, number] }) => out.push(text, node.range[0], node.range[1]);
  if (enableRls) {
    at(`ALTER TABLE ${quote(table)} ENABLE ROW LEVEL SECURITY`, call);
    return out.done({ start: call.range[0], end: call.range[1] });
  }
  const name = stringValue(call.arguments[0] as Node | undefined);
  const options = unwrap(call.arguments[1] as Node | undefined);
  if (!name) return undefined;
  at(`CREATE POLICY ${quote(name)} ON ${quote(table)}`, call);
  if (options?.type === 'ObjectExpression') {
    const as = stringValue(objectProperty(options, 'as')?.value as Node | undefined);
    if (as === 'permissive' || as === 'restrictive') at(` AS ${as.toUpperCase()}`, objectProperty(options, 'as')!);
    const command = stringValue(objectProperty(options, 'for')?.value as Node | undefined);
    if (command && /^(all|select|insert|update|delete)$/.test(command)) at(` FOR ${command.toUpperCase()}`, objectProperty(options, 'for')!);
    for (const [key, clause] of [['using', 'USING'], ['withCheck', 'WITH CHECK']] as const) {
      const property = objectProperty(options, key);
      const value = property ? unwrap(property.value as Node) : undefined;
      if (value?.type !== 'TaggedTemplateExpression') continue;
      at(` ${clause} (`, property!);
      // The condition's text mapped to the template; an interpolation (a column, a value) is a hole.
      const condition = templateText(value.quasi, source);
      if (!condition) return undefined;
      out.append(condition);
      at(')', property!);
    }
  }
  return out.done({ start: call.range[0], end: call.range[1] });
}

/**
 * `db.execute(sql`...`)` where the walk holds no value for `db`: Drizzle
 * hands its transactions only to `db.transaction(fn)`'s callback, so a
 * receiver that runs Drizzle's SQL and is the database by what the code
 * around it means (an import of a module the walk cannot read, a
 * constructor parameter a Nest container injects, the handle that opened the
 * transaction the call runs in: conventions.ts) runs each call on a pool
 * connection in autocommit.
 */
function untypedDatabase(receiver: Node, tag: Node, call: Call, ctx: DriverContext): Value | undefined {
  const sqlTag = ctx.value(tag);
  if (sqlTag?.kind !== 'tag' || sqlTag.driver !== 'drizzle') return undefined;
  return databaseReceiver(receiver, call, ctx, 'drizzle');
}

export const drizzle: DriverModel = {
  driver: 'drizzle',
  modules: { names: ['drizzle-orm'], prefixes: ['drizzle-orm/'] },
  exports: {
    sql: { kind: 'tag', driver: 'drizzle' },
    drizzle: { kind: 'maker', driver: 'drizzle', makes: 'pool' },
    pgTable: { kind: 'maker', driver: 'drizzle', makes: 'table' },
    pgPolicy: { kind: 'maker', driver: 'drizzle', makes: 'policy' },
  },
  // drizzle-orm/node-postgres NodePgDatabase, drizzle-orm/postgres-js PostgresJsDatabase, pg-core PgDatabase / PgTransaction.
  types: {
    ...Object.fromEntries(['NodePgDatabase', 'PostgresJsDatabase', 'PgDatabase', 'NeonHttpDatabase', 'NeonDatabase', 'VercelPgDatabase', 'BunSQLDatabase', 'PgliteDatabase'].map((t) => [t, 'pool' as const])),
    ...Object.fromEntries(['PgTransaction', 'NodePgTransaction', 'PostgresJsTransaction'].map((t) => [t, 'tx' as const])),
  },
  // A `PgTransaction` is a `PgDatabase`; `NodePgDatabase` and the like carry `$client`, which a transaction lacks.
  txSatisfies: ['PgDatabase'],
  wrapsPool: true,
  make(maker, node, ctx) {
    if (maker.makes !== 'table' || node.type !== 'CallExpression') return undefined;
    const table = readTable(node);
    if (!table) return undefined;
    ctx.addTable(node, table);
    return { kind: 'table', table };
  },
  // pgTable(...).enableRLS() is still the table (the policy DDL is read at the call itself).
  method: (on, method) => (on.kind === 'table' && method === 'enableRLS' ? on : undefined),
  declaration(call: Call, ctx) {
    const callee = unwrap(call.callee);
    const calleeValue = callee?.type === 'Identifier' ? ctx.value(callee) : undefined;
    const method = methodOf(call);
    if (!((calleeValue?.kind === 'maker' && calleeValue.driver === 'drizzle' && calleeValue.makes === 'policy') || method?.name === 'enableRLS')) return undefined;
    const table = method?.name === 'enableRLS' ? ctx.value(method.object) : undefined;
    const owner = table?.kind === 'table' ? table.table : ctx.tableAround(call);
    const host = owner ? policyText(call, owner.name, method?.name === 'enableRLS', ctx.text) : undefined;
    return host ? { text: call, synthesized: host, on: undefined, driver: 'drizzle', placeholders: 'dollar', at: call, scope: { kind: 'script' } } : null;
  },
  queries: [
    {
      methods: new Set(['raw']),
      read: ({ arg0, on, onDriver, call, ctx }) => (arg0 && onDriver === 'drizzle' ? ctx.textArg(arg0, on, 'drizzle', 'dollar', call) : undefined),
    },
    {
      methods: new Set(['execute']),
      read: ({ arg0, on, object, onDriver, call, ctx }) => {
        if (arg0?.type === 'TaggedTemplateExpression') return ctx.taggedArg(arg0, on ?? untypedDatabase(object, arg0.tag, call, ctx), onDriver ?? 'drizzle', call);
        if (arg0?.type === 'CallExpression' && methodOf(arg0)?.name === 'raw' && dottedName(methodOf(arg0)!.object) === 'sql') {
          ctx.consume(arg0); // the raw SQL is this call's query, not one of its own
          return ctx.textArg(unwrap(arg0.arguments[0] as Node)!, on ?? untypedDatabase(object, methodOf(arg0)!.object, call, ctx), 'drizzle', 'dollar', call);
        }
        return undefined;
      },
    },
  ],
  builder: readChain,
  builderRoot: unreadDatabase,
};
