// What the file's readers ask of its tree again and again, read in one pass
// over it (instead of one pass per question): its calls, defs, imports and
// binding statements in document order, and each def's own statements (its
// nested defs, classes and lambdas aside); then, once per function, its
// nested defs by name and the names it binds once. Each answer is the one a
// fresh reading of the tree would give.
import type { SyntaxNodeRef, Tree } from '@lezer/common';
import { children, INDEXED_KINDS, indexedNodes, type Node } from '../syntax.ts';
import { bodyStatements, defName, parameters, unwrapDecorated } from './defs.ts';
import { BINDING_STATEMENTS } from './imports.ts';

/** The statements a def's own readers look for (ownStatements). */
const OWN_STATEMENTS: ReadonlySet<string> = new Set([...BINDING_STATEMENTS, 'ReturnStatement']);

/** The kinds the constructor reads are all among those parsePython's walk keeps (else it walks the tree itself). */
const PREWALK_COVERS = [...OWN_STATEMENTS, 'CallExpression', 'FunctionDefinition', 'ClassDefinition', 'LambdaExpression', 'ImportStatement', 'Body'].every((kind) => INDEXED_KINDS.has(kind));

/** One binding statement of a name in a def, and its value when it is a plain `name = value`. */
interface Rebinding {
  statement: Node;
  value?: Node;
}

/** A scope the pass is in: a def (its own statements are those of its Body) or a class or lambda. */
interface Scope {
  def?: { from: number; statements: Node[]; body?: { from: number; to: number } };
}

export class DefIndex {
  /** Every CallExpression of the file, in document order. */
  readonly calls: Node[] = [];
  /** Every FunctionDefinition of the file, in document order. */
  readonly defs: Node[] = [];
  /** Every ImportStatement, in document order. */
  readonly imports: Node[] = [];
  /** Every statement that binds a name (BINDING_STATEMENTS), in document order. */
  readonly binders: Node[] = [];
  private readonly own = new Map<number, Node[]>();
  private readonly nestedDefsOf = new Map<number, Map<string, Node[]>>();
  private readonly localsCache = new Map<number, Map<string, Node>>();
  /** Per def, the names it binds more than once: every binding statement in order, with its plain value when it has one. */
  private readonly rebindsCache = new Map<number, Map<string, Rebinding[]>>();

  constructor(
    tree: Tree,
    private readonly text: string,
  ) {
    const scopes: Scope[] = [];
    const enter = (ref: SyntaxNodeRef) => {
      const kind = ref.name;
      if (kind === 'CallExpression') this.calls.push(ref.node);
      else if (kind === 'FunctionDefinition') {
        this.defs.push(ref.node);
        const statements: Node[] = [];
        this.own.set(ref.from, statements);
        scopes.push({ def: { from: ref.from, statements } });
      } else if (kind === 'ClassDefinition' || kind === 'LambdaExpression') scopes.push({});
      else if (kind === 'ImportStatement') this.imports.push(ref.node);
      else if (kind === 'Body') {
        // A def's own Body is its first one (def.getChild('Body')).
        const def = scopes[scopes.length - 1]?.def;
        if (def && !def.body && ref.node.parent?.from === def.from) def.body = { from: ref.from, to: ref.to };
      }
      if (!OWN_STATEMENTS.has(kind)) return;
      const node = ref.node;
      if (kind !== 'ReturnStatement') this.binders.push(node);
      const def = scopes[scopes.length - 1]?.def;
      if (def?.body && ref.from >= def.body.from && ref.to <= def.body.to) def.statements.push(node);
    };
    const leave = (kind: string) => {
      if (kind === 'FunctionDefinition' || kind === 'ClassDefinition' || kind === 'LambdaExpression') scopes.pop();
    };
    // The nodes parsePython's own walk kept (the same walk, only the kinds read here), else a walk of the tree.
    const walked = PREWALK_COVERS ? indexedNodes(tree) : undefined;
    if (walked) {
      for (const { node, leave: left } of walked) {
        if (left) leave(node.name);
        else enter(node);
      }
    } else tree.iterate({ enter, leave: (ref) => leave(ref.name) });
  }

  /**
   * The statements of a def that bind a name or return (BINDING_STATEMENTS,
   * ReturnStatement), its nested defs, classes and lambdas aside, in document
   * order: what iterateOwn visits of those kinds.
   */
  ownStatements(def: Node): readonly Node[] {
    const known = this.own.get(def.from);
    if (known) return known;
    // Not a def of this tree: walk it.
    const statements: Node[] = [];
    this.iterateOwn(def, (node) => {
      if (OWN_STATEMENTS.has(node.name)) statements.push(node);
    });
    return statements;
  }

  /** Visits the nodes of a def, not those of the defs and classes inside it. */
  iterateOwn(def: Node, visit: (node: Node) => void): void {
    const body = def.getChild('Body');
    if (!body) return;
    // Sibling links, not children(): no array per node (comments are skipped as children() skips them).
    const walk = (node: Node) => {
      for (let child = node.firstChild; child; child = child.nextSibling) {
        const kind = child.name;
        if (kind === 'Comment' || kind === 'FunctionDefinition' || kind === 'ClassDefinition' || kind === 'LambdaExpression') continue;
        visit(child);
        walk(child);
      }
    };
    walk(body);
  }

