// SQLAlchemy event listeners as pool callbacks: `@event.listens_for(engine,
// "connect")` (and event.listen(engine, "checkout", fn)) on an engine, its
// pool or sync_engine, the Engine/Pool classes, or a Session/sessionmaker
// for "after_begin". "connect" runs once per new DBAPI connection
// (configure), "checkout"/"engine_connect" at every checkout, "checkin" and
// "reset" when it is returned, "after_begin"/"begin" inside every
// transaction the Session or Connection begins.
import type { ConfigEntry, ReadContext } from './pool-config.ts';
import { SQLALCHEMY_EVENTS } from './drivers.ts';
import { argsOf, children, decoratorParts, positional, span, unwrap, type Node } from './syntax.ts';

export interface ListenerHost {
  readonly text: string;
  readonly tree: { topNode: Node };
  readonly entries: Map<number, ConfigEntry>;
  readonly readContext: ReadContext;
  readonly model: { connections: { id: string }[] };
  qualify(node: Node): string | undefined;
  /** A dotted name through the file's imports. */
  qualifyName(name: string): string | undefined;
  staticEngine(node: Node | undefined): ConfigEntry | undefined;
  resolveDef(expr: Node, at: Node): Node | undefined;
  /** An engine for listeners whose target is not an engine of this file (a class, an imported engine). */
  listenerEntry(at: Node): ConfigEntry;
}

const LISTENS_FOR = new Set(['sqlalchemy.event.listens_for', 'sqlalchemy.event.api.listens_for']);
const LISTEN = new Set(['sqlalchemy.event.listen', 'sqlalchemy.event.api.listen']);

export function readListeners(host: ListenerHost): void {
  const visit = (statements: Node[]) => {
    for (const statement of statements) {
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
    }
  };
  visit(children(host.tree.topNode));
}

function addListener(host: ListenerHost, target: Node | undefined, eventNode: Node | undefined, fn: Node, at: Node): void {
  const event = eventNode ? /^['"](\w+)['"]$/.exec(host.text.slice(eventNode.from, eventNode.to))?.[1] : undefined;
  const known = event ? SQLALCHEMY_EVENTS[event] : undefined;
  if (!known || !target) return;
  const entry = host.staticEngine(target) ?? host.listenerEntry(at);
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
  void span;
}
