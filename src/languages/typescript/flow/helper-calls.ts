// Project functions handed a connection or a transaction handle, walked at
// the call (`await markDone(client, job.id)`, `await this.lock(manager)`,
// `await finish(tx, job)` of an imported module): a BEGIN, COMMIT or release
// there moves the caller's connection. When what the call hands is in a
// transaction the caller holds (a BEGIN on the client, a driver's callback
// handle: TypeORM's manager, Knex's trx, Prisma's tx, Kysely, Drizzle,
// postgres.js), the SQL the function sends on it runs in that transaction:
// it is recorded as the caller's (FileModel.calledSites), in the caller's
// scope (`adopt`), and its claim and finish are the transaction's. A
// function of the same file keeps its spans, with the call it runs at
// (`calledAt`: where it runs in the caller's order); one of another module
// is moved to the call (its text is that module's). Bounded in depth; the
// function's own walk still records its sites on the parameter it was
// handed, in the state its callers give it.
import type { SqlSite } from '../../../model/index.ts';
import { madeMemory, type Adoption } from './adoption.ts';
import { spansAt } from '../../../model/spans.ts';
import { span, unwrap, type Call, type Node } from '../syntax.ts';
import type { WalkOptions } from './bindings.ts';
import { Env } from './env.ts';
import { TsFile } from './file.ts';
import { assignedNames } from './flags.ts';
import { handedObject, heldBy } from './handed-objects.ts';
import { Handing } from './handing.ts';
import { bare } from './jobs.ts';
import { allNone, State, txOf } from './state.ts';
import type { Tx, Value } from './types.ts';

/** How deep functions handed a connection are walked at their calls. */
const MAX_INLINE_DEPTH = 3;

export abstract class HelperCalls extends Handing {
  abstract statements(body: readonly Node[]): void;
  abstract expression(node: Node | null | undefined): void;
  /** A walk like this one (flow/walk.ts's Walk). */
  protected abstract child(file: TsFile, env: Env, state: State, options: WalkOptions): HelperCalls;

  /**
   * Walks a project function at a call that hands it a connection this walk
   * follows (`await beginAs(client, role)`, `await rollbackIf(client, open)`)
   * or a transaction handle: a BEGIN, COMMIT or release there moves the
   * caller's connection, and an error there leaves with the connection as it
   * is at that point. A flag passed to it is the same flag there. Its SQL in
   * the caller's transaction is the caller's (see the head of this module).
   * Returns whether it walked, and whether the call did the job's work.
   */
  protected inline(call: Call): { walked: boolean; work: boolean; inPlace?: boolean } {
    const callee = this.value(call.callee);
    const own = callee?.kind === 'function' && callee.owner === this.file && callee.env instanceof Env;
    // A function the walk does not follow may set a flag it can see.
    if (callee?.kind === 'function' && !own) this.forgetFlags(callee.node);
    // A connection in an object literal (`finish({ client })`) is handed as one given positionally.
    const args = call.arguments.map((a) => (a.type === 'SpreadElement' ? undefined : (this.value(a) ?? handedObject(a, (n) => this.value(n)))));
    const given = args.flatMap((v) => [v, ...heldBy(v)]);
    const known = given.some((v) => v?.kind === 'conn' && v.conn.origin !== 'parameter' && this.state.atoms(v.conn).every((a) => a.kind !== 'unknown'));
    const inTx = this.state.reachable ? given.flatMap((v) => this.transactionOf(v)) : [];
    // In a catch: a handle outside any transaction (a pool, the data source's manager) counts the failure apart from the job's rollback.
    const apart = inTx.length === 0 && this.state.reachable && this.handlerTries().length > 0 && given.some((v) => this.outsideTransaction(v));
    // In a catch: a client whose transaction may still be open (the error came before or after its COMMIT): a count there
    // may be inside the transaction that rolls back (SiteMeta.mayBeIn).
    const mayBeOpen = inTx.length === 0 && !apart && this.state.reachable && this.handlerTries().length > 0 && given.some((v) => v?.kind === 'conn' && this.state.atoms(v.conn).some((a) => a.kind === 'open'));
    const handed = known || inTx.length > 0 || apart || mayBeOpen;
    // Another module's function, followed only for SQL that is the caller's.
    const foreign = !own && (inTx.length > 0 || apart || mayBeOpen) && callee?.kind === 'function' && callee.owner instanceof TsFile && callee.owner !== this.file && callee.env instanceof Env;
    // A function of the file, or a method of the enclosing class (`this.release(client)`), walked in its own scope.
    const member = unwrap(call.callee);
    const method = !own && !foreign && handed && member?.type === 'MemberExpression' && unwrap(member.object)?.type === 'ThisExpression' ? this.helperOf(call) : undefined;
    const fn = own || foreign ? (callee as Extract<Value, { kind: 'function' }>).node : method;
    const file = foreign ? ((callee as Extract<Value, { kind: 'function' }>).owner as TsFile) : this.file;
    const scope = own || foreign ? ((callee as Extract<Value, { kind: 'function' }>).env as Env) : this.file.moduleScope;
    const stack = this.options.inline?.stack ?? this.options.inlineStack ?? [];
    if (!fn || !scope || !handed || !this.state.reachable || stack.length >= MAX_INLINE_DEPTH || stack.includes(fn) || !fn.body) {
      if (fn && !foreign) this.forgetFlags(fn);
      return { walked: false, work: true };
    }
    const adopt: Adoption | undefined =
      inTx.length === 0 && !apart && !mayBeOpen
        ? undefined
        : this.options.adopt
          ? { ...this.options.adopt, sites: [], made: madeMemory() }
          : { into: this.file, call: span(call), foreign, autocommit: apart, mayBeOpen, sites: [], made: madeMemory() };
    if (adopt && foreign) adopt.foreign = true;
    const returns: State[] = [];
    const walk = this.child(file, new Env(scope), this.state, {
      ...this.options,
      ...(foreign && { thisEnv: undefined, name: undefined }),
      fn,
      paramsOf: fn,
      callbackOf: undefined,
      shadow: true,
      // Its own reading of the function's queries: the function's own walk and other calls' walks read them again.
      shadowConsumed: new WeakSet<Node>(),
      adopt,
      inline: { returns, tryBase: this.tries.length, stack: [...stack, fn] },
    });
    walk.tries = [...this.tries];
    fn.params.forEach((param, i) => {
      const arg = args[i];
      const pattern = param.type === 'TSParameterProperty' ? param.parameter : param;
      walk.bindPattern(pattern, arg?.kind === 'conn' || arg?.kind === 'tx' || (apart && arg?.kind === 'pool') || heldBy(arg).length > 0 ? arg : walk.parameterValue(param));
      const passed = unwrap(call.arguments[i] as Node | undefined);
      const flag = !foreign && passed?.type === 'Identifier' ? this.env.flagOf(passed.name) : undefined;
      if (flag && pattern.type === 'Identifier') walk.env.flags.set(pattern.name, flag);
    });
    if (fn.body.type === 'BlockStatement') walk.statements(fn.body.body);
    else walk.expression(fn.body as Node);
    this.state = State.merge([walk.state, ...returns]);
    if (adopt && this.options.adopt) this.options.adopt.sites.push(...adopt.sites);
    return { walked: true, work: !adopt || !queueBookkeeping(adopt.sites, inTx), inPlace: this.inPlace(adopt) };
  }

