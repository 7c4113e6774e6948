// Transaction state along a function's paths: for each connection the walk
// follows (a client checked out of a pool, a reserved connection, a query
// runner: whatever a driver module says is one), the set of states it may be
// in at a point — outside a transaction, inside the transaction that BEGIN at
// some place opened (reached normally, or on an error path), or unknown (a
// parameter: the caller decides).
import type { Conn, Tx } from './types.ts';

/**
 * One state a connection may be in. `tags` names the finally blocks this state
 * entered abruptly (by a throw or a return), as ",id,id,": after such a block
 * only the states that entered it normally go on, so one walk of the block
 * serves every way into it (walking it once per way is exponential in the
 * nesting of finally blocks).
 */
export type Atom = ({ kind: 'none' } | { kind: 'unknown' } | { kind: 'open'; tx: Tx; error: boolean }) & { tags?: string };

const keyOf = (a: Atom) => `${a.kind === 'open' ? `${a.tx.info.id}|${a.error}` : a.kind}|${a.tags ?? ''}`;

/** More states than this for one connection (deeply nested finally blocks): their tags are dropped. */
const MAX_ATOMS = 32;

export class State {
  reachable = true;
  readonly conns = new Map<Conn, Map<string, Atom>>();

  clone(): State {
    const s = new State();
    s.reachable = this.reachable;
    for (const [conn, atoms] of this.conns) s.conns.set(conn, new Map(atoms));
    return s;
  }

  set(conn: Conn, atom: Atom): void {
    this.conns.set(conn, new Map([[keyOf(atom), atom]]));
  }

  atoms(conn: Conn): Atom[] {
    return [...(this.conns.get(conn)?.values() ?? [])];
  }

  /** This state entering finally block `id` abruptly. */
  tagged(id: number): State {
    const s = this.clone();
    for (const [conn, atoms] of s.conns) {
      const marked = new Map<string, Atom>();
      for (const a of atoms.values()) {
        const m: Atom = { ...a, tags: `${a.tags ?? ','}${id},` };
        marked.set(keyOf(m), m);
      }
      s.conns.set(conn, marked);
    }
    return s;
  }

  /** After finally block `id`: the states that entered it abruptly go no further. */
  withoutTag(id: number, reachable: boolean): State {
    const s = new State();
    s.reachable = this.reachable && reachable;
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
    for (const [conn, atoms] of s.conns) {
      const marked = new Map<string, Atom>();
      for (const a of atoms.values()) {
        const m: Atom = a.kind === 'open' ? { ...a, error: true } : a;
        marked.set(keyOf(m), m);
      }
      s.conns.set(conn, marked);
    }
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
      for (const s of states) for (const [c, atoms] of s.conns) if (!dead.conns.has(c)) dead.conns.set(c, new Map(atoms));
      return dead;
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
    return out;
  }
}

function untagged(atoms: Map<string, Atom>): Map<string, Atom> {
  const out = new Map<string, Atom>();
  for (const a of atoms.values()) {
    const { tags: _, ...plain } = a;
    out.set(keyOf(plain as Atom), plain as Atom);
  }
  return out;
}

/** The one transaction all of a connection's states are in, or undefined. */
export function txOf(atoms: readonly Atom[]): Tx | undefined {
  if (atoms.length === 0) return undefined;
  const first = atoms[0];
  if (first.kind !== 'open') return undefined;
  return atoms.every((a) => a.kind === 'open' && a.tx === first.tx) ? first.tx : undefined;
}

export function allNone(atoms: readonly Atom[]): boolean {
  return atoms.length > 0 && atoms.every((a) => a.kind === 'none');
}
