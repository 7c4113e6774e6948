// Django's `Model.objects.bulk_update(objs, fields)` as the UPDATE it sends:
// `SET field = CASE WHEN id = <pk> THEN <that object's value> ... END` for each
// field named, `WHERE id IN (<the objects' pks>)`. The objects' values are
// whatever the code assigned to those attributes before the call.
import { children, keyword, positional, unwrap, type Arg, type Node } from '../../syntax.ts';
import { listOfStrings, type ModelRef, type OrmContext, type SqlWriter } from '../../orm/writer.ts';

/** The field names of bulk_update(objs, fields) / bulk_update(objs, fields=[...]); undefined when not written out. */
export function bulkUpdateFields(args: Arg[], ctx: OrmContext): string[] | undefined {
  let fields = unwrap(positional(args, 1) ?? keyword(args, 'fields'));
  if (fields?.name === 'VariableName') fields = unwrap(ctx.valueOf(fields));
  const names = fields ? listOfStrings(fields, ctx) : undefined;
  return names && names.length > 0 ? names.map((n) => (n === 'pk' ? 'id' : n)) : undefined;
}

/** A value a row can get: the node and the text it is in (the calling file's, or the model's module's). */
interface Assigned {
  node: Node;
  text: string;
}

/**
 * The value each field gets. The objects' own values are per row (Django writes a CASE over their pks): the
 * literals assigned to that attribute (`job.status = "done"` in this file, `self.locked_by = None` in the model's
 * own class, here or in its module) are the values a row can get, a CASE of them; any other value, or none
 * found, an unknown parameter.
 */
export function writeBulkSets(fields: string[], model: ModelRef, call: Node, w: SqlWriter): void {
  const text = w.ctx.text;
  const assigned = attributeValues(rootOf(call), text, model.name, true);
  const there = model.definedIn;
  if (there && there.source.text !== text) {
    for (const [field, values] of attributeValues(there.def, there.source.text, model.name, false)) assigned.set(field, [...(assigned.get(field) ?? []), ...values]);
  }
  fields.forEach((field, k) => {
    w.raw(`${k > 0 ? ', ' : ''}${field} = `, call);
    const values = assigned.get(field) ?? [];
    const literals = values.map((v) => ({ ...v, sql: sqlLiteral(v, w.ctx) })).filter((v) => v.sql !== undefined);
    if (values.length === 0 || literals.length < values.length) return w.placeholder(undefined, call);
    const distinct = [...new Map(literals.map((v) => [v.sql, v])).values()];
    const write = (v: (typeof distinct)[number]) => (v.text === text ? w.value(v.node, v.node) : w.raw(v.sql!, call));
    if (distinct.length === 1) return write(distinct[0]);
    w.raw('CASE', call);
    for (const value of distinct) {
      w.raw(' WHEN id = ', call);
      w.placeholder(undefined, call);
      w.raw(' THEN ', call);
      write(value);
    }
    w.raw(' END', call);
  });
}

/** The SQL of a literal value (a string, a number, None, True, False, or a class constant of the calling file); undefined for anything else. */
function sqlLiteral(v: Assigned, ctx: OrmContext): string | undefined {
  const source = v.text.slice(v.node.from, v.node.to);
  if (source === 'None') return 'NULL';
  if (source === 'True' || source === 'False') return source.toLowerCase();
  if (v.node.name === 'Number' && /^\d+(\.\d+)?$/.test(source)) return source;
  const string = v.node.name === 'String' ? /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(source) : null;
  if (string) return `'${string[2].replace(/'/g, "''")}'`;
  if (v.text === ctx.text && v.node.name === 'MemberExpression') {
    const constant = ctx.constant?.(v.node);
    return constant !== undefined ? source : undefined;
  }
  return undefined;
}

function rootOf(node: Node): Node {
  let top = node;
  while (top.parent) top = top.parent;
  return top;
}

/**
 * `self.<attribute> = <value>` inside the model's own class, and where `names` (the calling file), `<name>.<attribute>
 * = <value>` with a plain variable (an instance the code holds): the values assigned to each attribute under `scope`.
 */
function attributeValues(scope: Node, text: string, modelName: string, names: boolean): Map<string, Assigned[]> {
  const out = new Map<string, Assigned[]>();
  scope.cursor().iterate((ref) => {
    if (ref.name !== 'AssignStatement') return;
    const parts = children(ref.node);
    const target = parts[0];
    const value = unwrap(parts[2]);
    if (parts.length !== 3 || parts[1]?.name !== 'AssignOp' || target?.name !== 'MemberExpression' || !value) return;
    const object = target.firstChild;
    const property = target.lastChild;
    if (object?.name !== 'VariableName' || property?.name !== 'PropertyName') return;
    const owner = text.slice(object.from, object.to);
    if (owner === 'cls' || (owner === 'self' ? enclosingClass(ref.node, text) !== modelName : !names)) return;
    const name = text.slice(property.from, property.to);
    out.set(name, [...(out.get(name) ?? []), { node: value, text }]);
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
