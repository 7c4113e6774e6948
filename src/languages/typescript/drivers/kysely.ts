// Kysely: `new Kysely({ dialect: new PostgresDialect({ pool }) })` runs on the
// pool it wraps, with the dialect's `onCreateConnection` (each new
// connection) and `onReserveConnection` (each checkout) hooks;
// `db.transaction().execute(fn)` runs fn in a transaction,
// `db.connection().execute(fn)` on one connection; sql`...`.execute(db) and
// `connection.executeQuery(CompiledQuery.raw(text, params))` send SQL; its
// builders (`updateTable`, `deleteFrom`, `selectFrom(...).forUpdate()`) are
// read as the SQL they send.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { assignments, linkNamed, subquery, type BuiltQuery, type ChainReader, type SqlWriter } from '../builder-sql.ts';
import { dottedName, isFunction, methodOf, objectProperty, propertyName, stringValue, unwrap, type Node } from '../syntax.ts';
import type { DriverModel } from './model.ts';
import { optionHook } from './pg.ts';

const TERMINALS = new Set(['execute', 'executeTakeFirst', 'executeTakeFirstOrThrow', 'then', 'run']);

/** A Kysely where: where('id', '=', id), where(eb => eb.and([...])), where(eb => eb('attempts', '<', 5)). */
function condition(w: SqlWriter, args: Node[], build: (top: TSESTree.CallExpression) => BuiltQuery | undefined, depth = 0): boolean {
  if (depth > 8) return false;
  if (args.length === 3) {
    const column = w.column(args[0]);
    const op = stringValue(args[1]);
    if (!column || !op || !/^(=|<>|!=|<|<=|>|>=|in|not in|is|is not|like)$/i.test(op)) return false;
    const span = { range: [args[0].range[0], args[2].range[1]] as [number, number] };
    w.text(`${column} ${op.toUpperCase()} `, span);
    const value = unwrap(args[2]);
    if (/in$/i.test(op)) {
      w.text('(', span);
      if (!subquery(w, args[2], build)) w.param(args[2]);
      w.text(')', span);
    } else if (value?.type === 'Literal' && value.value === null) {
      w.text('NULL', value);
    } else {
      w.value(args[2]);
    }
    return true;
  }
  if (args.length === 1) {
    let fn = unwrap(args[0]);
    if (isFunction(fn) && fn.body && fn.body.type !== 'BlockStatement') fn = unwrap(fn.body as Node);
    if (fn?.type !== 'CallExpression') return false;
    const callee = unwrap(fn.callee);
    const name = callee?.type === 'MemberExpression' ? propertyName(callee) : undefined;
    if ((name === 'and' || name === 'or') && unwrap(fn.arguments[0] as Node)?.type === 'ArrayExpression') {
      const parts = (unwrap(fn.arguments[0] as Node) as TSESTree.ArrayExpression).elements.filter((e): e is TSESTree.Expression => !!e && e.type !== 'SpreadElement');
      if (parts.length === 0) return false;
      w.text('(', fn);
      parts.forEach((p, i) => {
        if (i > 0) w.text(` ${name.toUpperCase()} `, fn!);
        const inner = unwrap(p as Node);
        if (!(inner?.type === 'CallExpression' && condition(w, inner.arguments as Node[], build, depth + 1))) w.text('TRUE', p);
      });
      w.text(')', fn);
      return true;
    }
    if (callee?.type === 'Identifier' && fn.arguments.length === 3) return condition(w, fn.arguments as Node[], build, depth + 1);
  }
  return false;
}

const readChain: ChainReader = ({ links, top, executes, writer: w, build }) => {
  const first = links[0];
  const names = links.map((l) => l.name);
  const link = (name: string) => linkNamed(links, name);
  const table = stringValue(first.args[0])?.split(' ')[0];
  if (!table) return false;
  const runs = executes || TERMINALS.has(names[names.length - 1]);
  const wheres = links.filter((l) => l.name === 'where');
  const writeWheres = () => {
    wheres.forEach((wh, i) => {
      w.text(i === 0 ? ' WHERE ' : ' AND ', wh.call);
      if (!condition(w, wh.args, build)) w.text('TRUE', wh.call);
    });
  };
  if (first.name === 'updateTable') {
    const set = link('set');
    if (!set || !runs) return false;
    w.text(`UPDATE ${table} SET `, first.call);
    if (!assignments(w, set.args[0], (k) => k)) return false;
    writeWheres();
  } else if (first.name === 'deleteFrom') {
    if (!runs) return false;
    w.text(`DELETE FROM ${table}`, first.call);
    writeWheres();
  } else if (first.name === 'selectFrom') {
    const lock = link('forUpdate');
    if (!lock || !runs) return false;
    w.text(`SELECT * FROM ${table}`, first.call);
    writeWheres();
    const limit = link('limit');
    if (limit?.args[0]) {
      w.text(' LIMIT ', limit.call);
      w.value(limit.args[0]);
    }
    w.text(` FOR UPDATE${link('skipLocked') ? ' SKIP LOCKED' : ''}`, lock.call);
  } else {
    return false;
  }
  if (names.some((n) => n.startsWith('returning'))) w.text(' RETURNING *', top);
  return true;
};

