// `datetime.timedelta(...)` as seconds: what a lease length or a stale cutoff written in Python
// amounts to. The ORM writer (orm/writer.ts) and the clock reading of bound values (flow/clock.ts)
// both ask; each says how a name or a number is resolved where it reads.
import { argsOf, dottedName, type Node } from './syntax.ts';

const SECONDS_PER_UNIT: Record<string, number> = { weeks: 604800, days: 86400, hours: 3600, minutes: 60, seconds: 1, milliseconds: 0.001 };

/** Seconds of a `timedelta(...)` call whose every argument is a number `numberOf` knows (the first positional one in days); undefined otherwise. */
export function timedeltaSeconds(
  call: Node,
  text: string,
  qualify: (node: Node) => string | undefined,
  numberOf: (node: Node) => number | undefined,
): number | undefined {
  if (call.name !== 'CallExpression') return undefined;
  const name = qualify(call.firstChild!) ?? dottedName(call.firstChild, text) ?? '';
  if (!/(^|\.)timedelta$/.test(name)) return undefined;
  const args = argsOf(call.lastChild, text);
  let total = 0;
  for (const a of args) {
    const unit = a.name ?? (a === args[0] ? 'days' : undefined);
    const value = unit !== undefined && unit in SECONDS_PER_UNIT && !a.star ? numberOf(a.value) : undefined;
    if (value === undefined) return undefined;
    total += value * SECONDS_PER_UNIT[unit!];
  }
  return total;
}
