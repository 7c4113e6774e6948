// Pools made by a function for its own one use: a migration script's
//
//   def run_migrations_online():
//       engine = create_engine(URL)
//       with engine.connect() as connection:     # the pool's one checkout
//           for schema in tenant_schemas(connection):
//               connection.execute(text(f'set search_path to "{schema}"'))
//               ...
//
// The engine's name never leaves the function (not returned, stored, passed,
// captured by a nested def, or declared global) and its connection is checked
// out once, outside any loop: no other job can ever be handed the connection a
// session-level write is left on. The Python side of the TS one-connection
// script client ('single-connection').
import { children, methodCall, type Node } from '../syntax.ts';
import { enclosingDef } from './tenant-pools.ts';

/** What a function may do with its pool without sharing it: check one connection out, or dispose of it. */
const CHECKOUT = new Set(['connect', 'begin', 'raw_connection', 'getconn']);
const HARMLESS = new Set(['dispose', 'close', 'closeall']);
const LOOPS = new Set(['ForStatement', 'WhileStatement']);

/** Every node under `node`, nested defs and classes included (a closure that names the pool shares it). */
function eachNode(node: Node, visit: (n: Node) => void): void {
  for (let c = node.firstChild; c; c = c.nextSibling) {
    visit(c);
    eachNode(c, visit);
  }
}

function insideLoop(node: Node, def: Node): boolean {
  for (let p = node.parent; p && p !== def; p = p.parent) if (LOOPS.has(p.name)) return true;
  return false;
}

/** Whether the pool `call` makes is one function's, checked out once: `engine = create_engine(...)` in a def, used only as above. */
export function usedOnceByItsFunction(call: Node, text: string): boolean {
  const def = enclosingDef(call);
  const statement = call.parent;
  if (!def || statement?.name !== 'AssignStatement') return false;
  const parts = children(statement);
  if (parts.length !== 3 || parts[0].name !== 'VariableName' || parts[2].from !== call.from) return false;
  const holder = text.slice(parts[0].from, parts[0].to);
  let checkouts = 0;
  let shared = false;
  eachNode(def, (n) => {
    if (shared) return;
    if (n.name === 'global' || n.name === 'nonlocal') {
      const names = n.parent ? children(n.parent).filter((c) => c.name === 'VariableName') : [];
      if (names.some((v) => text.slice(v.from, v.to) === holder)) shared = true;
      return;
    }
    if (n.name !== 'VariableName' || n.from === parts[0].from || text.slice(n.from, n.to) !== holder) return;
    // Only `holder.method(...)` keeps it the function's: any other use may hand it on.
    const used = methodCall(n.parent?.parent, text);
    if (!used || used.object.from !== n.from) {
      shared = true;
      return;
    }
    if (HARMLESS.has(used.method)) return;
    if (!CHECKOUT.has(used.method) || insideLoop(used.call.callee, def)) shared = true;
    else checkouts += 1;
  });
  return !shared && checkouts === 1;
}
