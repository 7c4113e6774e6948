// SQL kept in a dict and read by key: `QUERIES["CLAIM"]` or `QUERIES.get("CLAIM")`,
// the dict a module binds once (`{"CLAIM": "..."}`, `dict(CLAIM="...")`), a class
// keeps (`self.SQL["CLAIM"]`), or a module of the project it is imported from.
// The key is one the code writes (strings.ts reads it); any other mapping or key
// stays unknown.
import { callParts, children, dottedName, span, unwrap, type Node } from '../syntax.ts';
import type { HostText } from './python-text.ts';

/** What the dict reading asks of strings.ts's ResolveContext. */
interface DictContext {
  text: string;
  constant(name: string, at: Node): Node | undefined;
  member?(node: Node): Node | undefined;
  importedItem?(name: string, key: string, at: Node): HostText | undefined;
}

/**
 * The text of the item `key` of the dict `object` names; every character stands at `at` (the subscript or the
 * `.get` call). `resolve` reads an item's SQL in this file.
 */
export function dictItemText(object: Node, key: string, at: Node, ctx: DictContext, resolve: (item: Node) => HostText | undefined): HostText | undefined {
  const objectName = object.name === 'VariableName' ? ctx.text.slice(object.from, object.to) : object.name === 'MemberExpression' && !object.getChild('[') ? dottedName(object, ctx.text) : undefined;
  if (!objectName) return undefined;
  // A module constant, or a dict a class keeps (`SQL = {...}` in the class body, `self.sql = {...}` set once).
  const mapping = object.name === 'VariableName' ? ctx.constant(objectName, object) : ctx.member?.(object);
  const where = span(at);
  if (mapping) {
    const item = dictItem(mapping, key, ctx.text, (name) => ctx.constant(name, object));
    const inner = item ? resolve(item) : undefined;
    return inner ? { ...inner, pinned: where } : undefined;
  }
  const there = ctx.importedItem?.(objectName, key, at);
  if (!there) return undefined;
  return { text: there.text, starts: there.starts.map(() => where.start), ends: there.ends.map(() => where.end), holes: there.holes, span: where, composed: there.composed, colonParams: there.colonParams };
}

/**
 * The value of the item `key` of a dict written in the code: `{"CLAIM": ..., ...}` or `dict(CLAIM=..., ...)`.
 * Undefined when the dict unpacks another (`**base`), so the key may be bound elsewhere, or has no such item.
 */
export function dictItem(value: Node, key: string, text: string, constant: (name: string) => Node | undefined): Node | undefined {
  const dict = unwrap(value);
  if (!dict) return undefined;
  if (dict.name === 'CallExpression') {
    const call = callParts(dict, text);
    if (!call || call.callee.name !== 'VariableName' || text.slice(call.callee.from, call.callee.to) !== 'dict') return undefined;
    if (call.args.some((a) => a.star || !a.name)) return undefined;
    return call.args.find((a) => a.name === key)?.value;
  }
  if (dict.name !== 'DictionaryExpression') return undefined;
  const parts = children(dict).filter((c) => !['{', '}', ',', ':'].includes(c.name));
  if (parts.some((p) => p.name === '**' || p.name === 'for')) return undefined;
  let found: Node | undefined;
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const k = unwrap(parts[i]);
    const name = k?.name === 'VariableName' ? constant(text.slice(k.from, k.to)) : k;
    const literal = name?.name === 'String' ? /^[rRuU]?(['"])(.*)\1$/s.exec(text.slice(name.from, name.to)) : null;
    if (literal && literal[2] === key) found = parts[i + 1];
  }
  return found;
}
