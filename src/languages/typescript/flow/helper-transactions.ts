// A callback given to a project function that runs it inside a transaction it
// opened on the connection it hands (`withTransaction(async (client) => ...)`
// over `BEGIN; const result = await fn(client); COMMIT`): the callback's SQL,
// its claims, its work and its calls to the outside world run in that
// transaction, as in a driver's `db.transaction(fn)`. Read from the calls the
// function's own walk recorded of its callback parameter (model
// `callbackCalls`): every one of them hands the handle inside a transaction.
// A function whose walk has not run yet (declared below its caller in the
// same file) or that calls its callback outside a transaction on some path is
// read as before.
import type { Driver } from '../../../model/index.ts';
import type { Value } from './types.ts';

/** For a project function and the index of a callback argument: the transaction it runs the callback in, and which of the callback's parameters gets the handle. */
export function helperTransaction(callee: Value | undefined, argument: number): { driver: Driver; parameter: number } | undefined {
  if (callee?.kind !== 'function') return undefined;
  const { model } = callee.owner;
  const at = callee.node.range[0];
  const calls = (model.callbackCalls ?? []).filter((c) => c.function.module === model.file && c.function.at === at && c.parameter === argument);
  if (calls.length === 0 || !calls.every((c) => c.scope.kind === 'transaction' && c.connectionArgument === calls[0].connectionArgument)) return undefined;
  return { driver: calls[0].driver ?? 'unknown', parameter: calls[0].connectionArgument };
}
