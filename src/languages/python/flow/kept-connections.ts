// Connections a module or an object keeps (`conn = psycopg2.connect(...)` at
// module level, `self.db = psycopg.connect(...)` in `__init__`) and uses in
// its functions. Their transaction state when a function starts is not known
// (an earlier call may have left a transaction open), but their autocommit
// mode is, when the file makes the connection once and never switches it:
// then every statement of a function runs in a transaction that rolls back
// with it (the driver's implicit one) or each alone (autocommit), from the
// first statement to the function's commit.
import { autocommitSetterOf } from '../drivers/index.ts';
import { children, dottedName, methodCall, type Node } from '../syntax.ts';
import type { ConfigEntry } from './types.ts';

interface KeptNames {
  /** Names whose autocommit the file sets (`x.autocommit = ...`, `x.set_session(autocommit=...)`, ...). */
  switched: Set<string>;
  /** How many times the file assigns each dotted name. */
  assigned: Map<string, number>;
}

const FILES = new WeakMap<object, KeptNames>();

/**
 * The autocommit mode a kept connection has in every function that uses it: its config's (psycopg's and
 * psycopg2's default is off), when `name` is assigned once in the file and nothing in the file switches
 * its autocommit; else 'unknown'.
 */
export function keptAutocommit(file: { tree: { topNode: Node }; text: string }, name: string, entry: ConfigEntry): boolean | 'unknown' {
  const known = entry.config.autocommit;
  if (known === 'unknown') return 'unknown';
  let names = FILES.get(file);
  if (!names) {
    names = readNames(file.tree.topNode, file.text);
    FILES.set(file, names);
  }
  if (names.switched.has(name) || (names.assigned.get(name) ?? 0) !== 1) return 'unknown';
  return known;
}

function readNames(top: Node, text: string): KeptNames {
  const names: KeptNames = { switched: new Set(), assigned: new Map() };
  const cursor = top.cursor();
  do {
    const node = cursor.node;
    if (node.name === 'AssignStatement') {
      const parts = children(node);
      // `a = b = value`: every target before the last `=`.
      for (const target of parts.slice(0, -1)) {
        if (target.name === 'AssignOp') continue;
        const name = dottedName(target, text);
        if (!name) continue;
        names.assigned.set(name, (names.assigned.get(name) ?? 0) + 1);
        if (name.endsWith('.autocommit')) names.switched.add(name.slice(0, -'.autocommit'.length));
      }
    } else if (node.name === 'CallExpression') {
      const method = methodCall(node, text);
      const owner = method ? dottedName(method.object, text) : undefined;
      if (method && owner && autocommitSetterOf(method.method)) names.switched.add(owner);
    }
  } while (cursor.next());
  return names;
}
