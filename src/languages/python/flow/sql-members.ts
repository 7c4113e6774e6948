// Where SQL text is held other than in a local or a module constant: class
// attributes (`CLAIM = "..."` in the class body, `self.claim_sql = "..."` set
// once in a method), query objects the code keeps (`self._q = Queries(...)` in
// a helper, `Q = Queries()` at module level, then `self._q.claim_sql`), and
// the SQL a function or method of the file returns (`self._q.build_claim()`,
// `build_claim(table)`): the expression each stands for, read by strings.ts
// with the file's context. Classes and defs of this file only; anything else
// stays unknown.
import { children, dottedName, unwrap, type Node } from '../syntax.ts';
import { bodyStatements, unwrapDecorated } from './defs.ts';

export interface MemberFile {
  readonly text: string;
  readonly tree: { topNode: Node };
  readonly classMethods: Map<string, Map<string, Node>>;
  readonly moduleDefs: Map<string, Node>;
  readonly constants: Map<string, Node>;
  enclosingClass(at: Node): string | undefined;
  localValue(node: Node): Node | undefined;
  /** A def's own binding and return statements (DefIndex.ownStatements). */
  ownStatements(def: Node): readonly Node[];
}

export class SqlMembers {
  private attrsByClass?: Map<string, Map<string, Node>>;

  /** Return values read for a call (their offsets): the call's site holds their SQL. */
  readonly consumed = new Set<number>();

  constructor(private readonly file: MemberFile) {}

  /** The expression `x.name` stands for: a class attribute, an attribute set once, a property's one return. */
  member(node: Node): Node | undefined {
    const parts = children(node);
    const object = parts[0];
    const property = parts[parts.length - 1];
    if (!object || property?.name !== 'PropertyName') return undefined;
    const className = this.classOf(object, node);
    if (!className) return undefined;
    const name = this.file.text.slice(property.from, property.to);
    const value = this.attrs(className).get(name);
    if (value && !this.classOfValue(value)) return value;
    const method = this.file.classMethods.get(className)?.get(name);
    const returned = method && isProperty(method, this.file.text) ? oneReturn(method, this.file) : undefined;
    if (returned) this.consumed.add(returned.from);
    return returned;
  }

  /** The one expression a called def of the file returns (`self.build_claim()`, `queries.claim()`, `build()`). */
  returned(call: Node): Node | undefined {
    const callee = call.firstChild;
    if (!callee) return undefined;
    let def: Node | undefined;
    if (callee.name === 'VariableName') def = this.file.moduleDefs.get(this.file.text.slice(callee.from, callee.to));
    else if (callee.name === 'MemberExpression') {
      const parts = children(callee);
      const property = parts[parts.length - 1];
      const className = parts[0] ? this.classOf(parts[0], call) : undefined;
      if (className && property?.name === 'PropertyName') def = this.file.classMethods.get(className)?.get(this.file.text.slice(property.from, property.to));
    }
    const value = def ? oneReturn(def, this.file) : undefined;
    if (value) this.consumed.add(value.from);
    return value;
  }

  /** The method of a class of this file a member call names: `self.notifier.send(...)` with `self.notifier = Notifier()`. */
  methodOf(callee: Node, at: Node): Node | undefined {
    if (callee.name !== 'MemberExpression') return undefined;
    const parts = children(callee);
    const property = parts[parts.length - 1];
    // A name no class of the file has as a method (`cur.execute`, `log.info`): no class to look for.
    if (property?.name !== 'PropertyName' || !this.methodNames().has(this.file.text.slice(property.from, property.to))) return undefined;
    const className = parts[0] ? this.classOf(parts[0], at) : undefined;
    return className && property?.name === 'PropertyName' ? this.file.classMethods.get(className)?.get(this.file.text.slice(property.from, property.to)) : undefined;
  }

  private methods?: { classes: number; names: Set<string> };

  /** The names of the methods of the file's classes (read again if classes were added since). */
  private methodNames(): ReadonlySet<string> {
    const classes = this.file.classMethods.size;
    if (this.methods?.classes !== classes) this.methods = { classes, names: new Set([...this.file.classMethods.values()].flatMap((methods) => [...methods.keys()])) };
    return this.methods.names;
  }