  private names?: Set<string>;

  /** The names of all the file's defs, at any depth. */
  defNames(): ReadonlySet<string> {
    return (this.names ??= new Set(this.defs.map((def) => defName(def, this.text))));
  }

  /** The defs among a function's own statements, by name, in their order. */
  nestedDefs(fn: Node): Map<string, Node[]> {
    let byName = this.nestedDefsOf.get(fn.from);
    if (byName) return byName;
    byName = new Map();
    for (const statement of bodyStatements(fn)) {
      const def = unwrapDecorated(statement);
      if (def?.name !== 'FunctionDefinition') continue;
      const name = defName(def, this.text);
      const list = byName.get(name);
      if (list) list.push(def);
      else byName.set(name, [def]);
    }
    this.nestedDefsOf.set(fn.from, byName);
    return byName;
  }

  /** Names a def binds exactly once with a plain assignment, and the value. */
  localsOf(def: Node | undefined): Map<string, Node> {
    if (!def) return new Map();
    const cached = this.localsCache.get(def.from);
    if (cached) return cached;
    const bindings = new Map<string, Rebinding[]>();
    const note = (name: string, statement: Node, value?: Node) => {
      const list = bindings.get(name);
      if (list) list.push({ statement, value });
      else bindings.set(name, [{ statement, value }]);
    };
    const params = new Set(parameters(def, this.text).map((p) => p.name));
    for (const node of this.ownStatements(def)) {
      if (node.name === 'AssignStatement' || node.name === 'UpdateStatement') {
        const parts = children(node);
        const target = parts[0];
        if (target?.name !== 'VariableName') continue;
        const plain = node.name === 'AssignStatement' && parts[1]?.name === 'AssignOp' && parts.length === 3;
        note(this.text.slice(target.from, target.to), node, plain ? parts[2] : undefined);
      } else if (node.name === 'ForStatement' || node.name === 'WithStatement') {
        for (const c of children(node)) if (c.name === 'VariableName') note(this.text.slice(c.from, c.to), node);
      }
    }
    const values = new Map<string, Node>();
    const rebinds = new Map<string, Rebinding[]>();
    for (const [name, list] of bindings) {
      if (params.has(name)) continue;
      if (list.length === 1 && list[0].value) values.set(name, list[0].value);
      else if (list.length > 1) rebinds.set(name, list);
    }
    this.localsCache.set(def.from, values);
    this.rebindsCache.set(def.from, rebinds);
    return values;
  }

  /**
   * The value of a name the def binds more than once, at a use: the last
   * plain assignment before the use, when it is in a block that holds the use
   * (so it ran on every path there: `stmt = a` in the if branch that uses it,
   * `stmt = b` in the code after), and no later binding can reach the use
   * around a loop. Else undefined.
   */
  private reachingValue(def: Node, name: string, use: Node): Node | undefined {
    const list = this.rebindsCache.get(def.from)?.get(name);
    if (!list) return undefined;
    let chosen: Rebinding | undefined;
    for (const b of list) {
      if (b.statement.to > use.from) continue;
      // `qs = qs.filter(...)` in a branch the use is not in: a refinement on some
      // paths only, so the name stands for what it refines (a weaker filter, never a stronger one).
      const branchOnly = b.statement.parent && (use.from < b.statement.parent.from || use.to > b.statement.parent.to);
      if (chosen && branchOnly && this.refines(b, name)) continue;
      chosen = b;
    }
    const block = chosen?.statement.parent;
    if (!chosen?.value || !block || use.from < block.from || use.to > block.to) return undefined;
    for (const b of list) {
      if (b.statement.from < use.from) continue;
      for (let p: Node | null = use.parent; p && p.from >= def.from && p !== def; p = p.parent) {
        if ((p.name === 'ForStatement' || p.name === 'WhileStatement') && b.statement.from < p.to) return undefined;
      }
    }
    return chosen.value;
  }

  /** `name = name.method(...)...`: a binding whose value is a call chain on the name itself. */
  private refines(binding: Rebinding, name: string): boolean {
    let at: Node | null | undefined = binding.value;
    while (at?.name === 'CallExpression' || at?.name === 'MemberExpression') {
      if (at.name === 'MemberExpression' && at.lastChild?.name !== 'PropertyName') return false;
      at = at.firstChild;
    }
    return at?.name === 'VariableName' && at !== binding.value && this.text.slice(at.from, at.to) === name;
  }

  /** The value of a name assigned once in the def that contains `node`. */
  localValue(node: Node): Node | undefined {
    let def: Node | null = node.parent;
    while (def && def.name !== 'FunctionDefinition') def = def.parent;
    if (!def) return undefined;
    const name = this.text.slice(node.from, node.to);
    const value = this.localsOf(def).get(name);
    // Only a value assigned before the use.
    if (value) return value.to <= node.from ? value : undefined;
    return this.reachingValue(def, name, node);
  }
}
