// pg-promise: `pgPromise()` makes `pgp`, `pgp(cn)` the database object;
// `db.none/one/many/any/...(text, values)` send SQL with pg-promise's own
// formats (`${name}`, `$(name)`, `$<name>`, `$1:raw`) as holes; `db.tx(fn)`
// runs fn in a transaction, `db.task(fn)` on one connection; a named query or
// `new PreparedStatement({ name, text })` is prepared once per connection.
import type { Span } from '../../../model/index.ts';
import { isFunction, type Node } from '../syntax.ts';
import { callbackDriver } from './conventions.ts';
import type { DriverModel } from './model.ts';
import { namedQueriesPrepare } from './pg.ts';

const METHODS = new Set(['none', 'one', 'many', 'any', 'oneOrNone', 'manyOrNone', 'result', 'multi', 'multiResult', 'each', 'map']);

/**
 * pg-promise formats: `${name}`, `$(name)`, `$<name>`, `$[name]`, `$/name/`, with
 * `:raw`/`^`/`:name`/`~`/`:csv`/`:json` modifiers. `$1` stays a parameter.
 */
export function pgPromiseHoles(text: string): Span[] {
  const holes: Span[] = [];
  const pattern = /\$(?:\{\s*[\w.]+\s*\}|\(\s*[\w.]+\s*\)|<\s*[\w.]+\s*>|\[\s*[\w.]+\s*\]|\/\s*[\w.]+\s*\/|\d+(?=(?::\w+|\^|~|#)))(?::\w+|\^|~|#)?/g;
  for (const match of text.matchAll(pattern)) holes.push({ start: match.index!, end: match.index! + match[0].length });
  return holes;
}

export const pgPromise: DriverModel = {
  driver: 'pg-promise',
  modules: { names: ['pg-promise'] },
  exports: { default: { kind: 'maker', driver: 'pg-promise', makes: 'pgp' }, '*': { kind: 'maker', driver: 'pg-promise', makes: 'pgp' } },
  types: { ITask: 'checked-out', IDatabase: 'pool' },
  make(maker, node, ctx) {
    // pgPromise() makes pgp; pgp(cn) makes the database object.
    if (maker.makes !== 'pgp') return undefined;
    const callee = node.callee;
    return node.type === 'CallExpression' && callee.type === 'Identifier' && ctx.imports.names.get(callee.name) === maker ? { kind: 'maker', driver: 'pg-promise', makes: 'pool' } : undefined;
  },
  prepared: namedQueriesPrepare,
  callback({ method, on, fileDriver }) {
    if (method === 'tx' || method === 'txIf') return { kind: 'tx', driver: callbackDriver(on, fileDriver, 'pg-promise') };
    if ((method === 'task' || method === 'taskIf') && (!on || ('driver' in on && on.driver === 'pg-promise'))) return { kind: 'conn', driver: 'pg-promise' };
    return undefined;
  },
  queries: [
    {
      // `query` is read as every driver's (conventions.ts).
      methods: METHODS,
      read: ({ arg0, on, onDriver, call, ctx }) => (arg0 && (onDriver === 'pg-promise' || (!on && ctx.imports.drivers.includes('pg-promise'))) ? ctx.textArg(arg0, on, 'pg-promise', 'dollar', call) : undefined),
    },
  ],
  queryConfig: { classes: ['PreparedStatement'] },
  values(_call, second: Node) {
    if (second.type === 'ArrayExpression' || second.type === 'Identifier' || second.type === 'MemberExpression') return { kind: 'array', node: second };
    if (second.type !== 'ObjectExpression' && !isFunction(second)) return { kind: 'single', node: second };
    return undefined;
  },
  holes: pgPromiseHoles,
};
