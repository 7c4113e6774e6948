// Which connections reach a parameter of a project function, joined from the
// calls the front ends saw (`handedValues`): directly, through callers that
// hand on a parameter of their own (an options object's property included),
// and through callbacks (a function passed to a project function, which runs
// it through its parameter: `withLock(id, run)` calling `run(client)`;
// `withLock(id, migrations(options))(client)` hands `client` to the function
// `withLock` returns). Bounded in depth. A value it cannot tell, a spread, a
// path too deep, or a function also given to a call it does not follow
// (`escapedFunctions`) is 'unknown'. No call seen at all: an empty set (the
// callers are not known). Not followed: a function kept in an object or an
// array and called from there; its calls there are not seen.
import type { ConnectionUse, FunctionRef, HandedValue, ParameterRef } from './types.ts';

export interface HandingFacts {
  handedValues: readonly HandedValue[];
  escapedFunctions: readonly FunctionRef[];
}

/** How many calls back a connection is followed (caller to caller, callback to the function that runs it). */
export const MAX_HANDED_DEPTH = 8;

const keyOf = (p: ParameterRef) => `${p.function.module}@${p.function.at}#${p.parameter}.${p.property ?? ''}`;

/** For a target parameter, the kinds of connection the calls the facts show hand in as it ('unknown' for any it cannot tell). */
export function handedConnections(facts: HandingFacts): (target: ParameterRef) => Set<ConnectionUse['kind']> {
  const fnKey = (fn: FunctionRef) => `${fn.module}@${fn.at}`;
  // The calls of each project function, and the calls of functions parameters hold.
  const direct = new Map<string, HandedValue[]>();
  const held: HandedValue[] = [];
  for (const v of facts.handedValues) {
    if ('heldBy' in v.to) held.push(v);
    else {
      const key = fnKey(v.to.function);
      const calls = direct.get(key);
      if (calls) calls.push(v);
      else direct.set(key, [v]);
    }
  }
  const escaped = new Set(facts.escapedFunctions.map(fnKey));
  const heldMemo = new Map<string, FunctionRef[]>();

  /**
   * The project functions a parameter is passed (by name, as a function
   * expression, or as what a call returns). A function passed where the facts
   * cannot follow it (a spread, an object it is kept in) is not among them:
   * calls of it there are not seen.
   */
  const functionsHeldBy = (p: ParameterRef, depth: number): FunctionRef[] => {
    const key = keyOf(p);
    const known = heldMemo.get(key);
    if (known) return known;
    if (depth > MAX_HANDED_DEPTH) return [];
    heldMemo.set(key, []); // a cycle adds nothing
    const out: FunctionRef[] = [];
    for (const v of callsOf(p.function, depth)) {
      if (v.argument !== p.parameter || v.rest || (v.property ?? '') !== (p.property ?? '')) continue;
      if (v.value.kind === 'function') out.push(v.value.function);
      else if (v.value.kind === 'parameter') out.push(...functionsHeldBy(v.value.of, depth + 1));
    }
    heldMemo.set(key, out);
    return out;
  };

  /** The calls that run `fn`: calls naming it, and calls of the parameters it is passed as. */
  const callsOf = (fn: FunctionRef, depth: number): HandedValue[] => {
    const out = [...(direct.get(fnKey(fn)) ?? [])];
    for (const v of held) {
      if ('heldBy' in v.to && functionsHeldBy(v.to.heldBy, depth + 1).some((f) => fnKey(f) === fnKey(fn))) out.push(v);
    }
    return out;
  };

  return (target) => {
    const out = new Set<ConnectionUse['kind']>();
    const seen = new Set<string>();
    const visit = (t: ParameterRef, depth: number): void => {
      const key = keyOf(t);
      if (seen.has(key)) return; // followed already (a cycle adds nothing new)
      seen.add(key);
      if (depth > MAX_HANDED_DEPTH || escaped.has(fnKey(t.function))) {
        out.add('unknown');
        return;
      }
      for (const v of callsOf(t.function, depth)) {
        if (v.argument > t.parameter || (v.argument < t.parameter && !v.rest)) continue;
        if (v.rest) {
          out.add('unknown');
          continue;
        }
        if (v.property !== undefined) {
          // An object literal's property: the one the target reads, or a spread that may hold it.
          if (t.property === undefined) continue; // the target is the whole object, not a connection
          if (v.property === '*') out.add('unknown');
          if (v.property !== t.property) continue;
        } else if (t.property !== undefined) {
          // The whole argument is handed: the target reads a property of it.
          if (v.value.kind === 'parameter' && v.value.of.property === undefined) visit({ ...v.value.of, property: t.property }, depth + 1);
          else out.add('unknown');
          continue;
        }
        if (v.value.kind === 'connection') out.add(v.value.use);
        else if (v.value.kind === 'parameter') visit(v.value.of, depth + 1);
        else out.add('unknown');
      }
    };
    visit(target, 0);
    return out;
  };
}

/** Whether the calls the facts show hand a parameter a single-connection client and nothing else (at least one call). */
export function onlyDedicated(uses: ReadonlySet<ConnectionUse['kind']>): boolean {
  return uses.size > 0 && [...uses].every((u) => u === 'dedicated');
}
