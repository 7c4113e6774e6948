// Slonik: `createPool(url, options)`, sql`...` (and `sql.unsafe`, `sql.type(z)`,
// `sql.typeAlias(x)`, `sql.fragment`) make query fragments that
// `pool.query/one/many/any/...(sql`...`)` send; `pool.connect(fn)` runs fn on
// one connection, `pool.transaction(fn)` in a transaction.
//
// Its pool resets a connection on release: `resetConnection`, whose default
// runs `DISCARD ALL` (Slonik's createClientConfiguration). `sql.prepared(name,
// parser)`...`` makes a named query, which Slonik's pg driver sends as
// node-postgres' `{ name, text }`: prepared once per connection and never
// re-prepared (F5), so after the default reset a reused connection fails it
// with prepared statement "name" does not exist.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { objectProperty, propertyName, stringValue, unwrap, isFunction, type Node } from '../syntax.ts';
import type { DriverModel, FileFacts } from './model.ts';
import { namedQueriesPrepare } from './pg.ts';

const METHODS = new Set(['one', 'many', 'any', 'maybeOne', 'oneFirst', 'manyFirst', 'anyFirst', 'maybeOneFirst', 'exists', 'query']);

const DEFAULT_RESET = { statements: ['DISCARD ALL'], reason: "Slonik's default resetConnection" };

/** The name of `sql.prepared('name', parser)`...``: a named (prepared) query. */
function preparedName(tagged: TSESTree.TaggedTemplateExpression): string | undefined {
  const tag = unwrap(tagged.tag);
  if (tag?.type !== 'CallExpression') return undefined;
  const callee = unwrap(tag.callee);
  return callee?.type === 'MemberExpression' && propertyName(callee) === 'prepared' ? stringValue(tag.arguments[0] as Node | undefined) : undefined;
}

/** A `resetConnection` that only runs `DISCARD ALL` (`({ query }) => query('DISCARD ALL')`): the default, written out. */
function discardsAll(fn: Node): boolean {
  if (!isFunction(fn)) return false;
  const body = fn.body.type === 'BlockStatement' ? fn.body.body : [fn.body];
  if (body.length !== 1) return false;
  const statement = body[0] as Node;
  const expression = unwrap(statement.type === 'ReturnStatement' || statement.type === 'ExpressionStatement' ? (statement.type === 'ReturnStatement' ? statement.argument : statement.expression) : statement);
  const call = expression?.type === 'AwaitExpression' ? unwrap(expression.argument) : expression;
  if (call?.type !== 'CallExpression' || call.arguments.length !== 1) return false;
  const text = stringValue(call.arguments[0] as Node);
  return text !== undefined && /^\s*discard\s+all\s*;?\s*$/i.test(text);
}

/** Named queries sent on a Slonik pool: its config's prepared statements. */
function placeNamedQueries({ sites, configById }: FileFacts): void {
  for (const s of sites) {
    if (s.driver !== 'slonik' || !s.preparedName) continue;
    const entry = configById(s.connection.configId);
    if (entry && !entry.namedQueries.some((q) => q.span.start === s.span.start)) entry.namedQueries.push({ name: s.preparedName, span: s.span });
  }
}

export const slonik: DriverModel = {
  driver: 'slonik',
  modules: { names: ['slonik'] },
  exports: { createPool: { kind: 'maker', driver: 'slonik', makes: 'pool' }, sql: { kind: 'tag', driver: 'slonik' }, createSqlTag: { kind: 'maker', driver: 'slonik', makes: 'sql-tag' } },
  types: { DatabasePool: 'pool', DatabaseTransactionConnection: 'tx' },
  member: (object, name) => (object.kind === 'tag' && ['unsafe', 'type', 'typeAlias', 'fragment'].includes(name) ? object : undefined),
  // sql.prepared('name', parser) is a tag too.
  method: (on, method) => (on.kind === 'tag' && on.driver === 'slonik' && method === 'prepared' ? on : undefined),
  make(maker, node, ctx) {
    // createSqlTag(): what it wraps, if it is a pool.
    if (maker.makes !== 'sql-tag') return undefined;
    const wrapped = ctx.wrappedPool(node.arguments);
    return wrapped ? { kind: 'adapter', configId: wrapped } : undefined;
  },
  readOptions(options, entry) {
    const reset = objectProperty(options, 'resetConnection');
    const fn = reset ? unwrap(reset.value as Node) : undefined;
    if (fn && discardsAll(fn)) entry.config.driverReset = { statements: ['DISCARD ALL'], reason: 'its resetConnection runs DISCARD ALL' };
  },
  // A resetConnection of the app's replaces the default (one that runs DISCARD ALL is the default written out).
  optionHooks(options) {
    const reset = objectProperty(options, 'resetConnection');
    const fn = reset ? unwrap(reset.value as Node) : undefined;
    if (!fn || discardsAll(fn)) return [];
    return isFunction(fn) || fn.type === 'Identifier' || fn.type === 'MemberExpression' ? [{ fn, role: 'reset', name: 'resetConnection' }] : [];
  },
  prepared(entry, line) {
    // The default reset, unless the app gave its own.
    if (entry.config.kind === 'pool' && !entry.config.driverReset && !entry.config.callbacks.some((c) => c.role === 'reset')) entry.config.driverReset = DEFAULT_RESET;
    namedQueriesPrepare(entry, line);
  },
  finish: placeNamedQueries,
  callback: ({ method, on }) => (method === 'connect' && on?.kind === 'pool' && on.driver === 'slonik' ? { kind: 'conn', driver: 'slonik' } : undefined),
  queries: [
    {
      // `query` of any other receiver is read as every driver's (conventions.ts).
      methods: METHODS,
      read: ({ arg0, on, onDriver, call, ctx, method }) => {
        if (arg0?.type !== 'TaggedTemplateExpression') return undefined;
        if (!(onDriver === 'slonik' || (!on && method !== 'query' && ctx.imports.drivers.includes('slonik')))) return undefined;
        const query = ctx.taggedArg(arg0, on, 'slonik', call);
        const name = preparedName(arg0);
        return name ? { ...query, preparedName: name } : query;
      },
    },
  ],
};
