// Functions of the project that send the text they are given: the query
// helper node-postgres' own guide suggests, and most projects keep in a
// `db.ts` (`export const query = (text, params) => pool.query(text, params)`,
// often with a timer and a log line around the call). A call of one,
// `query(sql, [id])`, sends `sql` with those values on the pool the helper
// names, so it is read as `pool.query(sql, [id])` written at the call.
//
// Only a helper whose shape says so: its first parameter (and its second,
// when it has one) handed on unchanged, in the same places, to one method
// call on a name bound outside the helper (the module's pool or client).
// A helper that checks out a client, opens a transaction or builds the text
// itself is some other function, and its calls are not read this way.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { children, isFunction, methodOf, patternNames, unwrap, type Call, type FunctionNode, type Node } from '../syntax.ts';

/** The call a sender hands its text to: `pool.query(text, params)`, with the receiver's name and the method. */
export interface SenderShape {
  call: Call;
  object: Node;
  receiver: string;
  method: string;
}

const LOGGERS = /^(console|log|logger|debug)$/;

const shapes = new WeakMap<FunctionNode, SenderShape | null>();

/** The one call a function hands its text (and values) parameters to, when that is all it does with them. */
export function senderShape(fn: FunctionNode): SenderShape | undefined {
  let shape = shapes.get(fn);
  if (shape === undefined) shapes.set(fn, (shape = readShape(fn) ?? null));
  return shape ?? undefined;
}

function parameterName(param: TSESTree.Parameter | undefined): string | undefined {
  if (param?.type === 'Identifier') return param.name;
  if (param?.type === 'AssignmentPattern' && param.left.type === 'Identifier') return param.left.name;
  return undefined;
}

function readShape(fn: FunctionNode): SenderShape | undefined {
  const text = parameterName(fn.params[0]);
  if (!text || fn.params.length > 2) return undefined;
  const values = fn.params.length === 2 ? parameterName(fn.params[1]) : undefined;
  if (fn.params.length === 2 && !values) return undefined;
  const own = new Set<string>([text, ...(values ? [values] : [])]);
  const found: SenderShape[] = [];
  let rebound = false;
  let elsewhere = false;
  const isName = (node: Node | undefined, name: string | undefined) => !!name && node?.type === 'Identifier' && node.name === name;
  const visit = (node: Node) => {
    if (isFunction(node)) return; // a callback's uses are its own
    if (node.type === 'VariableDeclarator') for (const id of patternNames(node.id)) own.add(id.name);
    if (node.type === 'AssignmentExpression' && node.left.type === 'Identifier' && (node.left.name === text || node.left.name === values)) rebound = true;
    if (node.type === 'CallExpression') {
      const args = node.arguments.map((a) => unwrap(a as Node));
      if (isName(args[0], text)) {
        const method = methodOf(node);
        const object = method ? unwrap(method.object) : undefined;
        const valuesHanded = args.length === 1 || (args.length === 2 && isName(args[1], values));
        if (object?.type === 'Identifier' && LOGGERS.test(object.name)) {
          // logged, not sent
        } else if (!method || object?.type !== 'Identifier' || !valuesHanded) elsewhere = true; // handed to something else: not a sender
        else found.push({ call: node, object, receiver: object.name, method: method.name });
      }
    }
    for (const child of children(node)) visit(child);
  };
  if (fn.body) visit(fn.body as Node);
  const [only] = found;
  if (rebound || elsewhere || found.length !== 1 || !only || own.has(only.receiver)) return undefined;
  return only;
}
