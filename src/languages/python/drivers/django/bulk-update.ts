// Django's `Model.objects.bulk_update(objs, fields)` as the UPDATE it sends:
// `SET field = CASE WHEN id = <pk> THEN <that object's value> ... END` for each
// field named, `WHERE id IN (<the objects' pks>)`. The objects' values are
// whatever the code assigned to those attributes before the call.
import { children, keyword, positional, unwrap, type Arg, type Node } from '../../syntax.ts';
import { listOfStrings, type OrmContext, type SqlWriter } from '../../orm/writer.ts';

/** The field names of bulk_update(objs, fields) / bulk_update(objs, fields=[...]); undefined when not written out. */
export function bulkUpdateFields(args: Arg[], ctx: OrmContext): string[] | undefined {
  let fields = unwrap(positional(args, 1) ?? keyword(args, 'fields'));
  if (fields?.name === 'VariableName') fields = unwrap(ctx.valueOf(fields));
  const names = fields ? listOfStrings(fields, ctx) : undefined;
  return names && names.length > 0 ? names.map((n) => (n === 'pk' ? 'id' : n)) : undefined;
}

const LITERAL = new Set(['String', 'Number', 'None', 'Boolean', '@specialize']);

/**
 * The value each field gets. The objects' own values are per row (Django writes a CASE over their pks): the
 * literals the file assigns to that attribute (`job.status = "done"`, `self.locked_by = None` in the model's
 * class) are the values a row can get, a CASE of them; any other value, or none found, an unknown parameter.
 */
export function writeBulkSets(fields: string[], modelName: string, call: Node, w: SqlWriter): void {
  const assigned = attributeValues(call, w.ctx.text, modelName);
  fields.forEach((field, k) => {
    w.raw(`${k > 0 ? ', ' : ''}${field} = `, call);
    const values = assigned.get(field) ?? [];
    const literals = values.filter((v) => isLiteral(v, w.ctx));
    if (values.length === 0 || literals.length < values.length) return w.placeholder(undefined, call);
    const distinct = [...new Map(literals.map((v) => [w.ctx.text.slice(v.from, v.to), v])).values()];
    if (distinct.length === 1) return w.value(distinct[0], distinct[0]);
    w.raw('CASE', call);
    for (const value of distinct) {
      w.raw(' WHEN id = ', call);
      w.placeholder(undefined, call);
      w.raw(' THEN ', value);
      w.value(value, value);
    }
    w.raw(' END', call);
  });
}

function isLiteral(node: Node, ctx: OrmContext): boolean {
  if (LITERAL.has(node.name)) return true;
  const text = ctx.text.slice(node.from, node.to);
  if (text === 'None' || text === 'True' || text === 'False') return true;
  return node.name === 'MemberExpression' && ctx.constant?.(node) !== undefined;
}

/**
 * `<name>.<attribute> = <value>` anywhere in the file, where the name is a plain variable (an instance the code
 * holds), or `self` inside the model's own class: the values assigned to each attribute.
 */
function attributeValues(at: Node, text: string, modelName: string): Map<string, Node[]> {
  let top = at;
  while (top.parent) top = top.parent;
  const out = new Map<string, Node[]>();
  top.cursor().iterate((ref) => {
    if (ref.name !== 'AssignStatement') return;
    const parts = children(ref.node);
    const eq = parts.findIndex((p) => p.name === 'AssignOp' || text.slice(p.from, p.to) === '=');
    const target = parts[0];
    const value = unwrap(parts[eq + 1]);
    if (eq !== 1 || parts.length !== 3 || target?.name !== 'MemberExpression' || !value) return;
    const object = target.firstChild;
    const property = target.lastChild;
    if (object?.name !== 'VariableName' || property?.name !== 'PropertyName') return;
    const owner = text.slice(object.from, object.to);
    if (owner === 'cls' || (owner === 'self' && enclosingClass(ref.node, text) !== modelName)) return;
    const name = text.slice(property.from, property.to);
    out.set(name, [...(out.get(name) ?? []), value]);
  });
  return out;
}

function enclosingClass(node: Node, text: string): string | undefined {
  for (let at = node.parent; at; at = at.parent) {
    if (at.name !== 'ClassDefinition') continue;
    const id = at.getChild('VariableName');
    return id ? text.slice(id.from, id.to) : undefined;
  }
  return undefined;
}
