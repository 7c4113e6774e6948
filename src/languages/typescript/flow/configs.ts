// Connection configs of a TS/JS file: one per pool or client the code makes,
// with the options and hooks its driver module reads, and after the walk
// whether it caches prepared statements (the driver module's `prepared`).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ConnectionConfig, Driver, Span } from '../../../model/index.ts';
import { lineIndexOf } from '../../../model/lines.ts';
import type { DriverRegistry } from '../drivers/index.ts';
import { methodOf, span, unwrap, type Node } from '../syntax.ts';
import { maxConnections } from './pool-facts.ts';
import type { ConfigEntry, PoolHook } from './types.ts';

/** The object arguments of a call that makes a pool: its options. */
function optionObjects(args: readonly TSESTree.CallExpressionArgument[]): TSESTree.ObjectExpression[] {
  return args.map((arg) => unwrap(arg as Node)).filter((o): o is TSESTree.ObjectExpression => o?.type === 'ObjectExpression');
}

export function makeConfig(file: string, node: Node, driver: Driver, kind: 'pool' | 'client', args: readonly TSESTree.CallExpressionArgument[], drivers: DriverRegistry): ConfigEntry {
  const config: ConnectionConfig = {
    id: `${file}#${driver}@${node.range[0]}`,
    driver,
    kind,
    span: span(node),
    preparedStatements: 'unknown',
    autocommit: true,
    callbacks: [],
  };
  const entry: ConfigEntry = { config, namedQueries: [], transactions: [], ...(kind === 'pool' && maxConnections(args) === 1 ? { oneConnection: true } : {}) };
  const model = drivers.of(driver);
  if (model?.readOptions) for (const options of optionObjects(args)) model.readOptions(options, entry);
  return entry;
}

/** Hooks given in a pool's options object, as its driver names them. */
export function optionHooks(driver: Driver, args: readonly TSESTree.CallExpressionArgument[], drivers: DriverRegistry): PoolHook[] {
  const model = drivers.of(driver);
  if (!model?.optionHooks) return [];
  return optionObjects(args).flatMap((options) => model.optionHooks!(options));
}

/** After the walk: prepared statements per config, from the named queries and options seen. */
export function finishConfigs(entries: readonly ConfigEntry[], text: string, drivers: DriverRegistry): void {
  const lines = lineIndexOf(text);
  const line = (s: Span) => lines.position(s.start).line;
  for (const entry of entries) drivers.of(entry.config.driver)?.prepared?.(entry, line);
}

/** `pool.on('connect', fn)`, `addHook('afterConnect', fn)`: a hook by event, when a driver module names the event. */
export function eventHook(call: TSESTree.CallExpression, drivers: DriverRegistry): PoolHook | undefined {
  const method = methodOf(call);
  if (!method) return undefined;
  const event = unwrap(call.arguments[0] as Node);
  const fn = unwrap(call.arguments[call.arguments.length - 1] as Node);
  if (event?.type !== 'Literal' || typeof event.value !== 'string' || !fn || call.arguments.length < 2) return undefined;
  const role = drivers.eventHook(method.name, event.value);
  return role ? { fn, role, name: `${method.name}('${event.value}')` } : undefined;
}
