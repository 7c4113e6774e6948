// Prisma: `new PrismaClient()` is the pool (or runs on the pool of the
// driver adapter it is given: `new PrismaPg(pool)`); `$executeRaw`...``,
// `$queryRaw`...``, `$executeRawUnsafe(text, ...values)`; `$transaction(fn)`
// and `$transaction([...])` (every query of the array in one transaction);
// `Prisma.sql`...`` makes a fragment. A driver adapter's
// `startTransaction()` opens a transaction its `queryRaw/executeRaw({ sql,
// args })` run in until `commit()` or `rollback()`. Prisma 7 generates its
// client into the project (`../generated/prisma`). Model calls
// (`prisma.job.update({ where, data })`, `findFirst({ where, orderBy })`, ...)
// are read as the SQL they send: `prisma-models.ts`.
import type { Value } from '../flow/types.ts';
import { methodOf, propertyName, type Node } from '../syntax.ts';
import { callbackDriver, databaseReceiver } from './conventions.ts';
import type { DriverContext, DriverModel } from './model.ts';
import { readModelCall } from './prisma-models.ts';

const TAG_METHODS = new Set(['$executeRaw', '$queryRaw']);
const UNSAFE_METHODS = new Set(['$executeRawUnsafe', '$queryRawUnsafe']);

const prismaTag: Value = { kind: 'tag', driver: 'prisma' };

/**
 * The receiver of a raw query the walk holds no value for, when it is the
 * client itself: the handle whose `$transaction(fn)` the query runs in (a
 * transaction client has no `$transaction`, so whatever opens one is the
 * client, a parameter too), or a client made before any job (an import the
 * scan cannot read, a Nest service injected into the constructor: the
 * `$`-methods are Prisma's). Each call takes a pool connection in autocommit.
 */
function baseClient(object: Node, at: Node, ctx: DriverContext): Value | undefined {
  if (ctx.openerAround(object, at)?.method === '$transaction') return { kind: 'pool', driver: 'prisma' };
  return databaseReceiver(object, at, ctx, 'prisma');
}

/** The Prisma namespace: `Prisma.sql`...``. */
const namespace: Value = { kind: 'namespace', member: (name) => (name === 'sql' ? prismaTag : undefined) };

export const prisma: DriverModel = {
  driver: 'prisma',
  modules: { names: ['@prisma/client', '.prisma/client'], prefixes: ['@prisma/client/', '@prisma/adapter-'], pattern: /(^|\/)generated\/prisma(\/client)?(\.[cm]?[jt]s)?$/ },
  exports: {
    PrismaClient: { kind: 'maker', driver: 'prisma', makes: 'pool' },
    Prisma: namespace,
    sql: prismaTag,
    ...Object.fromEntries(['PrismaPg', 'PrismaNeon', 'PrismaPostgresAdapter'].map((name) => [name, { kind: 'maker', driver: 'prisma', makes: 'driver-adapter' } as const])),
  },
  // A client generated to a path of the project's choosing (`output = "../generated/client"`), or a package re-exporting one.
  generatedExports: ['PrismaClient'],
  types: { TransactionClient: 'tx', PrismaClient: 'pool' },
  wrapsPool: true,
  // prisma.job / tx.job: a model's delegate, whose calls run where the client or transaction client runs.
  member: (object, name) => ((object.kind === 'pool' || object.kind === 'tx' || object.kind === 'opaque') && !name.startsWith('$') && /^[a-z]\w*$/i.test(name) ? object : undefined),
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
  callback: ({ method, on, fileDriver }) => {
    if (method === '$transaction') return { kind: 'tx', driver: callbackDriver(on, fileDriver, 'prisma') };
    // Prisma.defineExtension((client) => ...), prisma.$extends((client) => ...): the function is given the client it extends.
    if ((method === 'defineExtension' && on === namespace) || (method === '$extends' && on?.kind === 'pool' && on.driver === 'prisma')) return { kind: 'client', driver: 'prisma' };
    return undefined;
  },
  arrayTransaction: (method) => method === '$transaction',
  queries: [
    {
      // A Prisma driver adapter (or its transaction): { sql, args }.
      methods: new Set(['queryRaw', 'executeRaw']),
      read: ({ arg0, on, onDriver, call, ctx }) => (onDriver === 'prisma' && arg0?.type === 'ObjectExpression' ? ctx.textArg(arg0, on, 'prisma', 'dollar', call) : undefined),
    },
    { methods: UNSAFE_METHODS, read: ({ arg0, on, object, call, ctx }) => (arg0 ? ctx.textArg(arg0, on ?? baseClient(object, call, ctx), 'prisma', 'dollar', call) : undefined) },
    { methods: TAG_METHODS, read: ({ arg0, on, object, call, ctx }) => (arg0?.type === 'TaggedTemplateExpression' ? ctx.taggedArg(arg0, on ?? baseClient(object, call, ctx), 'prisma', call) : undefined) },
  ],
  taggedQuery(node, tag, ctx) {
    // prisma.$executeRaw`...`
    if (tag.type !== 'MemberExpression' || !TAG_METHODS.has(propertyName(tag) ?? '')) return undefined;
    return { text: node.quasi, tagged: true, on: ctx.value(tag.object) ?? baseClient(tag.object, node, ctx), driver: 'prisma', placeholders: 'dollar', at: node };
  },
  queryConfig: { text: 'sql', values: 'args' },
  values: (call, _second, rest: Node[]) => {
    const method = methodOf(call)?.name;
    return method && UNSAFE_METHODS.has(method) ? { kind: 'args', nodes: rest } : undefined;
  },
};
