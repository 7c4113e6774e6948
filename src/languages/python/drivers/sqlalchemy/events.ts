// SQLAlchemy event listeners as pool callbacks: `@event.listens_for(engine,
// "connect")` (and event.listen(engine, "checkout", fn)) on an engine, its
// pool or sync_engine, the Engine/Pool classes, or a Session/sessionmaker
// for "after_begin". "connect" runs once per new DBAPI connection
// (configure), "checkout"/"engine_connect" at every checkout, "checkin" and
// "reset" when it is returned, "after_begin"/"begin" inside every
// transaction the Session or Connection begins.
import type { ConnectionConfig } from '../../../../model/index.ts';
import type { ConfigEntry, FileApi } from '../../flow/types.ts';
import { argsOf, children, decoratorParts, positional, span, unwrap, type Node } from '../../syntax.ts';
import { staticEngine } from './sessions.ts';

/** SQLAlchemy events and the callback role they give (pool and connection events, session after_begin). */
const EVENTS: Record<string, { role: 'configure' | 'checkout' | 'reset'; connParam: number; dbapi: boolean; inTransaction?: boolean }> = {
  connect: { role: 'configure', connParam: 0, dbapi: true },
  first_connect: { role: 'configure', connParam: 0, dbapi: true },
  checkout: { role: 'checkout', connParam: 0, dbapi: true },
  checkin: { role: 'reset', connParam: 0, dbapi: true },
  reset: { role: 'reset', connParam: 0, dbapi: true },
  engine_connect: { role: 'checkout', connParam: 0, dbapi: false },
  begin: { role: 'checkout', connParam: 0, dbapi: false, inTransaction: true },
  after_begin: { role: 'checkout', connParam: 2, dbapi: false, inTransaction: true },
};

const LISTENS_FOR = new Set(['sqlalchemy.event.listens_for', 'sqlalchemy.event.api.listens_for']);
const LISTEN = new Set(['sqlalchemy.event.listen', 'sqlalchemy.event.api.listen']);

export function readListeners(host: FileApi): void {
  let depth = 0;
  const visit = (statements: Node[]) => {
    for (const statement of statements) {
      // A class of the module whose methods register listeners (`event.listen(self.engine, "checkout", self._on_checkout)`
      // in `__init__`): its methods, as the module's own functions.
      const cls = statement.name === 'ClassDefinition' ? statement : statement.name === 'DecoratedStatement' ? statement.getChild('ClassDefinition') : null;
      const classBody = depth === 0 ? cls?.getChild('Body') : undefined;
      if (classBody) {
        visit(children(classBody));
        continue;
      }
      if (statement.name === 'DecoratedStatement') {
        const def = statement.getChild('FunctionDefinition');
        if (!def) continue;
        for (const decorator of statement.getChildren('Decorator')) {
          const parts = decoratorParts(decorator, host.text);
          if (!parts?.args || !LISTENS_FOR.has(host.qualifyName(parts.name) ?? '')) continue;
          addListener(host, positional(parts.args, 0), positional(parts.args, 1), def, decorator);
        }
      } else if (statement.name === 'ExpressionStatement') {
        const call = unwrap(statement.firstChild);
        if (call?.name !== 'CallExpression' || !LISTEN.has(host.qualify(call.firstChild!) ?? '')) continue;
        const args = argsOf(call.lastChild, host.text);
        const fn = positional(args, 2);
        if (fn) addListener(host, positional(args, 0), positional(args, 1), fn, call);
      } else if (statement.name === 'IfStatement' || statement.name === 'TryStatement') {
        for (const body of statement.getChildren('Body')) visit(children(body));
      }
      // A function of the module that registers listeners when called (`def install_listeners(): @event.listens_for(engine, "connect") ...`).
      const def = statement.name === 'FunctionDefinition' ? statement : statement.name === 'DecoratedStatement' ? statement.getChild('FunctionDefinition') : null;
      const body = def?.getChild('Body');
      if (body && depth < 2) {
        depth++;
        visit(children(body));
        depth--;
      }
    }
  };
  visit(children(host.tree.topNode));
}

function addListener(host: FileApi, target: Node | undefined, eventNode: Node | undefined, fn: Node, at: Node): void {
  const event = eventNode ? /^['"](\w+)['"]$/.exec(host.text.slice(eventNode.from, eventNode.to))?.[1] : undefined;
  const known = event ? EVENTS[event] : undefined;
  if (!known || !target) return;
  const entry = staticEngine(host, target) ?? listenerEntry(host, at);
  entry.callbackArgs.push({
    role: known.role,
    node: fn,
    connParam: known.connParam,
    connDriver: known.dbapi ? (entry.dbapi ?? 'psycopg2') : 'sqlalchemy',
    // The DBAPI connection's transaction state there is SQLAlchemy's business: not read.
    autocommit: known.dbapi ? 'unknown' : known.inTransaction ? false : entry.config.autocommit,
    inTransaction: known.inTransaction ? `the transaction the \`${event}\` listener runs in` : undefined,
    event,
  });
}

/** The engine of listeners on a class (Engine, Pool, Session) or an engine this file cannot see: the file's only engine, else one standing for it. */
function listenerEntry(host: FileApi, at: Node): ConfigEntry {
  const engines = [...host.entries.values()].filter((e) => e.config.driver === 'sqlalchemy');
  if (engines.length === 1) return engines[0];
  const state = host.driverState('sqlalchemy', () => ({ synthetic: undefined as ConfigEntry | undefined }));
  if (state.synthetic) return state.synthetic;
  const config: ConnectionConfig = { id: `listener@${at.from}`, driver: 'sqlalchemy', kind: 'pool', span: span(at), preparedStatements: 'unknown', autocommit: 'unknown', callbacks: [] };
  state.synthetic = { config, maker: { kind: 'pool', driver: 'sqlalchemy', name: 'listener' }, threshold: { kind: 'default' }, callbackArgs: [] };
  host.entries.set(-1_000_000 - at.from, state.synthetic);
  host.model.connections.push(config);
  return state.synthetic;
}
