// Prisma: `new PrismaClient()` is the pool (or runs on the pool of the
// driver adapter it is given: `new PrismaPg(pool)`); `$executeRaw`...``,
// `$queryRaw`...``, `$executeRawUnsafe(text, ...values)`; `$transaction(fn)`
// and `$transaction([...])` (every query of the array in one transaction);
// `Prisma.sql`...`` makes a fragment. A driver adapter's
// `startTransaction()` opens a transaction its `queryRaw/executeRaw({ sql,
// args })` run in until `commit()` or `rollback()`. Prisma 7 generates its
// client into the project (`../generated/prisma`). Model calls
// (`prisma.job.update({ where, data })`, `updateMany`, `delete`, `deleteMany`)
// are read as the SQL they send: Prisma names the table after the model and
// the columns after its fields, quoted (`"Job"."leasedUntil"`), unless the
// schema maps them.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ChainReader, SqlWriter } from '../builder-sql.ts';
import type { Value } from '../flow/types.ts';
import { methodOf, propertyName, unwrap, type Node } from '../syntax.ts';
import { callbackDriver } from './conventions.ts';
import type { DriverModel } from './model.ts';

const TAG_METHODS = new Set(['$executeRaw', '$queryRaw']);
const UNSAFE_METHODS = new Set(['$executeRawUnsafe', '$queryRawUnsafe']);

const prismaTag: Value = { kind: 'tag', driver: 'prisma' };
/** The Prisma namespace: `Prisma.sql`...``. */
const namespace: Value = { kind: 'namespace', member: (name) => (name === 'sql' ? prismaTag : undefined) };

/** Prisma's filter operators on one field, as SQL. */
const OPERATORS: Record<string, string> = { equals: '=', not: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The fields of an object literal with plain keys, or undefined when one is spread or computed. */
function fields(node: Node | undefined): [string, TSESTree.Property][] | undefined {
  const object = unwrap(node);
  if (object?.type !== 'ObjectExpression') return undefined;
  const out: [string, TSESTree.Property][] = [];
  for (const p of object.properties) {
    if (p.type !== 'Property' || p.computed) return undefined;
    const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
    if (key === undefined) return undefined;
    out.push([key, p]);
  }
  return out;
}

/** `where: { id, status: 'running', leasedUntil: { lt: now } }` as `"id" = $1 AND ...`; false for filters it does not read (AND/OR, relations). */
function where(w: SqlWriter, node: Node | undefined): boolean {
  const parts = fields(node);
  if (!parts) return false;
  let first = true;
  for (const [key, p] of parts) {
    if (/^(AND|OR|NOT)$/.test(key)) return false;
    const value = unwrap(p.value as Node);
    const operators = value?.type === 'ObjectExpression' ? fields(value) : undefined;
    if (operators && operators.length > 0) {
      for (const [op, o] of operators) {
        if (op === 'in' || op === 'notIn') {
          w.text(`${first ? '' : ' AND '}${quoted(key)} ${op === 'in' ? '=' : '<>'} ${op === 'in' ? 'ANY' : 'ALL'}(`, o);
          w.value(o.value as Node);
          w.text(')', o);
        } else if (OPERATORS[op]) {
          const literalNull = unwrap(o.value as Node)?.type === 'Literal' && (unwrap(o.value as Node) as TSESTree.Literal).value === null;
          if (literalNull) w.text(`${first ? '' : ' AND '}${quoted(key)} IS ${op === 'not' ? 'NOT ' : ''}NULL`, o);
          else {
            w.text(`${first ? '' : ' AND '}${quoted(key)} ${OPERATORS[op]} `, o);
            w.value(o.value as Node);
          }
        } else return false;
        first = false;
      }
      continue;
    }
    if (value?.type === 'ObjectExpression') return false;
    if (value?.type === 'Literal' && value.value === null) w.text(`${first ? '' : ' AND '}${quoted(key)} IS NULL`, p);
    else {
      w.text(`${first ? '' : ' AND '}${quoted(key)} = `, p);
      w.value(p.value as Node);
    }
    first = false;
  }
  return !first;
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
      const arithmetic: Record<string, string> = { increment: '+', decrement: '-', multiply: '*', divide: '/' };
      if (op === 'set') {
        w.text(`${quoted(key)} = `, p);
        w.value(o!.value as Node);
      } else if (op && arithmetic[op]) {
        w.text(`${quoted(key)} = ${quoted(key)} ${arithmetic[op]} `, p);
        w.value(o!.value as Node);
      } else return false; // a relation write (connect, create): not a column
      continue;
    }
    w.text(`${quoted(key)} = `, p);
    w.value(p.value as Node);
  }
  return true;
}

