// What the names of a file stand for through its imports, and the module-level
// constants it defines once.
import type { Tree } from '@lezer/common';
import { children, dottedName, type Node } from '../syntax.ts';

export interface Imports {
  /** Local name -> qualified name (`pool` -> `psycopg_pool`, `CP` -> `psycopg_pool.ConnectionPool`). */
  names: Map<string, string>;
  /** Top-level modules the file imports (psycopg, psycopg_pool, psycopg2, ...). */
  modules: Set<string>;
  /** Names imported from modules of the project: `from .db import pool` / `from app.db import pool as p`. */
  fromImports: Map<string, { module: string; level: number; name: string; span: { start: number; end: number } }>;
}

/** The file's imports; `statements`: its ImportStatement nodes in document order, when the caller has them already. */
export function readImports(tree: Tree, text: string, statements?: readonly Node[]): Imports {
  const imports: Imports = { names: new Map(), modules: new Set(), fromImports: new Map() };
  if (statements) {
    for (const statement of statements) readImport(statement, text, imports);
    return imports;
  }
  tree.iterate({
    enter(ref) {
      if (ref.name !== 'ImportStatement') return;
      readImport(ref.node, text, imports);
      return false;
    },
  });
  return imports;
}

/** The statements that bind names: what moduleConstants counts. */
export const BINDING_STATEMENTS: ReadonlySet<string> = new Set(['AssignStatement', 'UpdateStatement', 'ScopeStatement', 'ForStatement', 'WithStatement']);

function readImport(node: Node, text: string, imports: Imports): void {
  const parts = children(node).filter((c) => c.name !== '(' && c.name !== ')');
  const word = (n: Node) => text.slice(n.from, n.to);
  if (parts[0]?.name === 'import') {
    // import a.b as c, d
    for (const group of splitCommas(parts.slice(1))) {
      const asAt = group.findIndex((n) => n.name === 'as');
      const path = (asAt < 0 ? group : group.slice(0, asAt)).filter((n) => n.name === 'VariableName').map(word);
      if (path.length === 0) continue;
      imports.modules.add(path[0]);
      if (asAt >= 0 && group[asAt + 1]) imports.names.set(word(group[asAt + 1]), path.join('.'));
      else imports.names.set(path[0], path[0]);
    }
    return;
  }
  if (parts[0]?.name !== 'from') return;
  const importAt = parts.findIndex((n) => n.name === 'import');
  if (importAt < 0) return;
  const source = parts.slice(1, importAt);
  // Leading dots: `.` and `...` (Lezer reads three dots as an Ellipsis).
  let level = 0;
  for (const n of source) {
    if (n.name === '.') level++;
    else if (n.name === 'Ellipsis') level += 3;
    else break;
  }
  const module = source.filter((n) => n.name === 'VariableName').map(word).join('.');
  if (!module && level === 0) return;
  if (level === 0) imports.modules.add(module.split('.')[0]);
  for (const group of splitCommas(parts.slice(importAt + 1))) {
    const names = group.filter((n) => n.name === 'VariableName');
    if (names.length === 0) continue;
    const asAt = group.findIndex((n) => n.name === 'as');
    const imported = word(names[0]);
    const local = asAt >= 0 && group[asAt + 1] ? word(group[asAt + 1]) : imported;
    if (level === 0) imports.names.set(local, `${module}.${imported}`);
    imports.fromImports.set(local, { module, level, name: imported, span: { start: node.from, end: node.to } });
  }
}

function splitCommas(nodes: Node[]): Node[][] {
  const groups: Node[][] = [[]];
  for (const n of nodes) {
    if (n.name === ',') groups.push([]);
    else groups[groups.length - 1].push(n);
  }
  return groups.filter((g) => g.length > 0);
}

/** The qualified name of a name or attribute chain through the imports, when its first part is imported. */
export function qualifiedName(node: Node | null | undefined, text: string, imports: Imports): string | undefined {
  // The name the chain starts with first: most callees start with no imported name.
  let start = node;
  while (start?.name === 'MemberExpression') start = start.firstChild;
  if (start?.name === 'VariableName' && !imports.names.has(text.slice(start.from, start.to))) return undefined;
  const dotted = dottedName(node, text);
  if (!dotted) return undefined;
  const [first, ...rest] = dotted.split('.');
  const base = imports.names.get(first);
  if (!base) return undefined;
  return [base, ...rest].join('.');
}

/**
 * Module-level names bound exactly once, by a plain `NAME = value` at the top
 * level, never rebound anywhere (assignment, augmented assignment, `global`,
 * for target, with ... as, import): constants a reader can trust.
 */
export function moduleConstants(tree: Tree, text: string, binders?: readonly Node[]): Map<string, Node> {
  const assigned = new Map<string, number>();
  const values = new Map<string, Node>();
  const bump = (name: string) => assigned.set(name, (assigned.get(name) ?? 0) + 1);
  for (const statement of children(tree.topNode)) {
    if (statement.name !== 'AssignStatement') continue;
    const parts = children(statement);
    // NAME = value  (also NAME: type = value)
    const [target, next] = parts;
    if (target?.name !== 'VariableName') continue;
    const op = next?.name === 'TypeDef' ? parts[2] : next;
    const value = next?.name === 'TypeDef' ? parts[3] : parts[2];
    if (op?.name !== 'AssignOp' || !value || parts.filter((p) => p.name === 'AssignOp').length !== 1) continue;
    values.set(text.slice(target.from, target.to), value);
  }
  // Count every binding of each name anywhere in the file (the BINDING_STATEMENTS in document order).
  const count = (node: Node) => {
    if (node.name === 'AssignStatement' || node.name === 'UpdateStatement') {
      const parts = children(node);
      const op = node.name === 'AssignStatement' ? 'AssignOp' : 'UpdateOp';
      let lastOp = parts.length - 1;
      while (lastOp >= 0 && parts[lastOp].name !== op) lastOp--;
      for (let i = 0; i < lastOp; i++) bindNames(parts[i], text, bump);
    } else if (node.name === 'ScopeStatement') {
      // `global NAME` in a function: the name can be rebound there, so it is no constant.
      for (const part of children(node)) if (part.name === 'VariableName') assigned.set(text.slice(part.from, part.to), 2);
    } else if (node.name === 'ForStatement' || node.name === 'WithStatement') {
      const parts = children(node);
      for (let i = 0; i < parts.length; i++) {
        if ((node.name === 'WithStatement' && parts[i].name === 'as') || (node.name === 'ForStatement' && parts[i].name === 'for')) {
          bindNames(parts[i + 1], text, bump);
        }
      }
    }
  };
  if (binders) binders.forEach(count);
  else {
    tree.iterate({
      enter(ref) {
        if (BINDING_STATEMENTS.has(ref.name)) count(ref.node);
      },
    });
  }
  for (const name of [...values.keys()]) if ((assigned.get(name) ?? 0) !== 1) values.delete(name);
  return values;
}

/** Each name a target binds (a name, or the names of a tuple, list or parenthesized target), in order. */
function bindNames(node: Node | undefined, text: string, bind: (name: string) => void): void {
  if (!node) return;
  if (node.name === 'VariableName') bind(text.slice(node.from, node.to));
  else if (node.name === 'TupleExpression' || node.name === 'ArrayExpression' || node.name === 'ParenthesizedExpression') {
    for (let c = node.firstChild; c; c = c.nextSibling) if (c.name !== 'Comment') bindNames(c, text, bind);
  }
}
