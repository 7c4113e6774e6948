// The name a class attribute holds, for a call made through it: a queue class
// configured with its model (`job_model = Job` in the class or a base class of
// the file) whose methods call `self.job_model.take()`. The name is what the
// attribute is bound to in the class body, written once as a plain name.
import { argsOf, children, type Node } from '../syntax.ts';
import { bodyStatements, unwrapDecorated } from './defs.ts';

/** How many base classes of the file are followed up from the class. */
const MAX_BASES = 3;

/** The plain name `attribute` is bound to in the class's body, or in one of its base classes defined in the file. */
export function classAttributeName(top: Node, text: string, className: string, attribute: string, depth = 0): string | undefined {
  const cls = topClass(top, text, className);
  if (!cls) return undefined;
  const values: Node[] = [];
  for (const statement of bodyStatements(cls)) {
    if (statement.name !== 'AssignStatement') continue;
    const parts = children(statement);
    if (parts[0]?.name === 'VariableName' && text.slice(parts[0].from, parts[0].to) === attribute) {
      if (parts.length !== 3 || parts[1].name !== 'AssignOp') return undefined;
      values.push(parts[2]);
    }
  }
  if (values.length === 1) return values[0].name === 'VariableName' ? text.slice(values[0].from, values[0].to) : undefined;
  if (values.length > 1 || depth >= MAX_BASES) return undefined;
  for (const base of argsOf(cls.getChild('ArgList'), text)) {
    if (base.name || base.value.name !== 'VariableName') continue;
    const found = classAttributeName(top, text, text.slice(base.value.from, base.value.to), attribute, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function topClass(top: Node, text: string, className: string): Node | undefined {
  for (const statement of children(top)) {
    const def = unwrapDecorated(statement);
    const id = def?.name === 'ClassDefinition' ? def.getChild('VariableName') : null;
    if (def && id && text.slice(id.from, id.to) === className) return def;
  }
  return undefined;
}
