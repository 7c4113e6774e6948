// Flask-SQLAlchemy: `db = SQLAlchemy(app)`, or `db = SQLAlchemy()` and
// `db.init_app(app)` later. The extension makes its engine with
// create_engine() from the app's config (SQLALCHEMY_DATABASE_URI,
// SQLALCHEMY_ENGINE_OPTIONS) and its own engine_options=: a QueuePool that
// rolls back every connection returned to it. `db.session` is a
// scoped_session (one Session per app context in 3.x, per thread in 2.x),
// removed at the context's teardown; like any Session it begins a
// transaction at its first statement and hands its connection back to the
// pool at commit()/rollback()/close(). `db.engine` is the engine itself,
// and `Model.query` is `db.session.query(Model)`. Read from Flask-SQLAlchemy
// 3.0.3 (Debian's python3-flask-sqlalchemy) and measured in
// test/proofs/py-flask-sqlalchemy.test.ts.
import { newConfigEntry, readDict } from '../../flow/config.ts';
import type { Binding, ConfigEntry, Conn, FileApi, Maker, PoolBinding, ReadContext, WalkApi } from '../../flow/types.ts';
import { callParts, keyword, type Node } from '../../syntax.ts';
import { dbapiOf, readEngineOptions } from './engines.ts';

/** The maker's name in the model: the extension, not an engine. */
export const FLASK_EXTENSION = 'flask_sqlalchemy.SQLAlchemy';

export const FLASK_MAKERS = ['flask_sqlalchemy.SQLAlchemy', 'flask_sqlalchemy.extension.SQLAlchemy'];

const isExtension = (pool: PoolBinding) => pool.entry?.maker.name === FLASK_EXTENSION;

/** `SQLAlchemy(app, engine_options={...}, session_options={...})`: the engine the extension makes for the app. */
export function readExtensionConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const given = keyword(args, 'engine_options');
  const options = given ? readDict(given, ctx) : new Map<string, Node>();
  // The app's SQLALCHEMY_ENGINE_OPTIONS are merged into these: where the file sets them, they may say anything.
  const configured = /\bSQLALCHEMY_ENGINE_OPTIONS\b/.test(ctx.text);
  readEngineOptions(entry, options === 'unknown' ? new Map() : options, options === 'unknown' || configured || args.some((a) => a.star === '**'), ctx);
  // SQLAlchemy 1.x's Session(autocommit=True) runs each statement alone unless begin() is called.
  const sessionOptions = keyword(args, 'session_options');
  const session = sessionOptions ? readDict(sessionOptions, ctx) : new Map<string, Node>();
  if (session === 'unknown' || session.has('autocommit') || session.has('bind')) entry.config.autocommit = 'unknown';
  const dialect = configuredDialect(ctx.text);
  if (dialect) dbapiOf(entry, dialect);
  return entry;
}

/** The DBAPI of the app's SQLALCHEMY_DATABASE_URI when this file sets it to literals that agree. */
function configuredDialect(text: string): 'psycopg2' | 'psycopg' | 'asyncpg' | 'pg8000' | undefined {
  const found = new Set<string>();
  for (const match of text.matchAll(/\bSQLALCHEMY_DATABASE_URI\b['"]?\]?\s*[=:]\s*[rRuU]?['"]([^'"]*)/g)) {
    const url = /^postgres(?:ql)?(?:\+(\w+))?:\/\//.exec(match[1]);
    if (!url) return undefined;
    found.add(url[1] ?? 'psycopg2');
  }
  const [only] = found;
  return found.size === 1 && (only === 'psycopg2' || only === 'psycopg' || only === 'pg8000') ? only : undefined;
}

/** `db.session`: the scoped Session; `db.engine`: the engine. */
export function extensionAttribute(pool: PoolBinding, attribute: string): Binding | undefined {
  if (!isExtension(pool)) return undefined;
  if (attribute === 'session') return { kind: 'factory', entry: pool.entry, scoped: true, driver: pool.driver };
  if (attribute === 'engine') return { kind: 'pool', entry: pool.entry, driver: pool.driver };
  return undefined;
}

/** `db.session()`: the Session of this context, the one `db.session` stands for. */
export function extensionMethod(walk: WalkApi, pool: PoolBinding, method: string): Binding | undefined {
  if (!isExtension(pool) || method !== 'session') return undefined;
  return { kind: 'conn', conn: walk.sessionOf({ entry: pool.entry, scoped: true, driver: pool.driver }) };
}

const SQLALCHEMY_NAME = /\b(\w+)\.(text|select|update|delete|insert)\s*\(/g;
const EXTENSION_USE = /\b(\w+)\.(session|Model|engine)\b/g;
/**
 * The `.attribute` text each match of the regex above holds: a file without any has none, and is not
 * run through a regex that tries every word of it (most Python files of a project never name them).
 */
const SQLALCHEMY_ATTRIBUTES = ['.text', '.select', '.update', '.delete', '.insert'];
const EXTENSION_ATTRIBUTES = ['.session', '.Model', '.engine'];
const mentions = (text: string, attributes: readonly string[]) => attributes.some((attribute) => text.includes(attribute));

/** The extensions a file makes or imports (read by aliasExtensions). */
const extensions = new WeakMap<FileApi, ConfigEntry[]>();

/**
 * `db.text(...)`, `db.select(Job)`: the extension's instance stands for the
 * names of the sqlalchemy module too (3.x's __getattr__, 2.x's copied
 * attributes), so the file's qualified names read them as SQLAlchemy's. For
 * an instance made here or imported from a project module.
 */
export function aliasExtensions(file: FileApi): void {
  const aliased = new Set(mentions(file.text, SQLALCHEMY_ATTRIBUTES) ? [...file.text.matchAll(SQLALCHEMY_NAME)].map((m) => m[1]) : []);
  const owners = new Set([...aliased, ...(mentions(file.text, EXTENSION_ATTRIBUTES) ? [...file.text.matchAll(EXTENSION_USE)].map((m) => m[1]) : [])]);
  const found: ConfigEntry[] = [];
  for (const name of owners) {
    const binding = file.globals.get(name) ?? (file.imports.fromImports.has(name) ? file.importedStatic(name) : undefined);
    if (binding?.kind !== 'pool' || binding.entry.maker.name !== FLASK_EXTENSION) continue;
    found.push(binding.entry);
    if (aliased.has(name)) file.imports.names.set(name, 'sqlalchemy');
  }
  extensions.set(file, found);
}

/**
 * `Job.query`: Flask-SQLAlchemy's `db.session.query(Job)` (a query_property
 * of the scoped Session): the Session of the file's one extension; when the
 * file names none or several, a scoped Session of an engine not known.
 */
export function modelQuerySession(walk: WalkApi): Conn {
  const found = extensions.get(walk.file) ?? [];
  return walk.sessionOf({ entry: found.length === 1 ? found[0] : undefined, scoped: true, driver: 'sqlalchemy' });
}
