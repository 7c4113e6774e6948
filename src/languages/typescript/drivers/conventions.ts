// Shapes many drivers share, read on any receiver after every driver's own
// rows: `x.query(text, values)` (node-postgres' shape: TypeORM, Slonik,
// pg-promise and in-house wrappers have it too), `x.execute({ sql, params })`
// (a query config object: Prisma's driver adapters and in-house runtimes
// over them) and `x.transaction(fn)` (Knex, Drizzle, TypeORM, Sequelize,
// Neon, Slonik), and the pool API node-postgres' pg-pool gave the others
// (`const client = await pool.connect()` ... `client.release()`) on a pool
// the file cannot name (a parameter, an import of a module not scanned).
import type { Driver } from '../../../model/index.ts';
import { driverOfValue, type Conn, type Value } from '../flow/types.ts';
import { objectProperty, type Call, type Node } from '../syntax.ts';
import type { CallbackUse, DriverContext, QueryRow } from './model.ts';
import { releaseOnCheckout } from './pg.ts';

export const queryConvention: QueryRow = {
  methods: new Set(['query']),
  read: ({ arg0, on, driver, call, ctx }) => {
    if (!arg0) return undefined;
    if (arg0.type === 'TaggedTemplateExpression') return ctx.taggedArg(arg0, on, driver, call);
    return ctx.textArg(arg0, on, driver, 'dollar', call);
  },
};

/** The keys of a query config object every receiver may be given: its SQL text and its values. */
export const queryConfigConvention = { text: ['sql'], values: ['params'] } as const;

/**
 * `x.execute({ sql: 'select ...', params: [...] })`: an object whose `sql`
 * holds the statement, given to an execute method, sends it. Only an object
 * written at the call: `execute(plan)` or `execute(fn)` is some other API.
 */
export const executeConfigConvention: QueryRow = {
  methods: new Set(['execute']),
  read: ({ arg0, on, driver, call, ctx }) =>
    arg0?.type === 'ObjectExpression' && queryConfigConvention.text.some((key) => objectProperty(arg0, key)) ? ctx.textArg(arg0, on, driver, 'dollar', call) : undefined,
};

/** The driver of a transaction callback: its receiver's, the file's, or the one its method names. */
export function callbackDriver(on: Value | undefined, fileDriver: Driver, fallback: Driver): Driver {
  return driverOfValue(on) ?? (fileDriver !== 'unknown' ? fileDriver : fallback);
}

/**
 * A receiver the walk holds no value for, that is the driver's database
 * (its pool) by what the code around it means, for a driver that hands its
 * transactions only to a callback (`db.transaction(fn)`) or returns them from
 * a call the walk reads (Knex's `await knex.transaction()`):
 * - a value made before any job: an import of a module the scan cannot read,
 *   or a member a dependency-injection container fills;
 * - inside a transaction callback, the handle that opened it
 *   (`db.transaction(async (tx) => { await db.execute(...) })`), when its
 *   name is an import, a member the container fills, or a local a call made
 *   (`const db = await getConnection(tenant)`). A parameter there may be a
 *   caller's transaction (a nested transaction's outer handle): not read.
 * Each call on such a receiver takes a pool connection in autocommit.
 */
export function databaseReceiver(object: Node, at: Node, ctx: DriverContext, driver: Driver): Value | undefined {
  if (ctx.importedUnread(object) || ctx.injected(object)) return { kind: 'pool', driver };
  const opener = ctx.openerAround(object, at);
  return opener && (opener.bound === 'import' || opener.bound === 'injected' || opener.bound === 'made') ? { kind: 'pool', driver } : undefined;
}

export function transactionConvention({ method, on, fileDriver }: { method: string; on: Value | undefined; fileDriver: Driver }): CallbackUse | undefined {
  return method === 'transaction' ? { kind: 'tx', driver: callbackDriver(on, fileDriver, 'unknown') } : undefined;
}

/**
 * `await pool.connect()` with no argument, on a receiver of no known driver
 * (an untyped parameter, `module.pool`, an import of a module the scan does
 * not hold): the pool API of pg-pool, which node-postgres, Neon and
 * @vercel/postgres share, and in-house pools copy. What the pool is stays
 * unknown (its driver, its options, whether it prepares statements), so the
 * rules that need those facts stay quiet; the checkout lets the walk follow
 * the client's own BEGIN, COMMIT and ROLLBACK: to its `release()`, and to a
 * `SET LOCAL` sent before any BEGIN. With a callback (Slonik's
 * `pool.connect(fn)`) it is not this API.
 */
export function checkoutConvention(method: string, call: Call, ctx: DriverContext): Value | undefined {
  return method === 'connect' && call.arguments.length === 0 ? ctx.checkout('unknown', 'unknown', 'checkout') : undefined;
}

/** `client.release()` of a client checked out of such a pool: back to the pool as it is, as pg-pool does. */
export function releaseConvention(conn: Conn, method: string, call: Call, ctx: DriverContext): void {
  if (conn.driver === 'unknown') releaseOnCheckout(conn, method, call, ctx);
}
