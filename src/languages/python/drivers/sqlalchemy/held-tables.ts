// A Core Table the code holds rather than names: a local alias (`t = jobs`),
// an attribute set once (`self._table = table`), a parameter annotated with
// SQLAlchemy's `Table`. One the holder leads to by name (`jobs =
// Table("jobs", ...)`) is that table; one handed in (`def __init__(self,
// table: "Table")`, a queue library given its user's table) has a name the
// code never shows, and is named after the expression that holds it, as a
// psycopg format field's table is (strings.ts): the same holder is the same
// table in every statement of the file, whatever it is called in the database.
import type { ModelRef } from '../../orm/writer.ts';
import type { WalkApi } from '../../flow/types.ts';
import { identifierFor } from '../../flow/strings.ts';
import { annotationType, parameters } from '../../flow/defs.ts';
import { unwrap, type Node } from '../../syntax.ts';

/** How many aliases and attributes are followed from the expression. */
const MAX_HOPS = 4;

export function heldCoreTable(walk: WalkApi, node: Node, named: (n: Node) => ModelRef | undefined): ModelRef | undefined {
  let current = unwrap(node);
  if (!current || (current.name !== 'VariableName' && current.name !== 'MemberExpression')) return undefined;
  // The attribute that holds the table (`self._table`), else the name it reaches last.
  let holder: Node | undefined;
  for (let hop = 0; current && hop < MAX_HOPS; hop++) {
    if (hop > 0) {
      const known = named(current);
      if (known) return known;
    }
    if (current.name === 'MemberExpression') holder = current;
    const next: Node | undefined = current.name === 'VariableName' ? walk.file.localValue(current) : current.name === 'MemberExpression' ? walk.file.memberValue(current) : undefined;
    const value: Node | undefined = next ? unwrap(next) : undefined;
    if (!value || (value.name !== 'VariableName' && value.name !== 'MemberExpression')) break;
    current = value;
  }
  if (current?.name !== 'VariableName' || !annotatedTable(current, walk)) return undefined;
  const by = walk.text.slice((holder ?? current).from, (holder ?? current).to);
  return { table: identifierFor(by), name: by, core: true };
}

/** The name is a parameter of its def annotated `Table` (or `"Table"`), SQLAlchemy's by the file's imports. */
function annotatedTable(name: Node, walk: WalkApi): boolean {
  let def: Node | null = name.parent;
  while (def && def.name !== 'FunctionDefinition') def = def.parent;
  if (!def) return false;
  const text = walk.text.slice(name.from, name.to);
  const param = parameters(def, walk.text).find((p) => p.name === text);
  const annotation = param?.annotation ? annotationType(unwrap(param.annotation) ?? param.annotation) : undefined;
  if (!annotation) return false;
  const written = walk.text.slice(annotation.from, annotation.to);
  const quoted = /^(['"])([\w.]+)\1$/.exec(written)?.[2];
  const qualified = quoted !== undefined ? walk.file.qualifyName(quoted) : walk.file.qualify(annotation);
  return /^sqlalchemy(\.[\w.]+)?\.Table$/.test(qualified ?? '');
}
