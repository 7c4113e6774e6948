// The file as the engine's walks see it: what flow/file.ts gives the walks
// of its bodies (flow/walk.ts) on top of what driver modules see (FileApi).
import type { Driver, HostParam, SqlSite } from '../../../model/index.ts';
import type { FrontEndOptions } from '../../types.ts';
import type { ModelIndex } from '../orm/models.ts';
import type { Node } from '../syntax.ts';
import type { FileDriver } from './driver-api.ts';
import type { ResolveContext } from './strings.ts';
import type { ConfigEntry, Conn, FileApi, StaticBinding } from './types.ts';
import type { PassedArgument } from './project-callers.ts';

/** A site the walk recorded, with where it is in try statements (for one-transaction jobs). */
export interface SiteMeta {
  site: SqlSite;
  /** Try statements (by offset) whose body the site is in. */
  inTry: number[];
  /** The try statement whose except handler the site is in. */
  inHandler?: number;
  /** The implicit transactions the site may run in, where paths disagree (an except handler after a commit in the try). */
  mayBeIn?: string[];
  /** The connection it ran on. */
  conn?: Conn;
  /**
   * The except handler it is in goes on with the same transaction open (no
   * raise, no rollback): what it wrote commits with that transaction.
   */
  handlerGoesOn?: boolean;
}

/** Where a caller is when it calls a function of another module (guest-file.ts): the call's span, and the try statements and handler around it. */
export interface GuestCall {
  span: { start: number; end: number };
  tries: readonly number[];
  handler: number | undefined;
  /**
   * The call hands the function a connection: its module's own walk reads the same SQL on that parameter,
   * so what it runs here in a transaction, or in a state this walk does not know either, is the caller's
   * only as run there (`FileModel.calledSites`, read by the rules that join one transaction). In
   * autocommit, or walked for the thread's transaction only (Django's atomic block around a call handed
   * none), it stays among the caller's sites: the module's own walk does not know that state.
   */
  handsConnection: boolean;
}

/** A function of another module of the project, with the file it is walked in at a call of this file (guest-file.ts). */
export interface Guest {
  file: EngineFile;
  def: Node;
  /** Records what the next walk of the def runs as the caller's, at this call. */
  enter(call: GuestCall): void;
}

/** The file as the engine's walks see it (flow/file.ts). */
export interface EngineFile extends FileApi {
  readonly options: FrontEndOptions;
  readonly classOfDef: Map<number, string>;
  readonly classAttrs: Map<string, Map<string, StaticBinding>>;
  readonly walkedAtCall: Set<number>;
  /** Defs walked in place only for the thread's transaction, and defs also called where they were not: walked on their own unless only the first. */
  readonly threadInlined: Set<number>;
  readonly calledOutside: Set<number>;
  readonly workIn: Set<string>;
  /** The file imports a driver whose connections come in as parameters. */
  readonly importsDriver: boolean;
  readonly drivers: readonly FileDriver[];
  readonly models: ModelIndex;
  localValue(node: Node): Node | undefined;
  /** What every call of a module-level def of this file in the project passes for a parameter (project-callers.ts). */
  projectArguments(def: Node, name: string): PassedArgument[] | undefined;
  /** The literal a project module binds a name this file imports (`from app.settings import LEASE_MINUTES`). */
  importedLiteral(name: string): HostParam | undefined;
  /** The expression `x.name` stands for (a class attribute, an attribute set once, a property's one return). */
  memberValue(node: Node): Node | undefined;
  /** The method of a class of this file that a call on one of its instances names (`self.notifier.send`). */
  memberMethod(callee: Node, at: Node): Node | undefined;
  /** A name of the class body that a method's default value names (`minutes=LEASE_MINUTES` in the class). */
  classConstant(name: string, at: Node): Node | undefined;
  resolveContext(): ResolveContext;
  enclosingClass(at: Node): string | undefined;
  addSite(meta: SiteMeta): void;
  /** A site of another module's function run at a call of this file (guest-file.ts): `FileModel.calledSites`. */
  addCalledSite(meta: SiteMeta): void;
  /** What a call of a function imported from a project module makes, when it returns a maker call. */
  importedFactory(name: string): StaticBinding | undefined;
  readonly metas: readonly SiteMeta[];
  /** A function of another module of the project that a call names, to walk at the call (guest-file.ts). */
  guestDef?(callee: Node, name?: string): Guest | undefined;
  nextConnId(): string;
  /** The config standing for a driver's pool seen only as an annotated parameter. */
  assumedPool(driver: Driver, at: Node): ConfigEntry | undefined;
  /** The config standing for a driver's connection handed in as a parameter, when every pool the project makes with it agrees (project-pools.ts). */
  handedInPool(driver: Driver, at: Node): ConfigEntry | undefined;
}
