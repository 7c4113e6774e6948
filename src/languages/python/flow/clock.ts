// A time the host code reads from the clock and binds to a placeholder:
// `datetime.now(timezone.utc)`, `timezone.now()`, `utcnow()`, a name that
// holds one, and that time plus or minus a `timedelta` (`now +
// timedelta(seconds=LEASE_SECONDS)`, a lease end; `now - timedelta(minutes=5)`,
// a stale cutoff): seconds from now. A parameter is the clock its caller
// passes, where the walk stands for that call (`claim(conn,
// datetime.now(timezone.utc))`). The model's `clock` HostParam, as the TS
// front end gives it for `new Date(Date.now() + LEASE_MS)`.
import { dottedName, unwrap, type Node } from '../syntax.ts';
import { timedeltaSeconds } from '../timedelta.ts';
import { isNow } from '../orm/writer.ts';

export interface ClockReader {
  readonly text: string;
  qualify(node: Node): string | undefined;
  /** The value of a name assigned once where `node` is, or a module constant. */
  valueOf(node: Node): Node | undefined;
  /** For a parameter of the walked def: seconds from now of what the call being walked passes, if that is the clock. */
  passed(name: string): number | undefined;
  isParameter(name: string): boolean;
  /** For a parameter of the walked def: what every call of it in the project passes (project-callers.ts), as the clock or a number. */
  projectClock?(name: string): boolean;
  projectNumber?(name: string): number | undefined;
}

/** Seconds from now of a time the expression reads from the clock; undefined when it is not one. */
export function clockSeconds(node: Node | undefined, r: ClockReader, depth = 0): number | undefined {
  const expr = unwrap(node);
  if (!expr || depth > 5) return undefined;
  switch (expr.name) {
    case 'CallExpression': {
      const callee = expr.firstChild!;
      const name = r.qualify(callee) ?? dottedName(callee, r.text) ?? '';
      return isNow(name) ? 0 : undefined;
    }
    case 'BinaryExpression': {
      const [left, op, right] = [expr.firstChild, expr.firstChild?.nextSibling, expr.lastChild];
      const operator = op ? r.text.slice(op.from, op.to) : '';
      if (operator !== '+' && operator !== '-') return undefined;
      const base = clockSeconds(left ?? undefined, r, depth + 1);
      const offset = right ? deltaSeconds(right, r) : undefined;
      if (base === undefined || offset === undefined) return undefined;
      return operator === '+' ? base + offset : base - offset;
    }
    case 'VariableName': {
      const name = r.text.slice(expr.from, expr.to);
      if (r.isParameter(name)) return r.passed(name) ?? (r.projectClock?.(name) ? 0 : undefined);
      const value = r.valueOf(expr);
      return value ? clockSeconds(value, r, depth + 1) : undefined;
    }
    default:
      return undefined;
  }
}

/** `timedelta(minutes=5)` (numbers, or names of constants holding them) as seconds; a name holding one too. */
function deltaSeconds(node: Node, r: ClockReader, depth = 0): number | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) {
    const value = r.valueOf(expr);
    return value ? deltaSeconds(value, r, depth + 1) : undefined;
  }
  return expr ? timedeltaSeconds(expr, r.text, (n) => r.qualify(n), (n) => numberOf(n, r)) : undefined;
}

function numberOf(node: Node, r: ClockReader, depth = 0): number | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  if (expr.name === 'Number') {
    const text = r.text.slice(expr.from, expr.to).replace(/_/g, '');
    return /^\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
  }
  if (expr.name === 'VariableName' && depth < 3) {
    const name = r.text.slice(expr.from, expr.to);
    if (r.isParameter(name)) return r.projectNumber?.(name);
    const value = r.valueOf(expr);
    return value ? numberOf(value, r, depth + 1) : undefined;
  }
  return undefined;
}
