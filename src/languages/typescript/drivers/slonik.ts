// Slonik: `createPool(url)`, sql`...` (and `sql.unsafe`, `sql.type(z)`,
// `sql.typeAlias(x)`, `sql.fragment`) make query fragments that
// `pool.query/one/many/any/...(sql`...`)` send; `pool.connect(fn)` runs fn on
// one connection, `pool.transaction(fn)` in a transaction. Its pool resets a
// connection on release with DISCARD ALL by default.
import type { DriverModel } from './model.ts';

const METHODS = new Set(['one', 'many', 'any', 'maybeOne', 'oneFirst', 'manyFirst', 'anyFirst', 'maybeOneFirst', 'exists']);

export const slonik: DriverModel = {
  driver: 'slonik',
  modules: { names: ['slonik'] },
  exports: { createPool: { kind: 'maker', driver: 'slonik', makes: 'pool' }, sql: { kind: 'tag', driver: 'slonik' }, createSqlTag: { kind: 'maker', driver: 'slonik', makes: 'sql-tag' } },
  types: { DatabasePool: 'pool', DatabaseTransactionConnection: 'tx' },
  member: (object, name) => (object.kind === 'tag' && ['unsafe', 'type', 'typeAlias', 'fragment'].includes(name) ? object : undefined),
  make(maker, node, ctx) {
    // createSqlTag(): what it wraps, if it is a pool.
    if (maker.makes !== 'sql-tag') return undefined;
    const wrapped = ctx.wrappedPool(node.arguments);
    return wrapped ? { kind: 'adapter', configId: wrapped } : undefined;
  },
  callback: ({ method, on }) => (method === 'connect' && on?.kind === 'pool' && on.driver === 'slonik' ? { kind: 'conn', driver: 'slonik' } : undefined),
  queries: [
    {
      // `query` is read as every driver's (conventions.ts).
      methods: METHODS,
      read: ({ arg0, on, onDriver, call, ctx }) =>
        arg0?.type === 'TaggedTemplateExpression' && (onDriver === 'slonik' || (!on && ctx.imports.drivers.includes('slonik'))) ? ctx.taggedArg(arg0, on, 'slonik', call) : undefined,
    },
  ],
};
