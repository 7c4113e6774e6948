// Functions of another module of the project that a file calls with one of
// its connections (`from app.queue import claim_next` then `claim_next(conn)`
// inside `async with conn.transaction():`): walked at the call, as functions
// of the file are, in the caller's transaction. What they run is the
// caller's: their SQL sites are recorded in the caller's file, at the call
// (their text is in the other module), and the job's work they do counts in
// the caller's transaction. SQL run on a connection the call hands, in a
// transaction or in a state unknown here too, goes to FileModel.calledSites
// (GuestCall.handsConnection): the rules that join one transaction read it
// there, the others read the function's own site in its module, so a claim
// helper is reported once. Their module is read once per file as a guest:
// its own names, imports and pools, with the caller's connection ids and
// transaction ids, so that nothing of it can be mistaken for the caller's.
import { spansAt } from '../../../model/spans.ts';
import { emptyFileModel, type FileModel } from '../../../model/index.ts';
import { dottedName, type Node } from '../syntax.ts';
import type { EngineFile, Guest, GuestCall, SiteMeta } from './engine-file.ts';
import type { Imports } from './imports.ts';
import { classFunction, moduleDef, type ModuleSource } from './project.ts';

/** The file that calls: its imports and the project modules it may read. */
export interface HostFile extends EngineFile {
  readonly imports: Imports;
  projectModule(module: string, level: number, from?: string): ModuleSource | undefined;
}

/** A file of the engine made for a module read as a guest (flow/file.ts's PythonFile, prepared but not run). */
export interface GuestEngineFile extends EngineFile {
  addSite(meta: SiteMeta): void;
  addCalledSite(meta: SiteMeta): void;
  nextConnId(): string;
}

type MakeFile = (model: FileModel, source: ModuleSource) => GuestEngineFile;

interface GuestState {
  file: GuestEngineFile;
  call?: GuestCall;
}

const GUESTS = new WeakMap<object, Map<string, GuestState>>();

/**
 * The def a call names in another module of the project (`claim(conn)` with `from app.jobs import claim`,
 * `jobs.claim(conn)` with `from app import jobs`, `Job.take()` with `from app.models import Job`; `named`: the name the
 * call stands for, when it goes through a class attribute holding it, `self.job_model.take()`), with the guest file it is walked in; undefined when the
 * name is not imported from a project module or the module has no such function.
 */
export function guestDef(host: HostFile, callee: Node, make: MakeFile, named?: string): Guest | undefined {
  const name = named ?? dottedName(callee, host.text);
  if (!name) return undefined;
  const parts = name.split('.');
  if (parts.length > 2) return undefined;
  const from = host.imports.fromImports.get(parts[0]);
  // `import app.jobs as jobs` then `jobs.claim(...)`: the module itself, when it is the project's.
  const whole = !from && parts.length === 2 ? host.imports.names.get(parts[0]) : undefined;
  if (!from && !whole) return undefined;
  // `from app import jobs` then `jobs.claim(...)`: the module app.jobs; `from app.jobs import claim`: app.jobs.
  let source = from
    ? parts.length === 1
      ? host.projectModule(from.module, from.level)
      : host.projectModule(from.module ? `${from.module}.${from.name}` : from.name, from.level)
    : host.projectModule(whole!, 0);
  let def = source ? moduleDef(source, parts.length === 1 ? from!.name : parts[1]) : undefined;
  // `from app.models import Job` then `Job.take()`: a classmethod or staticmethod of a class of app.models.
  if (!def && from && parts.length === 2) {
    const classes = host.projectModule(from.module, from.level);
    def = classes ? classFunction(classes, from.name, parts[1]) : undefined;
    if (def) source = classes;
  }
  if (!source || !def) return undefined;
  let guests = GUESTS.get(host);
  if (!guests) GUESTS.set(host, (guests = new Map()));
  let state = guests.get(source.path);
  if (!state) {
    const file = make(emptyFileModel(host.model.file, 'python', source.text), source);
    const made: GuestState = { file };
    // Its sites (and those of functions it walks at its calls) are the caller's, at the call; its connections are numbered with the caller's.
    file.addSite = (meta) => {
      if (!made.call) return;
      const moved = atCall(meta, made.call);
      if (moved.site.calledAt) host.addCalledSite(moved);
      else host.addSite(moved);
    };
    file.addCalledSite = (meta) => {
      if (made.call) host.addCalledSite(atCall(meta, made.call));
    };
    file.nextConnId = () => host.nextConnId();
    (file as { workIn: Set<string> }).workIn = host.workIn;
    guests.set(source.path, (state = made));
  }
  const guest = state;
  return {
    file: guest.file,
    def,
    enter: (call) => {
      guest.call = call;
    },
  };
}

/** A site the guest recorded, moved to the call: every span of its facts is the call's (`calledAt`); try statements are the caller's. */
function atCall(meta: SiteMeta, call: GuestCall): SiteMeta {
  const tries = meta.inTry.filter((t) => call.tries.includes(t));
  const site = spansAt(meta.site, call.span);
  if (call.handsConnection && site.scope.kind !== 'autocommit') site.calledAt = { ...call.span };
  const moved: SiteMeta = { ...meta, site, inTry: tries };
  if (meta.inHandler === undefined || meta.inHandler !== call.handler) delete moved.inHandler;
  return moved;
}
