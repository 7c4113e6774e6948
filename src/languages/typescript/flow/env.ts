// The names a scope binds, and what each holds as far as the walk can tell.
import type { FunctionNode } from '../syntax.ts';
import type { Value } from './types.ts';

export class Env {
  readonly vars = new Map<string, Value | undefined>();
  /** Names of `vars` that are parameters of the function this scope is the body of (its callers choose them). */
  readonly params = new Set<string>();
  /**
   * Names of `vars` that hold a boolean the code keeps beside a connection
   * (`let inTx = false; ... BEGIN; inTx = true`), with the key the walk's
   * states know the flag by (a parameter given such a flag shares its key).
   */
  readonly flags = new Map<string, string>();
  /** Names bound again after the function's parameters (assigned, or declared anew in a block): no longer what its caller handed in. */
  readonly rebound = new Set<string>();
  /**
   * What a member path rooted at one of `vars` was assigned (`event.locals.db = await pool.connect()`), by its
   * dotted name: read back as the name would be, until the root or a shorter path is assigned again.
   */
  readonly members = new Map<string, Value | undefined>();
  /** `fn`: the function this scope is the body of (its parameters are bound here). */
  constructor(
    readonly parent?: Env,
    readonly fn?: FunctionNode,
  ) {}

  /** The scope that binds a name. */
  holder(name: string): Env | undefined {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return env;
    return undefined;
  }

  isParameter(name: string): boolean {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return env.params.has(name);
    return false;
  }

  lookup(name: string): { found: boolean; value?: Value } {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return { found: true, value: env.vars.get(name) };
    return { found: false };
  }

  /** The key of the flag a name holds here, if it holds one. */
  flagOf(name: string): string | undefined {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return env.flags.get(name);
    return undefined;
  }

  /** Whether any name in scope holds a flag. */
  hasFlags(): boolean {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.flags.size > 0) return true;
    return false;
  }

  /** `a.b.c = value`: kept on the scope that binds `a` (nothing kept for a name no scope binds, or `this`). */
  assignMember(path: string | undefined, value: Value | undefined): void {
    const root = path?.split('.')[0];
    const holder = root === undefined || root === 'this' ? undefined : this.holder(root);
    if (!holder || path === undefined) return;
    for (const known of holder.members.keys()) if (known.startsWith(`${path}.`)) holder.members.delete(known);
    holder.members.set(path, value);
  }

  /** What a member path was last assigned, if it was. */
  member(path: string): { found: boolean; value?: Value } {
    const holder = this.holder(path.split('.')[0]);
    return holder?.members.has(path) ? { found: true, value: holder.members.get(path) } : { found: false };
  }

  assign(name: string, value: Value | undefined): void {
    for (let env: Env | undefined = this; env; env = env.parent) {
      if (env.vars.has(name)) {
        for (const path of env.members.keys()) if (path.startsWith(`${name}.`)) env.members.delete(path);
        env.vars.set(name, value);
        env.rebound.add(name);
        return;
      }
    }
    this.vars.set(name, value);
  }
}
