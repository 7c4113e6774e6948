// Connections and the transactions their statements run in, as the code
// flows. With autocommit off a statement opens an implicit transaction that
// lasts until commit()/rollback(), the end of a `with` block over the
// connection (what it does there is the connection's exitEnds), or a COMMIT
// sent as SQL. A transaction block (`with conn.transaction():`) is its own
// transaction, a savepoint inside an open one; in autocommit each statement
// runs alone. Which driver does what is the driver modules' to say.
import type { Scope, Span } from '../../../model/index.ts';
import type { Conn, EndKind, Flow } from './types.ts';

export type { Conn, EndKind, Flow };

export function initialFlow(autocommit: boolean | 'unknown'): Flow {
  return { autocommit, serial: 0, dirty: false, explicit: [] };
}

export function copyFlow(flow: Flow): Flow {
  return { ...flow, explicit: [...flow.explicit], maybe: flow.maybe && [...flow.maybe] };
}

let fresh = 1_000_000;
/** How many implicit transactions a merged flow remembers it may be in. */
const MAX_MAYBE = 16;
let transactions = 0;
/** How each implicit transaction (`<conn>.<serial>`) was seen to end, on every path the walk followed. */
let ends = new Map<string, Set<EndKind>>();

/** Numbering starts over for every file, so ids do not depend on the order files are read in. */
export function resetNumbering(): void {
  fresh = 1_000_000;
  transactions = 0;
  ends = new Map();
}

/** Records how the connection's open implicit transaction ends here. */
export function noteEnd(conn: Conn, how: EndKind): void {
  if (conn.flow.explicit.length > 0 || conn.flow.autocommit === true) return;
  const key = `${conn.id}.${conn.flow.serial}`;
  const set = ends.get(key) ?? new Set<EndKind>();
  set.add(how);
  ends.set(key, set);
}

/**
 * True when the implicit transaction of this scope id was rolled back on
 * every path that ended it and committed on none (SQLAlchemy's `with
 * engine.connect()` left without commit()): what it wrote is undone.
 */
export function neverCommits(scopeId: string): boolean {
  const key = scopeId.slice(scopeId.lastIndexOf('#') + 1);
  const set = ends.get(key);
  return !!set && set.has('rollback') && !set.has('commit') && !set.has('unknown');
}

/** The flow after either of two paths: what they disagree on becomes unknown (or a new transaction). */
export function mergeFlows(a: Flow, b: Flow): Flow {
  // Bounded: a function of thousands of branches must not grow this list at every merge.
  const maybe = a.serial === b.serial && !a.maybe && !b.maybe ? undefined : [...new Set([...(a.maybe ?? [a.serial]), ...(b.maybe ?? [b.serial])])].slice(0, MAX_MAYBE);
  return {
    maybe,
    autocommit: a.autocommit === b.autocommit ? a.autocommit : 'unknown',
    serial: a.serial === b.serial ? a.serial : fresh++,
    dirty: a.dirty === b.dirty ? a.dirty : 'unknown',
    dirtyAt: a.dirtyAt ?? b.dirtyAt,
    explicit: a.explicit.length <= b.explicit.length ? [...a.explicit] : [...b.explicit],
  };
}

export function scopeOf(conn: Conn, file: string): Scope {
  const { flow } = conn;
  const rollsBackOnError = !conn.callback;
  if (flow.explicit.length > 0) {
    const outer = flow.explicit[0];
    return { kind: 'transaction', id: outer.id, form: outer.form, rollsBackOnError };
  }
  if (flow.autocommit === true) return { kind: 'autocommit' };
  if (flow.autocommit === false) return { kind: 'transaction', id: implicitId(conn, file), form: conn.implicitForm, rollsBackOnError };
  return { kind: 'unknown' };
}

export function implicitId(conn: Conn, file: string): string {
  return `${file}#${conn.id}.${conn.flow.serial}`;
}

/** The implicit transactions a statement on the connection may run in, where paths disagree (an except handler). */
export function possibleImplicitIds(conn: Conn, file: string): string[] | undefined {
  if (conn.flow.explicit.length > 0 || conn.flow.autocommit !== false || !conn.flow.maybe) return undefined;
  return conn.flow.maybe.map((serial) => `${file}#${conn.id}.${serial}`);
}

/** A statement ran on the connection. */
export function executed(conn: Conn, at: Span): void {
  const { flow } = conn;
  if (flow.explicit.length > 0) return;
  if (flow.autocommit === false) {
    if (flow.dirty !== true) flow.dirtyAt = at;
    flow.dirty = true;
  } else if (flow.autocommit === 'unknown' && flow.dirty !== true) {
    flow.dirty = 'unknown';
    flow.dirtyAt ??= at;
  }
}

/** commit(), rollback(), COMMIT or ROLLBACK sent as SQL, the end of `with conn:`. */
export function ended(conn: Conn, how: EndKind = 'unknown'): void {
  const { flow } = conn;
  if (flow.dirty !== false) noteEnd(conn, how);
  flow.serial++;
  flow.maybe = undefined;
  flow.dirty = false;
  flow.dirtyAt = undefined;
}

/** `with conn.transaction():` — a savepoint inside an open transaction, else its own transaction. */
export function enterTransaction(conn: Conn, file: string, form = '`with conn.transaction()`'): { savepoint: boolean } {
  const { flow } = conn;
  if (flow.explicit.length > 0) {
    flow.explicit.push({ ...flow.explicit[0] });
    return { savepoint: true };
  }
  if (flow.autocommit === false && flow.dirty === true) {
    flow.explicit.push({ id: implicitId(conn, file), form: conn.implicitForm });
    return { savepoint: true };
  }
  flow.explicit.push({ id: `${file}#${conn.id}.tx${++transactions}`, form });
  return { savepoint: false };
}

export function leaveTransaction(conn: Conn, savepoint: boolean): void {
  conn.flow.explicit.pop();
  if (!savepoint && conn.flow.explicit.length === 0) ended(conn, 'commit');
}

/** BEGIN sent as SQL on a connection in autocommit. */
export function beganBySql(conn: Conn, file: string): void {
  if (conn.flow.explicit.length > 0 || conn.flow.autocommit !== true) return;
  conn.flow.explicit.push({ id: `${file}#${conn.id}.tx${++transactions}`, form: 'BEGIN' });
}

export function endedBySql(conn: Conn, how: EndKind = 'unknown'): void {
  if (conn.flow.explicit.length > 0 && conn.flow.explicit[0].form === 'BEGIN') {
    conn.flow.explicit = [];
    ended(conn, how);
    return;
  }
  if (conn.flow.explicit.length === 0) ended(conn, how);
}
