// Where an error may leave a connection inside a transaction, across
// functions: the facts behind "the wrapper's `finally { client.release() }`
// gives the client back inside the transaction the callback's helper opened"
// (model `ReleaseSite.afterCall`, `OpenOnThrow`; the release rule joins them).
//
// - A call handed a checked-out client outside any transaction (`return await
//   fn(client)`, `fn` the wrapper's callback parameter, or a project function
//   the walk does not walk at the call): on the call's error path the client
//   is 'none' marked with the call (`via`). A COMMIT, ROLLBACK or release(err)
//   on the way clears it; a release() it reaches says so (`afterCall`).
// - A function handed a connection as a parameter and a call of it that no
//   try of the function is around, handing that parameter on as it came in
//   (`(c) => inTxn(c, work)`): the function throws with the connection as
//   that call's error leaves it (`OpenOnThrow.via`).
// - An error no try of the function catches, with a parameter's connection
//   inside a transaction a BEGIN of the function opened (`inTxn`'s BEGIN, then
//   `await fn()` throws, or a catch that logs and rethrows): `OpenOnThrow.begin`.
// What a function's own try/catch does is read by the walk's states: a catch
// that rolls back leaves nothing open, and a call inside a try is not a
// hand-off on the error path (stay quiet: the catch may end the transaction).
import type { CallHanding, FileModel, HandedValue, OpenOnThrow } from '../../../model/index.ts';
import { memberKeyName, span, unwrap, type Call, type FunctionNode, type Node } from '../syntax.ts';
import type { Env } from './env.ts';
import { parameterOf, receiverOf, refOf } from './parameters.ts';
import { allNone, type State } from './state.ts';
import type { Conn, Value } from './types.ts';
import type { WalkOptions } from './bindings.ts';

/** What of a walk these facts read. */
export interface ThrowWalk {
  model: FileModel;
  env: Env;
  state: State;
  options: WalkOptions;
  /** Try frames of the function itself around the current point. */
  tries: number;
  value(node: Node | null | undefined): Value | undefined;
}

/** The clients untyped callback parameters stand for, per callback and parameter (see callbackClient). */
const callbackClients = new WeakMap<FunctionNode, Map<number, Conn>>();

/**
 * The receiver of a query with no value of its own that is an untyped
 * parameter of a callback a project function runs (`withClient(async (client)
 * => { await client.query('BEGIN'); ... })`): the connection the project
 * function hands it, followed from here for its BEGIN, COMMIT and ROLLBACK
 * only (it is not bound as a value: the callback's other calls are read as
 * before).
 */
export function callbackClient(w: ThrowWalk, at: Node, make: () => Conn): Value | undefined {
  const fn = w.options.fn;
  if (!fn || !w.options.callbackOf || w.options.shadow || w.options.inline) return undefined;
  const receiver = unwrap(receiverOf(at));
  if (receiver?.type !== 'Identifier' || w.value(receiver) !== undefined) return undefined;
  const param = parameterOf(w.env, w.model.file, receiver);
  if (!param || param.property !== undefined || param.function.at !== fn.range[0]) return undefined;
  let clients = callbackClients.get(fn);
  if (!clients) callbackClients.set(fn, (clients = new Map()));
  let conn = clients.get(param.parameter);
  if (!conn) {
    conn = make();
    clients.set(param.parameter, conn);
    w.state.set(conn, { kind: 'unknown', entry: true });
  }
  return { kind: 'conn', conn };
}

/** Per walk: parameter names an earlier call of the function used (a BEGIN on them may have moved them). */
const touchedBy = new WeakMap<object, Set<string>>();

function touched(walk: object): Set<string> {
  let set = touchedBy.get(walk);
  if (!set) touchedBy.set(walk, (set = new Set()));
  return set;
}

/** The function a call runs, when the walk can name it: a project function, or the one a parameter of an enclosing function holds. */
function target(w: ThrowWalk, call: Call): HandedValue['to'] | undefined {
  const callee = w.value(call.callee);
  if (callee?.kind === 'function') return { function: refOf(callee.owner.model.file, callee.node) };
  if (callee) return undefined;
  const held = parameterOf(w.env, w.model.file, call.callee);
  return held ? { heldBy: held } : undefined;
}

function pushOnce(model: FileModel, fact: OpenOnThrow): void {
  const list = (model.openOnThrow ??= []);
  const key = (f: OpenOnThrow) => `${f.function.at}#${f.parameter}.${f.property ?? ''}@${f.begin?.start ?? ''}:${f.via?.span.start ?? ''}`;
  if (!list.some((f) => key(f) === key(fact))) list.push(fact);
}

/**
 * A call that is not the database's and that the walk did not walk into: the
 * state its error path leaves with (returned when it differs from the current
 * one), and the hand-off facts of the walked function's own parameters.
 * `self` identifies the walk (the parameters its earlier calls used).
 */
