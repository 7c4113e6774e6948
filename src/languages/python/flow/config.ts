// Reading the arguments of a call that makes a pool or a connection:
// keyword arguments, dicts through names, booleans and numbers. Driver
// modules read their own options with these (drivers/*.ts).
import type { ConnectionConfig } from '../../../model/index.ts';
import { callParts, children, span, unwrap, type Arg, type Node } from '../syntax.ts';
import type { ConfigEntry, Maker, ReadContext } from './types.ts';

/** The config of the pool or connection `callNode` makes, before its options are read. */
export function newConfigEntry(callNode: Node, maker: Maker): ConfigEntry {
  const config: ConnectionConfig = {
    id: `${maker.kind}@${callNode.from}`,
    driver: maker.driver,
    kind: maker.kind === 'pool' ? 'pool' : 'client',
    span: span(callNode),
    preparedStatements: 'unknown',
    autocommit: 'unknown',
    callbacks: [],
  };
  return { config, maker, threshold: { kind: 'default' }, callbackArgs: [] };
}

export function keywordMap(args: Arg[]): Map<string, Node> {
  const map = new Map<string, Node>();
  for (const a of args) if (a.name) map.set(a.name, a.value);
  return map;
}

/** `{"k": v, ...}` or `dict(k=v)`, through a name; 'unknown' when it has `**` parts or is computed. */
export function readDict(node: Node, ctx: ReadContext, depth = 0): Map<string, Node> | 'unknown' {
  const expr = unwrap(node);
  if (!expr || depth > 4) return 'unknown';
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? readDict(value, ctx, depth + 1) : 'unknown';
  }
  if (expr.name === 'CallExpression') {
    const call = callParts(expr, ctx.text);
    if (!call || ctx.text.slice(call.callee.from, call.callee.to) !== 'dict' || call.args.some((a) => !a.name)) return 'unknown';
    return keywordMap(call.args);
  }
  if (expr.name !== 'DictionaryExpression') return 'unknown';
  const map = new Map<string, Node>();
  const parts = children(expr).filter((c) => c.name !== '{' && c.name !== '}');
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].name === '**') return 'unknown';
    if (parts[i].name === ',') continue;
    const key = parts[i];
    if (parts[i + 1]?.name !== ':' || !parts[i + 2]) return 'unknown';
    const name = /^['"](\w+)['"]$/.exec(ctx.text.slice(key.from, key.to));
    if (!name) return 'unknown';
    map.set(name[1], parts[i + 2]);
    i += 2;
  }
  return map;
}

export function booleanOf(node: Node, ctx: ReadContext): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  const text = ctx.text.slice(expr.from, expr.to);
  if (text === 'True') return true;
  if (text === 'False') return false;
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? booleanOf(value, ctx) : 'unknown';
  }
  return 'unknown';
}

/** A whole number, through names. */
export function numberOf(node: Node, ctx: ReadContext): number | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  if (expr.name === 'Number' && /^\d+$/.test(ctx.text.slice(expr.from, expr.to))) return Number(ctx.text.slice(expr.from, expr.to));
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? numberOf(value, ctx) : undefined;
  }
  return undefined;
}
