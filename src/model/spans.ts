// Facts another module's SQL produced, moved to where this file runs it: a call of a project function
// reports at the call, since the function's own lines are in another file's report.
import type { Span } from './types.ts';

/** A copy of facts with every span (an object with numeric start and end) set to `to`. */
export function spansAt<T>(value: T, to: Span): T {
  if (Array.isArray(value)) return value.map((v: unknown) => spansAt(v, to)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = spansAt(v, to);
  if (typeof out.start === 'number' && typeof out.end === 'number') {
    out.start = to.start;
    out.end = to.end;
  }
  return out as T;
}