  /** A walk at a call, in the caller's transaction, of a function of the file: its calls out are recorded where they are, with the call. */
  protected effectsInPlace(): boolean {
    return this.inPlace(this.options.adopt);
  }

  private inPlace(adopt: Adoption | undefined): boolean {
    return !!adopt && !adopt.foreign && !adopt.autocommit && !adopt.mayBeOpen;
  }

  /** The transaction a handed value is in here: a transaction handle's, or a client's open one. */
  private transactionOf(v: Value | undefined): Tx[] {
    if (v?.kind === 'tx') return [v.tx];
    if (v?.kind !== 'conn') return [];
    const tx = txOf(this.state.atoms(v.conn));
    return tx ? [tx] : [];
  }

  /** A handle whose every call runs in autocommit here: a pool (not a parameter a transaction may satisfy), or a client outside a transaction. */
  private outsideTransaction(v: Value | undefined): boolean {
    if (v?.kind === 'pool') return !v.orTx && v.param === undefined;
    return v?.kind === 'conn' && v.conn.origin !== 'parameter' && allNone(this.state.atoms(v.conn));
  }

  /** Flags a piece of code may assign: their values are unknown after it runs. */
  protected forgetFlags(node: Node): void {
    if (!this.env.hasFlags()) return;
    for (const name of assignedNames(node)) {
      const key = this.env.flagOf(name);
      if (key) this.state.setFlag(key, undefined);
    }
  }

  /** A site of SQL this walk at a call sends in the caller's transaction: the caller's, at its own spans or at the call. */
  protected adoptSite(site: SqlSite): SqlSite {
    const adopt = this.options.adopt!;
    const moved = adopt.foreign ? spansAt(site, adopt.call) : site;
    moved.calledAt = { ...adopt.call };
    adopt.sites.push(moved);
    return moved;
  }
}

/**
 * The call only keeps the queue's books: its SQL (at least one statement)
 * claims, reads, or writes the claimed tables only (`lockNext(manager)`,
 * `markDone(client, id)`), so it is not the job's work; one that writes
 * any other table, or runs code of its own, is (its own calls say so).
 */
function queueBookkeeping(sites: readonly SqlSite[], txs: readonly Tx[]): boolean {
  const claimed = new Set(txs.flatMap((tx) => tx.claim?.tables.map(bare) ?? []));
  if (sites.length === 0 || claimed.size === 0) return false;
  return sites.every((s) => s.analysis.statements.every((st) => st.rowWrites.every((w) => claimed.has(bare(w.table))) && st.lockingReads.every((r) => r.tables.every((t) => claimed.has(bare(t))))));
}
