// Django's database connections, as the model sees them: one connection per
// alias and thread (django.db.connection, connections["alias"]), in
// autocommit by default; transaction.atomic() (a `with` block or a
// decorator) is a transaction, nested ones are savepoints. Whether a
// session setting outlives the request depends on CONN_MAX_AGE
// (settings.ts). A management command runs in one process with no request
// cycle, so its connection serves every job it runs whatever CONN_MAX_AGE
// says.
import type { ConnectionConfig } from '../../../../model/index.ts';
import { enterTransaction, initialFlow } from '../../flow/scopes.ts';
import type { Conn, FileApi, WalkApi } from '../../flow/types.ts';
import { argsOf, children, decoratorParts, keyword, positional, span, unwrap, type Node } from '../../syntax.ts';
import { djangoSettings, type DjangoSettings } from './settings.ts';

export class DjangoContext {
  private readonly configs = new Map<string, ConnectionConfig>();
  private settings?: DjangoSettings;
  /** The file defines a management command: one long-running process, no request cycle. */
  private readonly command: boolean;

  constructor(private readonly host: FileApi) {
    this.command = /\bBaseCommand\b/.test(host.text) && /\bdef\s+handle\s*\(/.test(host.text);
  }

  /**
   * connection_created signal handlers (`@receiver(connection_created)`,
   * `connection_created.connect(fn)`): they run once per new connection,
   * like a pool's configure callback.
   */
  connectionCreatedHandlers(resolve: (expr: Node, at: Node) => Node | undefined): Node[] {
    const handlers: Node[] = [];
    const isSignal = (node: Node | undefined) => !!node && this.host.qualify(node) === 'django.db.backends.signals.connection_created';
    for (const statement of children(this.host.tree.topNode)) {
      if (statement.name === 'DecoratedStatement') {
        const def = statement.getChild('FunctionDefinition');
        const listens = statement.getChildren('Decorator').some((d) => {
          const parts = decoratorParts(d, this.host.text);
          return parts && this.host.qualifyName(parts.name) === 'django.dispatch.receiver' && isSignal(positional(parts.args ?? [], 0));
        });
        if (def && listens) handlers.push(def);
      } else if (statement.name === 'ExpressionStatement') {
        const call = unwrap(statement.firstChild);
        const callee = call?.name === 'CallExpression' ? call.firstChild : undefined;
        if (callee?.name !== 'MemberExpression' || this.host.text.slice(callee.lastChild!.from, callee.lastChild!.to) !== 'connect' || !isSignal(callee.firstChild ?? undefined)) continue;
        const fn = positional(argsOf(call!.lastChild, this.host.text), 0);
        const def = fn ? resolve(fn, fn) : undefined;
        if (def?.name === 'FunctionDefinition') handlers.push(def);
      }
    }
    return handlers;
  }

  /** The configuration of an alias's connection (made once per file). */
  configFor(alias: string, at: Node): ConnectionConfig {
    return this.config(alias, at);
  }

  private config(alias: string, at: Node): ConnectionConfig {
    const known = this.configs.get(alias);
    if (known) return known;
    this.settings ??= djangoSettings(this.host.model.file);
    if (this.settings.file) this.host.dependOn([this.settings.file]);
    const config: ConnectionConfig = {
      id: `django:${alias}`,
      driver: 'django',
      kind: 'pool',
      span: span(at),
      preparedStatements: 'no',
      preparedReason: "Django's PostgreSQL backend binds parameters on the client and prepares nothing",
      autocommit: this.settings.atomicRequests ? 'unknown' : true,
      callbacks: [],
    };
    const age = this.settings.connMaxAge;
    if (this.command) config.reuse = 'shared';
    else if (age === 0) config.reuse = 'no-reuse';
    else if (age === null || (typeof age === 'number' && age > 0)) config.reuse = 'shared';
    this.configs.set(alias, config);
    return config;
  }

  /** `connection` / `connections["alias"]` of django.db, as a connection of this walk. */
  connectionOf(expr: Node, walk: WalkApi): Conn | undefined {
    const qualified = this.host.qualify(expr);
    if (qualified === 'django.db.connection') return this.connectionFor(walk, 'default', expr);
    if (expr.name === 'MemberExpression' && expr.lastChild?.name === ']') {
      const object = expr.firstChild;
      if (!object || this.host.qualify(object) !== 'django.db.connections') return undefined;
      const key = children(expr).find((c, i, all) => all[i - 1]?.name === '[');
      const alias = key ? /^['"](\w+)['"]$/.exec(this.host.text.slice(key.from, key.to))?.[1] : undefined;
      return this.connectionFor(walk, alias ?? 'default', expr);
    }
    return undefined;
  }

  /** The walk's connection for an alias (one per walk), inside the transaction of an @atomic def. */
  connectionFor(walk: WalkApi, alias = 'default', at?: Node): Conn {
    const key = `django:${alias}`;
    const known = walk.env.get(key) as { kind: 'conn'; conn: Conn } | undefined;
    if (known) return known.conn;
    const config = this.config(alias, at ?? this.host.tree.topNode);
    const conn = this.host.newConnection({
      driver: 'django',
      use: { kind: 'pooled-client', configId: config.id },
      origin: 'django',
      flow: initialFlow(config.autocommit),
      shared: true,
      threadBound: true,
    });
    walk.conns.add(conn);
    walk.env.set(key, { kind: 'conn', conn });
    const def = walk.info.def;
    if (def && this.atomicDecorator(def)) enterTransaction(conn, this.host.model.file, '`@transaction.atomic`');
    return conn;
  }

  /** In a def decorated `@transaction.atomic`: its connection, in that transaction, before any use names it. */
  atomicDefConnection(walk: WalkApi): void {
    const def = walk.info.def;
    if (def && this.atomicDecorator(def)) this.connectionFor(walk, 'default', def);
  }

  /** `with transaction.atomic(using=...)`: the connection whose transaction it opens. */
  atomicOf(item: Node, walk: WalkApi): Conn | undefined {
    const expr = unwrap(item);
    if (!expr) return undefined;
    const callee = expr.name === 'CallExpression' ? expr.firstChild : expr;
    if (!callee || this.host.qualify(callee) !== 'django.db.transaction.atomic') return undefined;
    const args = expr.name === 'CallExpression' ? argsOf(expr.lastChild, this.host.text) : [];
    const using = unwrap(keyword(args, 'using') ?? positional(args, 0));
    const alias = using ? /^['"](\w+)['"]$/.exec(this.host.text.slice(using.from, using.to))?.[1] : undefined;
    return this.connectionFor(walk, alias ?? 'default', expr);
  }

  private atomicDecorator(def: Node): boolean {
    const decorated = def.parent;
    if (decorated?.name !== 'DecoratedStatement') return false;
    return decorated.getChildren('Decorator').some((d) => {
      const parts = decoratorParts(d, this.host.text);
      return !!parts && this.host.qualifyName(parts.name) === 'django.db.transaction.atomic';
    });
  }

  finish(): void {
    for (const config of this.configs.values()) this.host.model.connections.push(config);
  }
}
