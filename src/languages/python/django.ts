// Django's database connections, as the model sees them: one connection per
// alias and thread (django.db.connection, connections["alias"]), in
// autocommit by default; transaction.atomic() (a `with` block or a
// decorator) is a transaction, nested ones are savepoints. Whether a
// session setting outlives the request depends on CONN_MAX_AGE, read from
// the project's settings: 0 (the default) closes the connection at the end
// of every request (and of every Celery task), so nothing is reused; a
// positive age or None keeps it for the next request. A management command
// runs in one process with no request cycle, so its connection serves every
// job it runs whatever CONN_MAX_AGE says.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfigText } from '../../scan/read-file.ts';
import type { ConnectionConfig } from '../../model/index.ts';
import { projectRoot } from './project.ts';
import { enterTransaction, initialFlow, type Conn } from './scopes.ts';
import { argsOf, children, decoratorParts, keyword, positional, span, unwrap, type Node } from './syntax.ts';

export interface DjangoSettings {
  /** CONN_MAX_AGE of the default database: a number of seconds, null (for ever), undefined when not read. */
  connMaxAge: number | null | undefined;
  atomicRequests: boolean;
  /** The settings file it was read from. */
  file?: string;
}

const settingsCache = new Map<string, DjangoSettings>();

/** The project's Django settings: the module manage.py names, else the settings.py files near the root. */
export function djangoSettings(file: string): DjangoSettings {
  const root = projectRoot(file);
  const cached = settingsCache.get(root);
  if (cached) return cached;
  const settings: DjangoSettings = { connMaxAge: undefined, atomicRequests: false };
  for (const path of settingsFiles(root)) {
    let text = '';
    try {
      text = readConfigText(path);
    } catch {
      continue;
    }
    if (!/DATABASES|CONN_MAX_AGE/.test(text)) continue;
    settings.file = path;
    const age = /["']?CONN_MAX_AGE["']?\s*[:=]\s*([^,\n}#]+)/.exec(text);
    if (!age) settings.connMaxAge = 0;
    else {
      const value = age[1].trim();
      settings.connMaxAge = /^\d+$/.test(value) ? Number(value) : value === 'None' ? null : undefined;
    }
    settings.atomicRequests = /["']?ATOMIC_REQUESTS["']?\s*[:=]\s*True/.test(text);
    break;
  }
  settingsCache.set(root, settings);
  return settings;
}

export function clearDjangoCache(): void {
  settingsCache.clear();
}

function settingsFiles(root: string): string[] {
  const found: string[] = [];
  const manage = join(root, 'manage.py');
  if (existsSync(manage)) {
    try {
      const module = /DJANGO_SETTINGS_MODULE["']\s*,\s*["']([\w.]+)["']/.exec(readConfigText(manage))?.[1];
      if (module) {
        const path = join(root, ...module.split('.'));
        found.push(`${path}.py`, join(path, '__init__.py'), join(path, 'base.py'));
      }
    } catch {
      // unreadable: look for settings files instead
    }
  }
  const list = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  };
  found.push(join(root, 'settings.py'));
  for (const entry of list(root)) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    found.push(join(root, entry.name, 'settings.py'), join(root, entry.name, 'settings', '__init__.py'), join(root, entry.name, 'settings', 'base.py'));
  }
  return found.filter((p) => existsSync(p));
}

export interface DjangoHost {
  readonly model: { file: string; connections: ConnectionConfig[]; dependencies?: string[] };
  readonly text: string;
  readonly tree: { topNode: Node };
  qualify(node: Node): string | undefined;
  qualifyName(name: string): string | undefined;
  nextConnId(): string;
}

interface DjangoWalk {
  readonly env: Map<string, unknown>;
  readonly conns: Set<Conn>;
  readonly info: { def?: Node };
}

export class DjangoContext {
  private readonly configs = new Map<string, ConnectionConfig>();
  private settings?: DjangoSettings;
  /** The file defines a management command: one long-running process, no request cycle. */
  private readonly command: boolean;

  constructor(private readonly host: DjangoHost) {
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
    if (this.settings.file && !this.host.model.dependencies?.includes(this.settings.file)) {
      (this.host.model.dependencies ??= []).push(this.settings.file);
    }
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
  connectionOf(expr: Node, walk: DjangoWalk): Conn | undefined {
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
  connectionFor(walk: DjangoWalk, alias = 'default', at?: Node): Conn {
    const key = `django:${alias}`;
    const known = walk.env.get(key) as { kind: 'conn'; conn: Conn } | undefined;
    if (known) return known.conn;
    const config = this.config(alias, at ?? this.host.tree.topNode);
    const conn: Conn = {
      id: this.host.nextConnId(),
      driver: 'django',
      use: { kind: 'pooled-client', configId: config.id },
      origin: 'django',
      flow: initialFlow(config.autocommit),
      shared: true,
    };
    walk.conns.add(conn);
    walk.env.set(key, { kind: 'conn', conn });
    const def = walk.info.def;
    if (def && this.atomicDecorator(def)) enterTransaction(conn, this.host.model.file, '`@transaction.atomic`');
    return conn;
  }

  /** `with transaction.atomic(using=...)`: the connection whose transaction it opens. */
  atomicOf(item: Node, walk: DjangoWalk): Conn | undefined {
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