export function throughCall(w: ThrowWalk, self: object, call: Call): State | undefined {
  const used = touched(self);
  const names = call.arguments.map((a) => {
    const n = unwrap(a as Node);
    return n?.type === 'Identifier' ? n.name : undefined;
  });
  const callee = unwrap(call.callee);
  const receiver = callee?.type === 'MemberExpression' ? unwrap(callee.object) : undefined;
  const touch = () => {
    for (const name of names) if (name) used.add(name);
    if (receiver?.type === 'Identifier') used.add(receiver.name);
  };
  const to = w.options.shadow || w.options.inline || !w.state.reachable ? undefined : target(w, call);
  if (!to) {
    touch();
    return undefined;
  }
  let error: State | undefined;
  call.arguments.forEach((arg, argument) => {
    if (arg.type === 'SpreadElement') return;
    const literal = unwrap(arg);
    if (literal?.type === 'ObjectExpression') {
      // `runJob({ client, job })`: a client outside any transaction, handed as a property.
      for (const p of literal.properties) {
        const property = p.type === 'Property' && !p.computed ? memberKeyName(p) : undefined;
        const held = property === undefined ? undefined : w.value((p as { value: Node }).value);
        if (held?.kind !== 'conn' || held.conn.origin === 'parameter' || !allNone(w.state.atoms(held.conn))) continue;
        error ??= w.state.clone();
        error.set(held.conn, { kind: 'none', via: { to, argument, property: property!, span: span(call) } });
      }
      return;
    }
    const v = w.value(arg);
    const handing: CallHanding = { to, argument, span: span(call) };
    if (v?.kind === 'conn' && v.conn.origin !== 'parameter' && allNone(w.state.atoms(v.conn))) {
      error ??= w.state.clone();
      error.set(v.conn, { kind: 'none', via: handing });
      return;
    }
    const fn = w.options.fn;
    const name = names[argument];
    if (!fn || !name || w.tries > 0 || used.has(name)) return;
    const param = parameterOf(w.env, w.model.file, arg);
    if (!param || param.property !== undefined || param.function.at !== fn.range[0]) return;
    // As the caller handed it in: no call before this one used it (no BEGIN on it); a typed parameter's state is not a transaction of its own.
    // (This call has already marked it as handed away: its entry state is 'unknown' now.)
    if (v?.kind === 'conn' && !(v.conn.origin === 'parameter' && w.state.atoms(v.conn).every((a) => a.kind === 'unknown'))) return;
    if (v && v.kind !== 'conn') return;
    pushOnce(w.model, { function: param.function, parameter: param.parameter, via: handing });
  });
  touch();
  return error;
}

/**
 * An error no try of the walked function catches: a parameter's connection
 * left inside a transaction a BEGIN here opened. `tag`: the error left a
 * try's finally block (only its states that entered it abruptly count).
 */
export function uncaughtThrow(w: ThrowWalk, state: State, tag?: string): void {
  const fn: FunctionNode | undefined = w.options.fn;
  if (!fn || w.options.shadow || w.options.inline || w.tries > 0 || !state.reachable) return;
  // TypeScript's `this` parameter takes no argument.
  fn.params.filter((p) => !(p.type === 'Identifier' && p.name === 'this')).forEach((p, parameter) => {
    if (p.type === 'ObjectPattern') {
      // `({ client }: { client: PoolClient })`: each destructured name as that property of what the caller hands.
      for (const prop of p.properties) {
        if (prop.type !== 'Property' || prop.computed || prop.value.type !== 'Identifier') continue;
        const property = memberKeyName(prop);
        const holder = w.env.holder(prop.value.name);
        const v = holder?.fn === fn && !holder.rebound.has(prop.value.name) ? holder.vars.get(prop.value.name) : undefined;
        const open = v?.kind === 'conn' ? state.atoms(v.conn).find((a) => a.kind === 'open' && (!tag || a.tags?.includes(tag))) : undefined;
        if (open?.kind === 'open' && property !== undefined) pushOnce(w.model, { function: refOf(w.model.file, fn), parameter, property, begin: open.tx.info.beginSpan });
      }
      return;
    }
    if (p.type !== 'Identifier') return;
    const holder = w.env.holder(p.name);
    if (holder?.fn !== fn || holder.rebound.has(p.name)) return;
    const v = holder.vars.get(p.name);
    const conn = v?.kind === 'conn' ? v.conn : v === undefined ? callbackClients.get(fn)?.get(parameter) : undefined;
    if (!conn) return;
    const open = state.atoms(conn).find((a) => a.kind === 'open' && (!tag || a.tags?.includes(tag)));
    if (open?.kind === 'open') pushOnce(w.model, { function: refOf(w.model.file, fn), parameter, begin: open.tx.info.beginSpan });
  });
}