  /** A name of the class body seen from a method's default value (`def claim(self, minutes=LEASE_MINUTES)`). */
  classConstant(name: string, at: Node): Node | undefined {
    const className = this.file.enclosingClass(at);
    return className ? this.attrs(className).get(name) : undefined;
  }

  /** The class of this file whose instance (or the class itself) an expression is. */
  private classOf(receiver: Node, at: Node, depth = 0): string | undefined {
    const expr = unwrap(receiver);
    if (!expr || depth > 3) return undefined;
    const text = this.file.text.slice(expr.from, expr.to);
    if (expr.name === 'VariableName') {
      if (text === 'self' || text === 'cls') return this.file.enclosingClass(at);
      if (this.file.classMethods.has(text)) return text;
      const value = this.file.localValue(expr) ?? this.file.constants.get(text);
      return value ? this.classOfValue(value) : undefined;
    }
    if (expr.name === 'MemberExpression') {
      const parts = children(expr);
      const property = parts[parts.length - 1];
      const owner = parts[0] ? this.classOf(parts[0], at, depth + 1) : undefined;
      const value = owner && property?.name === 'PropertyName' ? this.attrs(owner).get(this.file.text.slice(property.from, property.to)) : undefined;
      return value ? this.classOfValue(value) : undefined;
    }
    return undefined;
  }

  /** `Queries(...)` of a class of this file: that class. */
  private classOfValue(value: Node): string | undefined {
    const expr = unwrap(value);
    if (expr?.name !== 'CallExpression' || !expr.firstChild) return undefined;
    const name = dottedName(expr.firstChild, this.file.text);
    return name && this.file.classMethods.has(name) ? name : undefined;
  }

  /** A class's attributes: `NAME = value` in its body, `self.NAME = value` assigned once in its methods. */
  private attrs(className: string): Map<string, Node> {
    this.attrsByClass ??= this.readAttrs();
    return this.attrsByClass.get(className) ?? new Map();
  }

  private readAttrs(): Map<string, Map<string, Node>> {
    const { text } = this.file;
    const out = new Map<string, Map<string, Node>>();
    for (const statement of children(this.file.tree.topNode)) {
      const def = unwrapDecorated(statement);
      const id = def?.name === 'ClassDefinition' ? def.getChild('VariableName') : null;
      if (!def || !id) continue;
      const className = text.slice(id.from, id.to);
      const values = new Map<string, Node>();
      const counts = new Map<string, number>();
      const note = (name: string, value: Node | undefined) => {
        counts.set(name, (counts.get(name) ?? 0) + 1);
        if (value) values.set(name, value);
      };
      for (const member of bodyStatements(def)) {
        const parts = member.name === 'AssignStatement' ? children(member) : [];
        if (parts.length === 3 && parts[0].name === 'VariableName' && parts[1].name === 'AssignOp') note(text.slice(parts[0].from, parts[0].to), parts[2]);
      }
      for (const method of this.file.classMethods.get(className)?.values() ?? []) {
        for (const node of this.file.ownStatements(method)) {
          if (node.name !== 'AssignStatement' && node.name !== 'UpdateStatement') continue;
          const parts = children(node);
          const target = parts[0];
          const name = target?.name === 'MemberExpression' ? dottedName(target, text) : undefined;
          if (!name?.startsWith('self.') || name.split('.').length !== 2) continue;
          note(name.slice(5), node.name === 'AssignStatement' && parts.length === 3 ? parts[2] : undefined);
        }
      }
      for (const name of [...values.keys()]) if (counts.get(name) !== 1) values.delete(name);
      out.set(className, values);
    }
    return out;
  }
}

function isProperty(def: Node, text: string): boolean {
  const decorated = def.parent?.name === 'DecoratedStatement' ? def.parent : undefined;
  return !!decorated && children(decorated).some((c) => c.name === 'Decorator' && /^@\s*(functools\.)?(cached_)?property\b/.test(text.slice(c.from, c.to)));
}

/** The value of a def's one return statement (not counting nested defs). */
function oneReturn(def: Node, file: MemberFile): Node | undefined {
  const returns = file.ownStatements(def).filter((node) => node.name === 'ReturnStatement');
  if (returns.length !== 1) return undefined;
  return children(returns[0]).find((c) => c.name !== 'return');
}
