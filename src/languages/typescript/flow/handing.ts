// Connections handed from function to function: a call of a project
// function that hands it a connection says what state the callee's parameter
// arrives in (the caller's scope of it), or where that state comes from (a
// parameter of the caller as its own callers hand it; a parameter of a
// callback as the project function that runs it hands it). A parameter is in
// that entry state until the function moves it (BEGIN, COMMIT) or hands it to
// a call the walk does not follow. Rules join these facts across files
// (model `connectionCalls`, `runsOnParameter`, `callbackCalls`). Which
// connection a parameter holds, whatever its state: client-handing.ts.
import type { ConnectionCall } from '../../../model/index.ts';
import { methodOf, span, unwrap, type Call, type Node } from '../syntax.ts';
import { ClientHanding } from './client-handing.ts';
import { allEntry, leftEntry } from './state.ts';
import { driverOfValue, type Conn } from './types.ts';

export abstract class Handing extends ClientHanding {
  /** A callback's parameters this call runs on or is handed: from here on they are not as the project function handed them. */
  protected touchCallbackParameters(call: Call): void {
    const touched = this.options.callbackOf?.touched;
    if (!touched) return;
    const receiver = methodOf(call)?.object;
    for (const node of [receiver, ...call.arguments]) {
      const n = node ? unwrap(node as Node) : undefined;
      if (n?.type === 'Identifier') touched.add(n.name);
    }
  }

  /**
   * A call handed a connection (recorded, if `record`, when it is a project
   * function's): a parameter's state is no longer the one its caller handed
   * in (a parameter is never walked into at a call: `inline` follows only
   * connections whose state this walk knows). Returns the connections handed.
   */
  protected handedAway(call: Call, record: boolean): Conn[] {
    if (record) {
      this.handingCall(call);
      this.handValues(call);
    }
    const handed: Conn[] = [];
    for (const arg of call.arguments) {
      const v = arg.type === 'SpreadElement' ? undefined : this.value(arg);
      if (v?.kind !== 'conn') continue;
      leftEntry(this.state, v.conn);
      handed.push(v.conn);
    }
    return handed;
  }

  /** Walks a callback of a call handed `handed` (`inTxn(client, async () => ...)`): it runs on them in whatever state the callee leaves them. */
  protected handedState(handed: readonly Conn[], walk: () => void): void {
    const outer = this.state;
    if (handed.length > 0) {
      this.state = outer.clone();
      for (const conn of handed) this.state.set(conn, { kind: 'unknown' });
    }
    walk();
    this.state = outer;
  }

  /**
   * A call of a project function handed a connection: the state the callee's
   * parameter arrives in (this walk's scope of it), or where that comes from
   * (a parameter of this function as its own callers hand it; a parameter of
   * a callback a project function runs).
   */
  protected handingCall(call: Call): void {
    if (!this.state.reachable) return;
    const callee = this.value(call.callee);
    if (callee?.kind !== 'function') return;
    call.arguments.forEach((arg, argument) => {
      if (arg.type === 'SpreadElement') return;
      const v = this.value(arg);
      const given = unwrap(arg);
      const name = given?.type === 'Identifier' ? given.name : undefined;
      const callbackOf = this.options.callbackOf;
      const parameter = name && callbackOf ? callbackOf.parameters.indexOf(name) : -1;
      const handing: ConnectionCall = { function: { module: callee.owner.model.file, at: callee.node.range[0] }, argument, span: span(call), scope: { kind: 'unknown' } };
      // A pool: each call on it runs in autocommit, unless it is a parameter a transaction also satisfies.
      if (v?.kind === 'conn' || v?.kind === 'tx' || v?.kind === 'pool') handing.scope = this.scopeOf(v);
      const from = v?.kind === 'conn' && v.conn.param && allEntry(this.state.atoms(v.conn)) ? v.conn.param : v?.kind === 'pool' ? v.param : undefined;
      if (from) {
        handing.fromParameter = { function: { module: this.file.model.file, at: from.fn.range[0] }, parameter: from.index };
      } else if (callbackOf && parameter >= 0 && !v && !callbackOf.touched?.has(name!)) {
        // A callback's parameter as the project function hands it: no call before this one used it (no BEGIN on it).
        handing.fromCallback = { function: callbackOf.function, argument: callbackOf.argument, parameter };
      }
      if (handing.scope.kind === 'unknown' && !handing.fromParameter && !handing.fromCallback) return;
      (this.file.model.connectionCalls ??= []).push(handing);
    });
  }

  /** A call of the walked function's own parameter with a connection or transaction handle: where its callers' callback runs. */
  protected callbackCall(call: Call): void {
    const callee = unwrap(call.callee);
    const owner = this.options.paramsOf;
    if (callee?.type !== 'Identifier' || !owner || !this.state.reachable) return;
    // A parameter of a callback run now, of the same name, hides the outer one.
    if (this.options.fn && this.options.fn !== owner && this.options.fn.params.some((p) => p.type === 'Identifier' && p.name === callee.name)) return;
    const parameter = owner.params.findIndex((p) => p.type === 'Identifier' && p.name === callee.name);
    if (parameter < 0) return;
    call.arguments.forEach((arg, connectionArgument) => {
      const handle = this.value(arg as Node);
      if (handle?.kind !== 'conn' && handle?.kind !== 'tx') return;
      const calls = (this.file.model.callbackCalls ??= []);
      const driver = driverOfValue(handle);
      calls.push({ function: { module: this.file.model.file, at: owner.range[0] }, parameter, connectionArgument, span: span(call), scope: this.scopeOf(handle), ...(driver ? { driver } : {}) });
    });
  }
}
