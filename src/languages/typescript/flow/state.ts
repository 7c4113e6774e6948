// Transaction state along a function's paths: for each connection the walk
// follows (a client checked out of a pool, a reserved connection, a query
// runner: whatever a driver module says is one), the set of states it may be
// in at a point — outside a transaction, inside the transaction that BEGIN at
// some place opened (reached normally, or on an error path), or unknown (a
// parameter: the caller decides). A state also knows the boolean flags the
// code keeps beside its connections (`let inTx = false; BEGIN; inTx = true`):
// each state carries the values the flags had on its paths, so a branch on a
// flag (`if (inTx) ROLLBACK`) goes on with the states it can be taken in.
import type { CallHanding } from '../../../model/index.ts';
import type { Conn, Tx } from './types.ts';

/**
 * One state a connection may be in. An unknown state marked `entry` is a
 * parameter's as its caller handed it, not yet moved by this function (no
 * BEGIN, COMMIT or call the walk does not follow has touched it): whatever the
 * caller's connection was in at the call. `tags` names the finally blocks this state
 * entered abruptly (by a throw or a return), as ",id,id,": after such a block
 * only the states that entered it normally go on, so one walk of the block
 * serves every way into it (walking it once per way is exponential in the
 * nesting of finally blocks). A 'none' state with `via` is the error path
 * of a call handed the connection outside any transaction: outside one as far
 * as this function goes, unless that call's error leaves one open (the release
 * rule joins that across functions).
 */
export type Atom = ({ kind: 'none'; via?: CallHanding } | { kind: 'unknown'; entry?: true } | { kind: 'open'; tx: Tx; error: boolean }) & { tags?: string; flags?: Flags };

/** Flag key -> its value on the paths of a state. */
export type Flags = Readonly<Record<string, boolean>>;

const flagsKey = (flags: Flags | undefined) => (flags ? Object.keys(flags).sort().map((k) => `${k}=${flags[k] ? 1 : 0}`).join(',') : '');
const keyOf = (a: Atom) =>
  `${a.kind === 'open' ? `${a.tx.info.id}|${a.error}` : a.kind === 'unknown' && a.entry ? 'entry' : a.kind === 'none' && a.via ? `none@${a.via.span.start}` : a.kind}|${a.tags ?? ''}|${flagsKey(a.flags)}`;

