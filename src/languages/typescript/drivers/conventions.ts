// Shapes many drivers share, read on any receiver after every driver's own
// rows: `x.query(text, values)` (node-postgres' shape: TypeORM, Slonik,
// pg-promise and in-house wrappers have it too) and `x.transaction(fn)`
// (Knex, Drizzle, TypeORM, Sequelize, Neon, Slonik).
import type { Driver } from '../../../model/index.ts';
import { driverOfValue, type Value } from '../flow/types.ts';
import type { CallbackUse, QueryRow } from './model.ts';

export const queryConvention: QueryRow = {
  methods: new Set(['query']),
  read: ({ arg0, on, driver, call, ctx }) => {
    if (!arg0) return undefined;
    if (arg0.type === 'TaggedTemplateExpression') return ctx.taggedArg(arg0, on, driver, call);
    return ctx.textArg(arg0, on, driver, 'dollar', call);
  },
};

/** The driver of a transaction callback: its receiver's, the file's, or the one its method names. */
export function callbackDriver(on: Value | undefined, fileDriver: Driver, fallback: Driver): Driver {
  return driverOfValue(on) ?? (fileDriver !== 'unknown' ? fileDriver : fallback);
}

export function transactionConvention({ method, on, fileDriver }: { method: string; on: Value | undefined; fileDriver: Driver }): CallbackUse | undefined {
  return method === 'transaction' ? { kind: 'tx', driver: callbackDriver(on, fileDriver, 'unknown') } : undefined;
}