/** A model call on the client or a transaction client: `prisma.job.update({ where, data })`. */
const readModelCall: ChainReader = ({ links, top, writer: w }) => {
  if (links.length !== 1) return false;
  const callee = unwrap(top.callee);
  const model = callee?.type === 'MemberExpression' && unwrap(callee.object)?.type === 'MemberExpression' ? propertyName(unwrap(callee.object) as TSESTree.MemberExpression) : undefined;
  if (!model || model.startsWith('$')) return false;
  const table = quoted(model[0].toUpperCase() + model.slice(1));
  const args = fields(top.arguments[0] as Node | undefined);
  const arg = (name: string) => args?.find(([key]) => key === name)?.[1].value as Node | undefined;
  const method = links[0].name;
  if (method === 'update' || method === 'updateMany') {
    w.text(`UPDATE ${table} SET `, top);
    if (!data(w, arg('data'))) return false;
    if (arg('where') !== undefined) {
      w.text(' WHERE ', top);
      if (!where(w, arg('where'))) return false;
    }
    if (method === 'update') w.text(' RETURNING *', top);
    return true;
  }
  if (method === 'delete' || method === 'deleteMany') {
    w.text(`DELETE FROM ${table}`, top);
    if (arg('where') !== undefined) {
      w.text(' WHERE ', top);
      if (!where(w, arg('where'))) return false;
    }
    return true;
  }
  return false;
};

export const prisma: DriverModel = {
  driver: 'prisma',
  modules: { names: ['@prisma/client', '.prisma/client'], prefixes: ['@prisma/client/', '@prisma/adapter-'], pattern: /(^|\/)generated\/prisma(\/client)?(\.[cm]?[jt]s)?$/ },
  exports: {
    PrismaClient: { kind: 'maker', driver: 'prisma', makes: 'pool' },
    Prisma: namespace,
    sql: prismaTag,
    ...Object.fromEntries(['PrismaPg', 'PrismaNeon', 'PrismaPostgresAdapter'].map((name) => [name, { kind: 'maker', driver: 'prisma', makes: 'driver-adapter' } as const])),
  },
  types: { TransactionClient: 'tx', PrismaClient: 'pool' },
  wrapsPool: true,
  // prisma.job / tx.job: a model's delegate, whose calls run where the client or transaction client runs.
  member: (object, name) => ((object.kind === 'pool' || object.kind === 'tx') && !name.startsWith('$') && /^[a-z]\w*$/i.test(name) ? object : undefined),
  builder: readModelCall,
  make(maker, node, ctx) {
    // new PrismaPg(pool) runs on that pool; new PrismaPg({ connectionString }) makes a node-postgres pool of its own.
    if (maker.makes !== 'driver-adapter') return undefined;
    return { kind: 'adapter', configId: ctx.wrappedPool(node.arguments) ?? ctx.config(node, 'pg', 'pool', node.arguments).config.id };
  },
  method(on, method, call, ctx) {
    if (on.kind === 'adapter' && method === 'connect') return { kind: 'pool', driver: 'prisma', configId: on.configId };
    if (on.kind !== 'pool') return undefined;
    // A driver adapter's transaction: its queryRaw/executeRaw run in it until commit() or rollback().
    if (method === 'startTransaction') {
      const conn = ctx.newConn('prisma', 'pooled-client', 'transaction', on.configId);
      ctx.begin(conn, call, 'adapter.startTransaction()');
      return { kind: 'conn', conn };
    }
    // Same client, with an extension: the same pool.
    if (method === '$extends') return on;
    return undefined;
  },
  connectionMethod(conn, method, _call, ctx) {
    if (conn.origin === 'transaction' && (method === 'commit' || method === 'rollback')) ctx.end(conn);
  },
  callback: ({ method, on, fileDriver }) => (method === '$transaction' ? { kind: 'tx', driver: callbackDriver(on, fileDriver, 'prisma') } : undefined),
  arrayTransaction: (method) => method === '$transaction',
  queries: [
    {
      // A Prisma driver adapter (or its transaction): { sql, args }.
      methods: new Set(['queryRaw', 'executeRaw']),
      read: ({ arg0, on, onDriver, call, ctx }) => (onDriver === 'prisma' && arg0?.type === 'ObjectExpression' ? ctx.textArg(arg0, on, 'prisma', 'dollar', call) : undefined),
    },
    { methods: UNSAFE_METHODS, read: ({ arg0, on, call, ctx }) => (arg0 ? ctx.textArg(arg0, on, 'prisma', 'dollar', call) : undefined) },
    { methods: TAG_METHODS, read: ({ arg0, on, call, ctx }) => (arg0?.type === 'TaggedTemplateExpression' ? ctx.taggedArg(arg0, on, 'prisma', call) : undefined) },
  ],
  taggedQuery(node, tag, ctx) {
    // prisma.$executeRaw`...`
    if (tag.type !== 'MemberExpression' || !TAG_METHODS.has(propertyName(tag) ?? '')) return undefined;
    return { text: node.quasi, tagged: true, on: ctx.value(tag.object), driver: 'prisma', placeholders: 'dollar', at: node };
  },
  queryConfig: { text: 'sql', values: 'args' },
  values: (call, _second, rest: Node[]) => {
    const method = methodOf(call)?.name;
    return method && UNSAFE_METHODS.has(method) ? { kind: 'args', nodes: rest } : undefined;
  },
};