function withFlag(flags: Flags | undefined, key: string, value: boolean | undefined): Flags | undefined {
  const out: Record<string, boolean> = { ...flags };
  if (value === undefined) delete out[key];
  else out[key] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** More states than this for one connection (deeply nested finally blocks): their tags are dropped. */
const MAX_ATOMS = 32;

export class State {
  reachable = true;
  /**
   * Each connection's states. A connection's map is never changed once it is here (every change puts
   * a new one in its place), so states share them: a clone, made at every call in a try block and at
   * every branch, copies no connection's map.
   */
  readonly conns = new Map<Conn, ReadonlyMap<string, Atom>>();
  /** Flags whose value is the same on every path of this state: a connection first seen here starts with them. */
  readonly known = new Map<string, boolean>();

  clone(): State {
    const s = new State();
    s.reachable = this.reachable;
    for (const [conn, atoms] of this.conns) s.conns.set(conn, atoms);
    for (const [k, v] of this.known) s.known.set(k, v);
    return s;
  }

  /** The connection is now in `atom`, on each of its paths (whose flags it keeps). */
  set(conn: Conn, atom: Atom): void {
    const paths = new Map<string, Flags | undefined>();
    for (const a of this.conns.get(conn)?.values() ?? []) paths.set(flagsKey(a.flags), a.flags);
    if (paths.size === 0) paths.set('', this.known.size > 0 ? Object.fromEntries(this.known) : undefined);
    const atoms = new Map<string, Atom>();
    for (const flags of paths.values()) {
      const { flags: _, ...plain } = atom;
      const a: Atom = flags ? { ...plain, flags } : (plain as Atom);
      atoms.set(keyOf(a), a);
    }
    this.conns.set(conn, atoms);
  }

  /** A flag set to a value (undefined: a value the walk cannot tell) on every path. */
  setFlag(key: string, value: boolean | undefined): void {
    if (value === undefined) this.known.delete(key);
    else this.known.set(key, value);
    for (const [conn, atoms] of this.conns) this.conns.set(conn, remap(atoms, (a) => ({ ...a, flags: withFlag(a.flags, key, value) })));
  }

  /** The paths on which a flag has a value: a branch taken when it has it. */
  assume(key: string, value: boolean): void {
    if (this.known.get(key) === !value) {
      this.reachable = false;
      return;
    }
    this.known.set(key, value);
    for (const [conn, atoms] of this.conns) {
      const kept = new Map<string, Atom>();
      for (const a of atoms.values()) {
        if (a.flags?.[key] === !value) continue;
        const m: Atom = { ...a, flags: withFlag(a.flags, key, value) };
        kept.set(keyOf(m), m);
      }
      this.conns.set(conn, kept);
    }
  }

  atoms(conn: Conn): Atom[] {
    return [...(this.conns.get(conn)?.values() ?? [])];
  }

  /** This state entering finally block `id` abruptly. */
  tagged(id: number): State {
    const s = this.clone();
    for (const [conn, atoms] of s.conns) s.conns.set(conn, remap(atoms, (a) => ({ ...a, tags: `${a.tags ?? ','}${id},` })));
    return s;
  }

  /** After finally block `id`: the states that entered it abruptly go no further. */
  withoutTag(id: number, reachable: boolean): State {
    const s = new State();
    s.reachable = this.reachable && reachable;
    for (const [k, v] of this.known) s.known.set(k, v);
    const tag = `,${id},`;
    for (const [conn, atoms] of this.conns) {
      const kept = new Map<string, Atom>();
      for (const [k, a] of atoms) if (!a.tags?.includes(tag)) kept.set(k, a);
      if (kept.size > 0) s.conns.set(conn, kept);
    }
    return s;
  }

  /** This state as reached by an exception: open transactions are now on an error path. */
  asError(): State {
    const s = this.clone();
    for (const [conn, atoms] of s.conns) s.conns.set(conn, remap(atoms, (a) => (a.kind === 'open' ? { ...a, error: true } : a)));
    return s;
  }

  static unreachable(): State {
    const s = new State();
    s.reachable = false;
    return s;
  }

  /** The union of the states of several paths (unreachable ones left out). */
  static merge(states: readonly State[]): State {
    const live = states.filter((s) => s.reachable);
    if (live.length === 0) {
      const dead = State.unreachable();
      // Keep what the connections were, so dead code still reads sensibly.
      for (const s of states) for (const [c, atoms] of s.conns) if (!dead.conns.has(c)) dead.conns.set(c, atoms);
      return dead;
    }
    if (live.length === 1) {
      // One path: its states as they are (the union below would copy each map as it is).
      const out = new State();
      for (const [conn, atoms] of live[0].conns) out.conns.set(conn, atoms.size > MAX_ATOMS ? untagged(atoms) : atoms);
      for (const [k, v] of live[0].known) out.known.set(k, v);
      return out;
    }
    const out = new State();
    const conns = new Set(live.flatMap((s) => [...s.conns.keys()]));
    for (const conn of conns) {
      const atoms = new Map<string, Atom>();
      for (const s of live) {
        const own = s.conns.get(conn);
        // A path that never saw the connection: it is in whatever state it started.
        if (!own) continue;
        for (const [k, a] of own) atoms.set(k, a);
      }
      out.conns.set(conn, atoms.size > MAX_ATOMS ? untagged(atoms) : atoms);
    }
    for (const [k, v] of live[0].known) if (live.every((s) => s.known.get(k) === v)) out.known.set(k, v);
    return out;
  }
}

function remap(atoms: ReadonlyMap<string, Atom>, f: (a: Atom) => Atom): Map<string, Atom> {
  const out = new Map<string, Atom>();
  for (const a of atoms.values()) {
    const m = f(a);
    out.set(keyOf(m), m);
  }
  return out;
}

/** Too many states: their tags and flags are dropped (what may happen is kept, not on which path). */
function untagged(atoms: ReadonlyMap<string, Atom>): Map<string, Atom> {
  return remap(atoms, (a) => {
    const { tags: _, flags: __, ...plain } = a;
    return plain as Atom;
  });
}

/** The one transaction all of a connection's states are in, or undefined. */
export function txOf(atoms: readonly Atom[]): Tx | undefined {
  if (atoms.length === 0) return undefined;
  const first = atoms[0];
  if (first.kind !== 'open') return undefined;
  return atoms.every((a) => a.kind === 'open' && a.tx === first.tx) ? first.tx : undefined;
}

/** Every state is the one the caller handed the connection in. */
export function allEntry(atoms: readonly Atom[]): boolean {
  return atoms.length > 0 && atoms.every((a) => a.kind === 'unknown' && a.entry);
}

/** A call the walk does not follow was handed the connection: what its caller handed in is no longer what it is in. */
export function leftEntry(state: State, conn: Conn): void {
  const atoms = state.atoms(conn);
  if (!atoms.some((a) => a.kind === 'unknown' && a.entry)) return;
  const out = new Map<string, Atom>();
  for (const a of atoms) {
    const m: Atom = a.kind === 'unknown' ? { kind: 'unknown', ...(a.tags ? { tags: a.tags } : {}), ...(a.flags ? { flags: a.flags } : {}) } : a;
    out.set(keyOf(m), m);
  }
  state.conns.set(conn, out);
}

export function allNone(atoms: readonly Atom[]): boolean {
  return atoms.length > 0 && atoms.every((a) => a.kind === 'none');
}
