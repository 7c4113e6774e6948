// The constants of a TS module, indexed once per program: what a name of the
// module stands for where it is used (the nearest scope's const first), and
// which of them need nothing of their module to be read elsewhere.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { unfrozen } from '../strings.ts';
import { children, isFunction, unwrap, type Node } from '../syntax.ts';

export interface ConstEntry {
  init: Node;
  scope: [number, number];
  /** `const [a, b] = init`: the name is the init's element at this index, not the init itself. */
  element?: number;
}

/** A literal, or a (frozen) object of literals: a constant whose meaning needs nothing of its own module. */
export function literalsOnly(init: Node): boolean {
  const plain = (n: Node | undefined) => n?.type === 'Literal' || (n?.type === 'TemplateLiteral' && n.expressions.length === 0);
  const n = unfrozen(init);
  if (plain(n)) return true;
  // A decorated class (a TypeORM entity): what its decorators declare needs nothing of its module at run time.
  if (n?.type === 'ClassDeclaration') return (n.decorators ?? []).length > 0;
  if (n?.type === 'TSEnumDeclaration') return n.body.members.every((m) => !m.initializer || plain(unwrap(m.initializer as Node)));
  return n?.type === 'ObjectExpression' && n.properties.every((p) => p.type === 'Property' && !p.computed && plain(unwrap(p.value as Node)));
}

/** The constants of each program, indexed once: a module is read at several depths, and by the scan. */
const constantsByProgram = new WeakMap<TSESTree.Program, ReadonlyMap<string, ConstEntry[]>>();

export function constantsOf(program: TSESTree.Program): ReadonlyMap<string, ConstEntry[]> {
  let constants = constantsByProgram.get(program);
  if (!constants) {
    const out = new Map<string, ConstEntry[]>();
    indexConstants(program, out);
    constants = out;
    constantsByProgram.set(program, constants);
  }
  return constants;
}

function indexConstants(program: TSESTree.Program, out: Map<string, ConstEntry[]>): void {
  const visit = (node: Node, scope: [number, number]) => {
    let inner = scope;
    if (isFunction(node)) inner = node.range;
    // A function declaration is a constant too: SQL built by a helper of the file (`function claimSql(t) { return `...` }`).
    if (node.type === 'FunctionDeclaration' && node.id) {
      const list = out.get(node.id.name) ?? [];
      list.push({ init: node, scope });
      out.set(node.id.name, list);
    }
    // A decorated class is a constant too: what its decorators declare (a TypeORM entity's table and columns).
    if (node.type === 'ClassDeclaration' && node.id && (node.decorators ?? []).length > 0) {
      const list = out.get(node.id.name) ?? [];
      list.push({ init: node, scope });
      out.set(node.id.name, list);
    }
    // An enum is a constant whose members are its properties (`JobState.Running`).
    if (node.type === 'TSEnumDeclaration') {
      const list = out.get(node.id.name) ?? [];
      list.push({ init: node, scope });
      out.set(node.id.name, list);
    }
    if (node.type === 'VariableDeclaration' && node.kind === 'const') {
      for (const d of node.declarations) {
        if (d.id.type === 'Identifier' && d.init) {
          const list = out.get(d.id.name) ?? [];
          list.push({ init: d.init, scope });
          out.set(d.id.name, list);
        }
        // `const [first, second] = rows`: each name an element (it shadows an outer const of its name too).
        if (d.id.type === 'ArrayPattern' && d.init) {
          for (const [element, e] of d.id.elements.entries()) {
            if (e?.type !== 'Identifier') continue;
            const list = out.get(e.name) ?? [];
            list.push({ init: d.init, scope, element });
            out.set(e.name, list);
          }
        }
      }
    }
    for (const child of children(node)) visit(child, inner);
  };
  visit(program, program.range);
}
