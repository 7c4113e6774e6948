// SQLAlchemy sessions: sessionmaker / async_sessionmaker / scoped_session
// (calling one gives a Session; a scoped one is also the thread's Session
// itself) and Session(engine), bound to the engine they name — in this
// file, in a walk, or in the project module a name is imported from.
import type { Binding, ConfigEntry, FileApi, ReadContext, StaticBinding, WalkApi } from '../../flow/types.ts';
import { callParts, dottedName, keyword, positional, unwrap, type Node } from '../../syntax.ts';
import type { ImportedSource } from '../../flow/driver-api.ts';

/** sessionmaker / async_sessionmaker / scoped_session: calling one gives a Session. */
const SESSION_FACTORIES = new Set([
  'sqlalchemy.orm.sessionmaker',
  'sqlalchemy.orm.session.sessionmaker',
  'sqlalchemy.ext.asyncio.async_sessionmaker',
  'sqlalchemy.orm.scoped_session',
  'sqlalchemy.ext.asyncio.async_scoped_session',
]);

/** Session classes: `Session(engine)`, `AsyncSession(engine)`. */
const SESSION_CLASSES = new Set([
  'sqlalchemy.orm.Session',
  'sqlalchemy.orm.session.Session',
  'sqlalchemy.ext.asyncio.AsyncSession',
  'sqlmodel.Session',
  'sqlmodel.ext.asyncio.session.AsyncSession',
]);

/** The engine entry a module-level name (or `engine.sync_engine`, `engine.pool`) stands for. */
export function staticEngine(file: FileApi, node: Node | undefined): ConfigEntry | undefined {
  const name = dottedName(unwrap(node), file.text)?.replace(/\.(sync_engine|pool|engine)$/, '');
  const binding = name ? (file.globals.get(name) ?? (name.includes('.') ? undefined : file.importedStatic(name))) : undefined;
  if (binding?.kind === 'pool' && binding.entry.config.driver === 'sqlalchemy') return binding.entry;
  if (binding?.kind === 'factory' || binding?.kind === 'session') return binding.entry;
  return undefined;
}

/**
 * sessionmaker(bind=engine) / scoped_session(sessionmaker(...)) / Session(engine):
 * a session factory or a session, bound to the engine `engineOf` finds.
 */
function sessionMaker(file: FileApi, call: Node, engineOf: (node: Node | undefined) => ConfigEntry | undefined): StaticBinding | undefined {
  const parts = callParts(call, file.text);
  const qualified = parts ? file.qualify(parts.callee) : undefined;
  if (!parts || !qualified) return undefined;
  const bindArg = keyword(parts.args, 'bind') ?? positional(parts.args, 0);
  if (SESSION_FACTORIES.has(qualified)) {
    const scoped = /scoped_session$/.test(qualified);
    const inner = scoped ? unwrap(positional(parts.args, 0) ?? keyword(parts.args, 'session_factory')) : undefined;
    const innerFactory = inner?.name === 'CallExpression' ? sessionMaker(file, inner, engineOf) : undefined;
    const entry = innerFactory && innerFactory.kind === 'factory' ? innerFactory.entry : scoped ? staticEngine(file, inner) : engineOf(bindArg);
    return { kind: 'factory', entry, scoped, driver: 'sqlalchemy' };
  }
  if (SESSION_CLASSES.has(qualified)) return { kind: 'session', entry: engineOf(bindArg), driver: 'sqlalchemy' };
  return undefined;
}

export function staticBinding(file: FileApi, call: Node): StaticBinding | undefined {
  return sessionMaker(file, call, (n) => staticEngine(file, n));
}

/** A session factory or Session made in a project module, with the engine it binds there. */
export function importedBinding(source: ImportedSource, call: Node, qualified: string): StaticBinding | undefined {
  if (!SESSION_FACTORIES.has(qualified) && !SESSION_CLASSES.has(qualified)) return undefined;
  const parts = callParts(call, source.text)!;
  const engineOf = (node: Node | undefined): ConfigEntry | undefined => {
    const engineName = dottedName(unwrap(node), source.text);
    if (!engineName) return undefined;
    const found = source.hasName(engineName) ? source.bindingOf(engineName) : undefined;
    return found && found.kind !== 'connect' ? found.entry : undefined;
  };
  const bindArg = keyword(parts.args, 'bind') ?? positional(parts.args, 0);
  const scoped = /scoped_session$/.test(qualified);
  if (SESSION_CLASSES.has(qualified)) return { kind: 'session', entry: engineOf(bindArg), driver: 'sqlalchemy' };
  if (scoped) {
    const inner = unwrap(positional(parts.args, 0));
    const innerName = inner?.name === 'VariableName' ? source.text.slice(inner.from, inner.to) : undefined;
    const factory = innerName ? source.bindingOf(innerName) : undefined;
    if (factory?.kind === 'factory') return { kind: 'factory', entry: factory.entry, scoped: true, driver: 'sqlalchemy' };
    const innerParts = inner ? callParts(inner, source.text) : undefined;
    const innerBind = innerParts ? (keyword(innerParts.args, 'bind') ?? positional(innerParts.args, 0)) : undefined;
    return { kind: 'factory', entry: engineOf(innerBind), scoped: true, driver: 'sqlalchemy' };
  }
  return { kind: 'factory', entry: engineOf(bindArg), scoped: false, driver: 'sqlalchemy' };
}

/** The engine entry an expression of this walk stands for (a name bound to an engine or a session factory). */
function engineEntry(walk: WalkApi, node: Node | undefined): ConfigEntry | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  if (expr.name === 'CallExpression') {
    const made = walk.valueBinding(expr, false);
    return made?.kind === 'pool' || made?.kind === 'factory' ? made.entry : made?.kind === 'conn' ? made.conn.entry : undefined;
  }
  const name = dottedName(expr, walk.text)?.replace(/\.(sync_engine|pool|engine)$/, '');
  const binding = name ? walk.lookup(name) : undefined;
  if (binding?.kind === 'pool' || binding?.kind === 'factory') return binding.entry;
  return undefined;
}

/** A session factory or a new Session made in a walk. */
export function callBinding(walk: WalkApi, call: Node): Binding | undefined {
  const made = sessionMaker(walk.file, call, (n) => engineEntry(walk, n));
  if (made?.kind === 'factory') return { kind: 'factory', entry: made.entry, scoped: made.scoped, driver: 'sqlalchemy' };
  if (made?.kind === 'session') return { kind: 'conn', conn: walk.sessionOf({ entry: made.entry, scoped: false, driver: 'sqlalchemy' }) };
  return undefined;
}

export function isolationIsAutocommit(node: Node, ctx: ReadContext): boolean | 'unknown' {
  const expr = unwrap(node);
  if (!expr) return 'unknown';
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? isolationIsAutocommit(value, ctx) : 'unknown';
  }
  const match = /^['"]([\w ]+)['"]$/.exec(ctx.text.slice(expr.from, expr.to));
  if (!match) return 'unknown';
  return match[1].toUpperCase() === 'AUTOCOMMIT';
}