export const kysely: DriverModel = {
  driver: 'kysely',
  modules: { names: ['kysely'] },
  exports: { Kysely: { kind: 'maker', driver: 'kysely', makes: 'pool' }, sql: { kind: 'tag', driver: 'kysely' }, PostgresDialect: { kind: 'maker', driver: 'kysely', makes: 'dialect' } },
  types: { Transaction: 'tx', Kysely: 'pool' },
  // `Transaction<DB>` extends `Kysely<DB>`: a parameter typed `Kysely<DB>` may be handed a transaction.
  txSatisfies: ['Kysely'],
  wrapsPool: true,
  make(maker, node, ctx) {
    // new PostgresDialect({ pool }): what it wraps, if it is a pool.
    if (maker.makes !== 'dialect') return undefined;
    const wrapped = ctx.wrappedPool(node.arguments);
    return wrapped ? { kind: 'adapter', configId: wrapped } : undefined;
  },
  method(on, method, call) {
    if (on.kind === 'pool') {
      // Same client, with a plugin or a schema: the same pool.
      if (method === 'withPlugin' || method === 'withSchema' || method === 'withoutPlugins') return on;
      if (method === 'transaction' && call.arguments.length === 0) return { kind: 'builder', driver: 'kysely', of: 'transaction', configId: on.configId };
      if (method === 'connection' && call.arguments.length === 0) return { kind: 'builder', driver: 'kysely', of: 'connection', configId: on.configId };
    }
    if (on.kind === 'builder' && (method === 'setIsolationLevel' || method === 'setAccessMode')) return on;
    return undefined;
  },
  optionHooks(options) {
    // new PostgresDialect({ pool, onCreateConnection, onReserveConnection }) inside new Kysely({ dialect }).
    const dialect = objectProperty(options, 'dialect');
    const made = dialect ? unwrap(dialect.value as Node) : undefined;
    const dialectOptions = made?.type === 'NewExpression' ? unwrap(made.arguments[0] as Node) : undefined;
    const hooks = [];
    for (const object of [options, dialectOptions]) {
      if (object?.type !== 'ObjectExpression') continue;
      hooks.push(optionHook(object, 'onCreateConnection', 'configure'), optionHook(object, 'onReserveConnection', 'checkout'));
    }
    return hooks.filter((h) => h !== undefined);
  },
  callback({ method, on }) {
    if (method !== 'execute' || on?.kind !== 'builder') return undefined;
    return on.of === 'transaction' ? { kind: 'tx', driver: 'kysely', form: 'db.transaction().execute' } : { kind: 'conn', driver: 'kysely' };
  },
  queries: [
    {
      // sql`...`.execute(db)
      methods: new Set(['execute']),
      withoutText: true,
      read: ({ object, call, ctx }) => {
        const o = unwrap(object);
        if (o?.type !== 'TaggedTemplateExpression') return undefined;
        const tag = ctx.value(o.tag);
        if (tag?.kind !== 'tag' && dottedName(o.tag) !== 'sql') return undefined;
        ctx.consume(o);
        return { text: o.quasi, tagged: true, on: ctx.value(call.arguments[0] as Node), driver: 'kysely', placeholders: 'dollar', at: call };
      },
    },
    {
      // connection.executeQuery(CompiledQuery.raw(text, params)) (in onCreateConnection hooks).
      methods: new Set(['executeQuery']),
      read: ({ arg0, on, call, ctx }) => {
        const compiled = arg0?.type === 'CallExpression' ? methodOf(arg0) : undefined;
        if (compiled?.name === 'raw' && dottedName(compiled.object)?.endsWith('CompiledQuery') && arg0?.type === 'CallExpression' && arg0.arguments[0]) {
          ctx.consume(arg0);
          const query = ctx.textArg(unwrap(arg0.arguments[0] as Node)!, on, 'kysely', 'dollar', call);
          query.values = arg0.arguments[1] ? { kind: 'array', node: arg0.arguments[1] as Node } : undefined;
          return query;
        }
        return undefined;
      },
    },
  ],
  builder: readChain,
};
