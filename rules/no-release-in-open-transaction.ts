import { defineRule, type FileModel, type FunctionRef, type HandedValue, type ParameterRef } from '../src/model/index.ts';
import { crossFileParts, type Decision, type FileFacts } from '../src/model/cross-file.ts';
import { refMaker, type Ref } from '../src/model/queue.ts';

type Options = Record<string, never>;

type Target = HandedValue['to'];

interface ReleaseFacts {
  /** Releases this file's walk reached with a transaction open, and that BEGIN. */
  open: { at: Ref; begin: Ref; reason: 'error-path' | 'no-end' }[];
  /** Releases reached on the error path of a call handed the client outside a transaction. */
  afterCall: { at: Ref; to: Target; argument: number; property?: string; call: Ref }[];
  /** Functions that may throw with a connection parameter inside a transaction: their own BEGIN, or a call they hand it on to. */
  openOnThrow: { function: FunctionRef; parameter: number; property?: string; begin?: Ref; via?: { to: Target; argument: number; property?: string } }[];
  /** Functions (and callers' parameters) handed to a parameter of a project function: what a call of that parameter runs. */
  handed: { to: FunctionRef; argument: number; value: { function: FunctionRef } | { parameter: ParameterRef } }[];
}

function read(file: FileModel): ReleaseFacts {
  const ref = refMaker(file.text);
  const facts: ReleaseFacts = { open: [], afterCall: [], openOnThrow: [], handed: [] };
  for (const release of file.releases) {
    const open = release.openTransaction;
    if (open) facts.open.push({ at: ref(release.span), begin: ref(open.beginSpan), reason: open.reason });
    else if (release.afterCall) {
      const { to, argument, property } = release.afterCall;
      facts.afterCall.push({ at: ref(release.span), to, argument, ...(property !== undefined ? { property } : {}), call: ref(release.afterCall.span) });
    }
  }
  for (const o of file.openOnThrow ?? []) {
    const via = o.via ? { to: o.via.to, argument: o.via.argument, ...(o.via.property !== undefined ? { property: o.via.property } : {}) } : undefined;
    facts.openOnThrow.push({ function: o.function, parameter: o.parameter, ...(o.property !== undefined ? { property: o.property } : {}), ...(o.begin ? { begin: ref(o.begin) } : {}), ...(via ? { via } : {}) });
  }
  for (const h of file.handedValues ?? []) {
    if (!('function' in h.to) || h.rest || h.property !== undefined) continue;
    if (h.value.kind === 'function') facts.handed.push({ to: h.to.function, argument: h.argument, value: { function: h.value.function } });
    else if (h.value.kind === 'parameter' && h.value.of.property === undefined) facts.handed.push({ to: h.to.function, argument: h.argument, value: { parameter: h.value.of } });
  }
  return facts;
}

const same = (a: FunctionRef, b: FunctionRef) => a.module === b.module && a.at === b.at;

/** How many calls deep a connection is followed from the call a release follows (callback to helper to helper). */
const MAX_DEPTH = 6;

/**
 * A release after a call handed the client (`return await fn(client)` in a
 * wrapper whose `finally` releases): reported where a function that call runs
 * — a project function, or a callback the project's callers pass the wrapper —
 * may throw with the client inside a transaction it opened (a BEGIN helper
 * whose catch does not roll back), directly or through a function it hands
 * the client on to. A callback the scan cannot see, or a helper that rolls
 * back, says nothing.
 */
