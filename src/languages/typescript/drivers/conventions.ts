// Shapes many drivers share, read on any receiver after every driver's own
// rows: `x.query(text, values)` (node-postgres' shape: TypeORM, Slonik,
// pg-promise and in-house wrappers have it too), `x.execute({ sql, params })`
// (a query config object: Prisma's driver adapters and in-house runtimes
// over them) and `x.transaction(fn)` (Knex, Drizzle, TypeORM, Sequelize,
// Neon, Slonik).
import type { Driver } from '../../../model/index.ts';
import { driverOfValue, type Value } from '../flow/types.ts';
import { objectProperty } from '../syntax.ts';
import type { CallbackUse, QueryRow } from './model.ts';

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

export function transactionConvention({ method, on, fileDriver }: { method: string; on: Value | undefined; fileDriver: Driver }): CallbackUse | undefined {
  return method === 'transaction' ? { kind: 'tx', driver: callbackDriver(on, fileDriver, 'unknown') } : undefined;
}
