// Knex: `knex({ pool: { afterCreate } })` (afterCreate runs on each new
// connection), `knex.transaction(fn)` and `const trx = await
// knex.transaction()`, `knex.raw(text, bindings)` with `?` placeholders, and
// its builders (`knex('jobs').where({ id }).update({...})`, `.del()`,
// `.forUpdate().skipLocked()`) read as the SQL they send.
import { linkNamed, subquery, type BuiltQuery, type ChainLink, type ChainReader, type SqlWriter } from '../builder-sql.ts';
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { callbackArg, namedProperties, objectProperty, span, stringValue, unwrap, type Call, type Node } from '../syntax.ts';
import type { PlaceholderStyle } from '../../../sql/index.ts';
import type { Value } from '../flow/types.ts';
import { databaseReceiver } from './conventions.ts';
import type { DriverModel } from './model.ts';
import { optionHook } from './pg.ts';
import { countGuard, knexAssignments, knexRoot, whereGroup, type Guard } from './knex-builder.ts';

/** A Knex where: where({ id, status: 'running' }), where('id', id), where('attempts', '<', 5), whereIn, whereNull, whereRaw. */
function condition(w: SqlWriter, link: ChainLink, build: (top: TSESTree.CallExpression) => BuiltQuery | undefined): boolean {
  const args = link.args;
  const name = link.name;
  const group = whereGroup(w, link, (l) => condition(w, l, build));
  if (group !== undefined) return group;
  if (name === 'whereNull' || name === 'whereNotNull') {
    const column = args[0] ? w.column(args[0]) : undefined;
    if (!column) return false;
    w.text(`${column} IS ${name === 'whereNull' ? '' : 'NOT '}NULL`, link.call);
    return true;
  }
  if (name === 'whereIn' || name === 'whereNotIn') {
    const column = args[0] ? w.column(args[0]) : undefined;
    if (!column || !args[1]) return false;
    w.text(`${column} ${name === 'whereIn' ? '' : 'NOT '}IN (`, link.call);
    if (!subquery(w, args[1], build)) w.param(args[1]);
    w.text(')', link.call);
    return true;
  }
  if (name === 'whereRaw') {
    const text = stringValue(args[0]);
    if (!text) return false;
    w.text(`(${text.replace(/\?/g, () => `$${w.values.length + 1}`)})`, link.call);
    return true;
  }
  const object = unwrap(args[0]);
  if (args.length === 1 && object?.type === 'ObjectExpression') {
    const parts = namedProperties(object);
    if (parts.length === 0) return false;
    parts.forEach(({ key, property: p }, i) => {
      if (i > 0) w.text(' AND ', link.call);
      w.text(`${key} = `, p);
      w.value(p.value as Node);
    });
    return true;
  }
  if (args.length === 2 || args.length === 3) {
    const column = w.column(args[0]);
    const op = args.length === 3 ? stringValue(args[1]) : '=';
    if (!column || !op || !/^(=|<>|!=|<|<=|>|>=)$/.test(op)) return false;
    w.text(`${column} ${op} `, link.call);
    w.value(args[args.length - 1]);
    return true;
  }
  return false;
}

/** What a test of the row's count around the write says of its rows, as a condition of its WHERE. */
function guard(w: SqlWriter, g: Guard | undefined, hasWhere: boolean): void {
  if (!g) return;
  w.text(`${hasWhere ? ' AND ' : ' WHERE '}${g.column} ${g.op} `, g.at);
  w.param(g.bound);
}

