// Sequelize: `new Sequelize(url, { hooks: { afterConnect } })` (and
// `addHook('afterConnect', fn)`) runs on each new connection;
// `sequelize.query(sql, { transaction, bind, replacements })` runs in the
// transaction it is given, else on any connection; `sequelize.transaction(fn)`
// and `const t = await sequelize.transaction()`.
import type { PlaceholderStyle } from '../../../sql/index.ts';
import type { QueryCall, Value } from '../flow/types.ts';
import { callbackArg, objectProperty, span, unwrap, type Call, type Node } from '../syntax.ts';
import type { DriverContext, DriverModel } from './model.ts';
import { databaseReceiver } from './conventions.ts';
import { optionHook } from './pg.ts';

/** `sequelize.query(sql, { transaction, bind, replacements })`: in `transaction` when one is given, else on any connection. */
function sequelizeQuery(text: Node, on: Value | undefined, call: Call, ctx: DriverContext): QueryCall {
  const options = unwrap(call.arguments[1] as Node | undefined);
  const transaction = options?.type === 'ObjectExpression' ? objectProperty(options, 'transaction') : undefined;
  const replacements = options?.type === 'ObjectExpression' ? objectProperty(options, 'replacements') : undefined;
  let runsOn = on;
  if (transaction) {
    const tx = ctx.value(transaction.value as Node);
    runsOn = tx?.kind === 'tx' ? tx : undefined;
  } else if (ctx.imports.names.has('useCLS') || /\buseCLS\s*\(/.test(ctx.text)) {
    // With CLS, a query inside sequelize.transaction(fn) joins it without the option: we cannot tell which.
    runsOn = undefined;
  }
  return ctx.textArg(text, runsOn, 'sequelize', replacements ? replacementStyle(replacements.value as Node) : 'dollar', call);
}

/** `query(sql, { replacements, transaction })`: options no other driver's query takes. */
function takesSequelizeOptions(call: Call): boolean {
  const options = unwrap(call.arguments[1] as Node | undefined);
  return options?.type === 'ObjectExpression' && (objectProperty(options, 'replacements') !== undefined || objectProperty(options, 'transaction') !== undefined);
}

/** Replacements of an object literal fill `:name`; of an array, or of a value held elsewhere, `?`. */
function replacementStyle(value: Node): PlaceholderStyle {
  return unwrap(value)?.type === 'ObjectExpression' ? 'colon' : 'qmark';
}

export const sequelize: DriverModel = {
  driver: 'sequelize',
  modules: { names: ['sequelize', 'sequelize-typescript', '@sequelize/core'] },
  exports: { Sequelize: { kind: 'maker', driver: 'sequelize', makes: 'pool' }, default: { kind: 'maker', driver: 'sequelize', makes: 'pool' } },
  types: { Sequelize: 'pool' },
  method(on, method, call, ctx) {
    if (on.kind === 'pool' && method === 'transaction' && !callbackArg(call)) {
      const tx = ctx.txAt(`sequelize@${call.range[0]}`, 'callback', 'sequelize.transaction()', span(call));
      return { kind: 'tx', driver: 'sequelize', tx, configId: on.configId };
    }
    return undefined;
  },
  optionHooks(options) {
    const hooks = objectProperty(options, 'hooks');
    const value = hooks ? unwrap(hooks.value as Node) : undefined;
    const hook = value?.type === 'ObjectExpression' ? optionHook(value, 'afterConnect', 'configure') : undefined;
    return hook ? [hook] : [];
  },
  events: [{ methods: ['addHook'], event: 'afterConnect', role: 'configure' }],
  queries: [
    {
      methods: new Set(['query']),
      read: ({ arg0, on, onDriver, object, call, ctx }) => {
        if (!arg0 || arg0.type === 'TaggedTemplateExpression') return undefined;
        if (onDriver === 'sequelize') return sequelizeQuery(arg0, on, call, ctx);
        // The instance from a module the scan does not read (sequelize-cli's `require('../models')`), known by its options.
        return !on && takesSequelizeOptions(call) ? sequelizeQuery(arg0, databaseReceiver(object, call, ctx, 'sequelize'), call, ctx) : undefined;
      },
    },
  ],
  values(_call, second) {
    if (second.type !== 'ObjectExpression') return undefined;
    const bind = objectProperty(second, 'bind') ?? objectProperty(second, 'replacements');
    return bind ? { kind: 'array', node: bind.value as Node } : 'none';
  },
};
