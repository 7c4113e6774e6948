// What a function's parameter holds, read from the code around it: the
// values the function assigns it itself (`now = now or timezone.now()`), and
// what every call of the function in the file passes for it. The ORM writer
// asks, to read a clock or a lease length the caller hands in.
import { callParts, keyword, type Node } from '../syntax.ts';
import { parameters } from './defs.ts';
import type { EngineFile } from './engine-file.ts';

/** Per file, what the calls of a def pass for one of its parameters, by `def offset:name`. */
const PASSED = new WeakMap<object, Map<string, Node[] | undefined>>();

/**
 * What every call of `def` in the file passes for its parameter `name` (by position or keyword); undefined when no
 * call is seen or one passes nothing for it (or spreads `*args`). Callers in other modules are not read.
 */
export function passedToParameter(file: EngineFile, def: Node, name: string): Node[] | undefined {
  let known = PASSED.get(file);
  if (!known) PASSED.set(file, (known = new Map()));
  const key = `${def.from}:${name}`;
  if (!known.has(key)) known.set(key, passedFor(file, def, name));
  return known.get(key);
}

function passedFor(file: EngineFile, def: Node, name: string): Node[] | undefined {
  const text = file.text;
  const normal = parameters(def, text)
    .filter((p) => p.kind === 'normal')
    .map((p) => p.name);
  const found: Node[] = [];
  let complete = true;
  file.tree.topNode.cursor().iterate((ref) => {
    if (ref.name !== 'CallExpression') return;
    const call = callParts(ref.node, text);
    if (!call || file.resolveDef(call.callee, ref.node)?.from !== def.from) return;
    // `self.grab(...)`: the method's own first parameter is the object, not an argument.
    const positional = call.callee.name === 'MemberExpression' && (normal[0] === 'self' || normal[0] === 'cls') ? normal.slice(1) : normal;
    const index = positional.indexOf(name);
    const arg = keyword(call.args, name) ?? (index >= 0 ? call.args.filter((a) => !a.name && !a.star)[index]?.value : undefined);
    if (arg && !call.args.some((a) => a.star)) found.push(arg);
    else complete = false;
  });
  return complete && found.length > 0 ? found : undefined;
}