const readChain: ChainReader = ({ links, top, executes, writer: w, build }) => {
  const first = links[0];
  const link = (name: string) => linkNamed(links, name);
  const tableLink = first.name === '()' || first.name === 'from' || first.name === 'table' || first.name === 'into' ? first : link('from');
  const table = tableLink ? stringValue(tableLink.args[0])?.split(' ')[0] : undefined;
  if (!table) return false;
  const wheres = links.filter((l) => /^(where|andWhere|orWhere|whereIn|whereNotIn|whereNull|whereNotNull|whereRaw)$/.test(l.name));
  const writeWheres = () => {
    wheres.forEach((wh, i) => {
      w.text(i === 0 ? ' WHERE ' : wh.name === 'orWhere' ? ' OR ' : ' AND ', wh.call);
      if (!condition(w, wh, build)) w.text('TRUE', wh.call);
    });
  };
  const update = link('update');
  const increment = link('increment') ?? link('decrement');
  const del = link('del') ?? link('delete');
  if (update || increment) {
    w.text(`UPDATE ${table} SET `, (update ?? increment)!.call);
    let wrote = false;
    if (update) wrote = knexAssignments(w, update.args[0]);
    if (increment) {
      const column = increment.args[0] ? w.column(increment.args[0]) : undefined;
      if (column) {
        if (wrote) w.text(', ', increment.call);
        w.text(`${column} = ${column} ${increment.name === 'increment' ? '+' : '-'} `, increment.call);
        if (increment.args[1]) w.value(increment.args[1]);
        else w.text('1', increment.call);
        wrote = true;
      }
    }
    if (!wrote) return false;
    writeWheres();
    guard(w, countGuard(w.host.program, top, update?.args[0], w.host), wheres.length > 0);
  } else if (del) {
    w.text(`DELETE FROM ${table}`, del.call);
    writeWheres();
    guard(w, countGuard(w.host.program, top, undefined, w.host), wheres.length > 0);
  } else if (link('forUpdate') && executes) {
    w.text(`SELECT * FROM ${table}`, tableLink!.call);
    writeWheres();
    const limit = link('limit') ?? link('first');
    if (limit) {
      w.text(' LIMIT ', limit.call);
      if (limit.args[0] && limit.name === 'limit') w.value(limit.args[0]);
      else w.text('1', limit.call);
    }
    w.text(` FOR UPDATE${link('skipLocked') ? ' SKIP LOCKED' : ''}`, link('forUpdate')!.call);
  } else {
    return false;
  }
  if (link('returning')) w.text(' RETURNING *', link('returning')!.call);
  return true;
};

const knexMaker: Value = { kind: 'maker', driver: 'knex', makes: 'pool' };

export const knex: DriverModel = {
  driver: 'knex',
  modules: { names: ['knex'] },
  exports: { default: knexMaker, knex: knexMaker, Knex: knexMaker, '*': knexMaker },
  types: { Transaction: 'tx' },
  // `Knex.Transaction` extends `Knex`: a parameter typed `Knex` may be handed a transaction.
  txSatisfies: ['Knex'],
  // `Knex` is the instance's type; `Knex.Knex` is not read.
  typeOf: (exported, qualified) => (exported === 'Knex' && !qualified ? 'pool' : undefined),
  method(on, method, call, ctx) {
    // const trx = await knex.transaction(): a transaction handle until trx.commit() / trx.rollback().
    if (on.kind === 'pool' && method === 'transaction' && !callbackArg(call)) {
      const tx = ctx.txAt(`knex@${call.range[0]}`, 'callback', 'knex.transaction()', span(call));
      return { kind: 'tx', driver: 'knex', tx, configId: on.configId };
    }
    return undefined;
  },
  // knex migrate:latest / seed:run call `up(knex)`, `down(knex)`, `seed(knex)`: a CommonJS migration has no import or type to say so.
  runnerExports: { names: ['up', 'down', 'seed'], uses: ['raw', 'schema'], value: { kind: 'pool', driver: 'knex' } },
  optionHooks(options) {
    const pool = objectProperty(options, 'pool');
    const value = pool ? unwrap(pool.value as Node) : undefined;
    const hook = value?.type === 'ObjectExpression' ? optionHook(value, 'afterCreate', 'configure') : undefined;
    return hook ? [hook] : [];
  },
  queries: [
    {
      methods: new Set(['raw']),
      // On a receiver the walk holds no value for, in a file of Knex: the instance when the code around says so (conventions.ts).
      read: ({ arg0, on, onDriver, object, call, ctx }) =>
        arg0 && (onDriver === 'knex' || (!on && ctx.imports.drivers.includes('knex'))) ? ctx.textArg(arg0, on ?? databaseReceiver(object, call, ctx, 'knex'), 'knex', bindingStyle(call), call) : undefined,
    },
  ],
  builder: readChain,
  builderRoot: knexRoot,
};

/** `raw(sql, [a, b])` binds `?` (and `??` names); `raw(sql, { id })` binds `:id` (and `:col:` names). */
function bindingStyle(call: Call): PlaceholderStyle {
  return unwrap(call.arguments[1] as Node | undefined)?.type === 'ObjectExpression' ? 'colon' : 'qmark';
}
