// Which connection a parameter holds, as its callers hand it in: the facts
// behind "this helper's session write runs on whatever connection its callers
// give it" (model `clientParameter`, `handedValues`, `escapedFunctions`). A
// call of a project function, or of a function a parameter holds (a callback:
// `run(client)` inside `withLock(id, run)`, reached by `withLock(id,
// migrations(options))(client)` from a caller), records what it hands each
// parameter: a connection of a kind (a `new Client()` of its own, a client
// checked out of a pool, the pool), the caller's own parameter, a function of
// the project, or a value the walk cannot tell. An options object's property
// (`migrate({ client })`) is handed as that property. What the value is, not
// what it is called, decides; a project function passed to a call the walk
// cannot follow is called with arguments nobody here sees. A site's own
// receiver is read the same way (parameters.ts); src/model/handed.ts joins
// the facts.
import type { HandedValue } from '../../../model/index.ts';
import { isFunction, memberKeyName, unwrap, type Call, type Node } from '../syntax.ts';
import { parameterOf, refOf } from './parameters.ts';
import { Sites } from './sites.ts';

/** An argument that may hold a connection the walk cannot tell: a name, a member, a call's result. */
function mayHoldConnection(n: Node): boolean {
  return n.type === 'Identifier' || n.type === 'MemberExpression' || n.type === 'CallExpression' || n.type === 'ConditionalExpression' || n.type === 'LogicalExpression';
}

export abstract class ClientHanding extends Sites {
  /**
   * A call of a project function, or of a function a parameter holds: what it
   * hands each parameter. A project function passed to any other call escapes:
   * that call may run it with anything.
   */
  protected handValues(call: Call): void {
    if (!this.state.reachable) return;
    const to = this.calledFunction(call);
    if (!to) {
      for (const arg of call.arguments) this.escapes(arg);
      return;
    }
    const out = (this.file.model.handedValues ??= []);
    call.arguments.forEach((arg, argument) => {
      if (arg.type === 'SpreadElement') {
        out.push({ to, argument, rest: true, value: { kind: 'unknown' } });
        return;
      }
      const n = unwrap(arg);
      if (n?.type !== 'ObjectExpression') {
        const value = n && this.handedValue(n);
        if (value) out.push({ to, argument, value });
        return;
      }
      for (const p of n.properties) {
        if (p.type === 'SpreadElement' || p.computed) {
          // `{ ...options }`: any property may come from it.
          out.push({ to, argument, property: '*', value: { kind: 'unknown' } });
          continue;
        }
        const property = memberKeyName(p);
        const value = property === undefined ? { kind: 'unknown' as const } : this.handedValue(unwrap(p.value as Node) ?? p.value);
        if (value) out.push({ to, argument, property: property ?? '*', value });
      }
    });
  }

  /** A project function given to a call the walk does not follow, itself or in an object or array literal (`queue.process({ handler })`). */
  private escapes(arg: Node): void {
    const n = unwrap(arg.type === 'SpreadElement' ? arg.argument : arg);
    if (!n) return;
    const held = n.type === 'ObjectExpression' ? n.properties.map((p) => (p.type === 'Property' ? p.value : p.argument)) : n.type === 'ArrayExpression' ? n.elements : [n];
    for (const node of held) {
      const v = node && node.type !== 'SpreadElement' ? this.value(node as Node) : undefined;
      if (v?.kind === 'function') (this.file.model.escapedFunctions ??= []).push(refOf(v.owner.model.file, v.node));
    }
  }

  /** The function a call runs: a project function (`f(...)`, `makeRunner(...)(...)`), or the one a parameter of an enclosing function holds. */
  private calledFunction(call: Call): HandedValue['to'] | undefined {
    const callee = this.value(call.callee);
    if (callee?.kind === 'function') return { function: refOf(callee.owner.model.file, callee.node) };
    if (callee) return undefined;
    const held = parameterOf(this.env, this.file.model.file, call.callee);
    return held ? { heldBy: held } : undefined;
  }

  /** What an argument is, as far as which connection it may be goes; undefined where it is no connection (a literal, a driver's module). */
  private handedValue(n: Node): HandedValue['value'] | undefined {
    if (isFunction(n)) return { kind: 'function', function: refOf(this.file.model.file, n) };
    const v = this.value(n);
    const parameter = () => parameterOf(this.env, this.file.model.file, n);
    switch (v?.kind) {
      case 'function':
        return { kind: 'function', function: refOf(v.owner.model.file, v.node) };
      case 'conn':
      case 'pool':
      case 'tx': {
        const use = this.placement(v).connection.kind;
        const of = use === 'unknown' ? parameter() : undefined;
        return of ? { kind: 'parameter', of } : { kind: 'connection', use };
      }
      case 'opaque':
      case 'builder':
      case 'adapter': {
        const of = parameter();
        return of ? { kind: 'parameter', of } : { kind: 'connection', use: 'unknown' };
      }
      case undefined: {
        const of = parameter();
        if (of) return { kind: 'parameter', of };
        return mayHoldConnection(n) ? { kind: 'unknown' } : undefined;
      }
      default:
        // A driver's module, a maker, a namespace, a table, a tag: not a connection.
        return undefined;
    }
  }
}