function afterCallFindings(files: readonly FileFacts<ReleaseFacts>[], place: (file: string, at: Ref, from: string) => string): Decision[] {
  const handed = files.flatMap(({ facts }) => facts.handed);
  const throwing = files.flatMap(({ file, facts }) => facts.openOnThrow.map((o) => ({ file, ...o })));
  /** The functions a call of `to` may run. */
  const targets = (to: Target, depth: number): FunctionRef[] => {
    if ('function' in to) return [to.function];
    if (depth > MAX_DEPTH) return [];
    const held = to.heldBy;
    if (held.property !== undefined) return [];
    const out: FunctionRef[] = [];
    for (const h of handed) {
      if (!same(h.to, held.function) || h.argument !== held.parameter) continue;
      if ('function' in h.value) out.push(h.value.function);
      else out.push(...targets({ heldBy: h.value.parameter }, depth + 1));
    }
    return out;
  };
  /** The BEGIN a function may throw after with parameter `parameter`'s connection still inside its transaction. */
  const leavesOpen = (fn: FunctionRef, parameter: number, property: string | undefined, depth: number, seen: Set<string>): { file: string; begin: Ref } | undefined => {
    const key = `${fn.module}@${fn.at}#${parameter}.${property ?? ''}`;
    if (depth > MAX_DEPTH || seen.has(key)) return undefined;
    seen.add(key);
    for (const o of throwing) {
      // The connection as handed: the argument itself, or the same property of an object literal.
      if (!same(o.function, fn) || o.parameter !== parameter || o.property !== property) continue;
      if (o.begin) return { file: o.file, begin: o.begin };
      if (!o.via) continue;
      for (const t of targets(o.via.to, depth + 1)) {
        const found = leavesOpen(t, o.via.argument, o.via.property, depth + 1, seen);
        if (found) return found;
      }
    }
    return undefined;
  };
  const out: Decision[] = [];
  for (const { file, facts } of files) {
    for (const r of facts.afterCall) {
      const seen = new Set<string>();
      const found = targets(r.to, 0).map((t) => leavesOpen(t, r.argument, r.property, 0, seen)).find((f) => f !== undefined);
      if (found) out.push({ file, at: r.at, messageId: 'callLeavesOpen', data: { call: place(file, r.call, file), where: place(found.file, found.begin, file) } });
    }
  }
  return out;
}

export default defineRule<Options, ReleaseFacts>({
  id: 'no-release-in-open-transaction',
  description: 'Disallow releasing a pooled client while its transaction may still be open',
  messages: {
    noEnd:
      "This release() can be reached after the BEGIN at line {{line}} without COMMIT or ROLLBACK: node-postgres hands the connection to the next job still inside that transaction, with this job's locks, writes and local tenant setting (measured: the next checkout saw tenant 1's 20,000 rows). COMMIT or ROLLBACK on every path before releasing, or release(err) to destroy the connection.",
    errorPath:
      "When the job fails after the BEGIN at line {{line}}, this release() runs with the transaction still open — no path of the error rolls it back: node-postgres hands the connection to the next job inside that transaction, with this job's locks and local tenant setting (measured: the next checkout saw tenant 1's 20,000 rows). ROLLBACK in a catch before releasing, or pass the error to release(err) so the connection is destroyed.",
    callLeavesOpen:
      "When the call at {{call}} fails inside the transaction the BEGIN at {{where}} opens on this client (nothing on the way rolls it back), this release() runs with that transaction still open: node-postgres hands the connection to the next job inside it, and the next job's queries fail ('current transaction is aborted') or run in the leftover transaction (measured: the next checkout stayed in the transaction). ROLLBACK in a catch where the transaction is opened, or pass the error to release(err) here so the connection is destroyed.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['typescript'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // A release; a BEGIN helper a wrapper's callback calls, in a module with no release of its own; a callback typed with the client.
  triggers: ['.release', /['"\x60]\s*(?:begin|start\s+transaction)/i, /poolclient/i],
  ...crossFileParts<Options, ReleaseFacts>(read, (files, { place }) => {
    const out: Decision[] = [];
    for (const { file, facts } of files) {
      for (const o of facts.open) out.push({ file, at: o.at, messageId: o.reason === 'no-end' ? 'noEnd' : 'errorPath', data: { line: o.begin.loc.line } });
    }
    out.push(...afterCallFindings(files, place));
    return out;
  }),
});
