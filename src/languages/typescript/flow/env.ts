// The names a scope binds, and what each holds as far as the walk can tell.
import type { Value } from './types.ts';

export class Env {
  readonly vars = new Map<string, Value | undefined>();
  /** Names of `vars` that are parameters of the function this scope is the body of (its callers choose them). */
  readonly params = new Set<string>();
  constructor(readonly parent?: Env) {}

  isParameter(name: string): boolean {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return env.params.has(name);
    return false;
  }

  lookup(name: string): { found: boolean; value?: Value } {
    for (let env: Env | undefined = this; env; env = env.parent) if (env.vars.has(name)) return { found: true, value: env.vars.get(name) };
    return { found: false };
  }

  assign(name: string, value: Value | undefined): void {
    for (let env: Env | undefined = this; env; env = env.parent) {
      if (env.vars.has(name)) {
        env.vars.set(name, value);
        return;
      }
    }
    this.vars.set(name, value);
  }
}
