// Calls to the outside world in Python: what a rollback cannot take back, or
// a wait that keeps a transaction open. The front end asks for each call it
// walks, with the callee qualified through the file's imports
// (`from httpx import post` -> `httpx.post`), the method name of a method
// call and its receiver as written (`self.producer`); unknown receivers are
// judged by method names that are unambiguous, or by what the receiver is
// named for. A call of a function of the file (or a method of the class)
// that makes one is one too, followed two calls deep, also into the
// project's modules it imports (`from app.notify import post_hook`).
import { driverSideEffect } from '../drivers/index.ts';
import { callParts, children, dottedName, methodCall, ownNodes, unwrap, type Node } from '../syntax.ts';
import { qualifiedName, type Imports } from './imports.ts';
import { moduleDef, returnedCall, type ModuleSource } from './project.ts';

/** Module functions and constructors (qualified names). */
const FUNCTIONS = new Set([
  // HTTP
  'requests.get', 'requests.post', 'requests.put', 'requests.patch', 'requests.delete', 'requests.head', 'requests.options', 'requests.request',
  'httpx.get', 'httpx.post', 'httpx.put', 'httpx.patch', 'httpx.delete', 'httpx.head', 'httpx.options', 'httpx.request', 'httpx.stream',
  'urllib.request.urlopen', 'urllib3.request', 'aiohttp.request',
  // mail, sockets, processes
  'smtplib.SMTP', 'smtplib.SMTP_SSL', 'aiosmtplib.send', 'socket.create_connection',
  'subprocess.run', 'subprocess.call', 'subprocess.check_call', 'subprocess.check_output', 'subprocess.Popen', 'os.system',
  // waits
  'time.sleep', 'asyncio.sleep',
]);

/** Method names that mean the outside world whatever the receiver: mail, brokers, task queues, cloud senders. */
const METHODS = new Set([
  'sendmail', 'send_message', // smtplib, aiosmtplib
  'basic_publish', // pika (RabbitMQ)
  'publish', // SNS, Redis, NATS, pika channels
  'produce', // confluent_kafka
  'send_and_wait', 'send_batch', // aiokafka
  'xadd', 'lpush', 'rpush', 'lpushx', 'rpushx', 'spublish', // Redis (redis-py)
  'upload_file', 'upload_fileobj', 'put_object', 'copy_object', // boto3 S3
  'send_email', 'send_raw_email', 'send_templated_email', // boto3 SES
  'send_sms', // SMS gateways
  'delay', 'apply_async', 'send_task', // Celery
]);

/** Methods that go out only on receivers named for what they are: `producer.send` (kafka-python), `s3.delete_object`. */
const BY_RECEIVER: { receiver: RegExp; methods: RegExp }[] = [
  { receiver: /producer|kafka/i, methods: /^send$/ },
  { receiver: /s3/i, methods: /^(delete_object|delete_objects|upload_part)$/ },
];

/** Words of a receiver that name an HTTP client: `http`, `api_client`, `self.webhook_client`, an httpx/aiohttp/requests `session` or `client`. */
const HTTP_WORDS = new Set(['http', 'https', 'httpx', 'api', 'rest', 'webhook', 'webhooks', 'requests', 'aiohttp']);
const HTTP_VERBS = /^(get|post|put|patch|delete|head|options|request|stream)$/;
/** `session` and `client` also name SQLAlchemy sessions and Redis clients: only the verbs those do not have. */
const SESSION_NAMES = /^(session|client|sess|http_session|async_client)$/;
const WRITE_VERBS = /^(post|put|patch)$/;

/** The callee to report when the call reaches the outside world, else undefined. */
export function pythonSideEffect(qualified: string | undefined, method: string | undefined, receiver?: string, madeBy: () => string | undefined = () => undefined): string | undefined {
  if (qualified && FUNCTIONS.has(qualified)) return qualified;
  const framework = driverSideEffect(qualified, method, madeBy);
  if (framework) return framework;
  if (!method) return undefined;
  if (METHODS.has(method)) return qualified ?? method;
  const last = receiver?.slice(receiver.lastIndexOf('.') + 1);
  if (!last) return undefined;
  const callee = qualified ?? `${receiver}.${method}`;
  if (BY_RECEIVER.some((r) => r.receiver.test(last) && r.methods.test(method))) return callee;
  if (HTTP_VERBS.test(method) && last.toLowerCase().split('_').some((w) => HTTP_WORDS.has(w))) return callee;
  if (WRITE_VERBS.test(method) && SESSION_NAMES.test(last)) return callee;
  return undefined;
}

/**
 * The qualified name of the call that made a method call's receiver: the call
 * itself (`EmailMessage(...).send()`), or the one value of a name the
 * enclosing def binds once (`msg = EmailMessage(...)`, then `msg.send()`).
 */
export function receiverMaker(object: Node, text: string, qualify: (node: Node) => string | undefined): string | undefined {
  let value = unwrap(object);
  if (value?.name === 'VariableName') value = onlyValue(value, text);
  // `self.message.send()` with `@property def message(self): return EmailMessage(...)`: the call the property returns.
  else if (value?.name === 'MemberExpression') value = propertyCall(value, text);
  const parts = value?.name === 'CallExpression' ? callParts(value, text) : undefined;
  return parts ? qualify(parts.callee) : undefined;
}

/** `self.name` in a method, where the class's `name` is a property (or cached_property) that returns one call: that call. */
function propertyCall(member: Node, text: string): Node | undefined {
  const [owner, dot, property] = children(member);
  if (owner?.name !== 'VariableName' || text.slice(owner.from, owner.to) !== 'self' || dot?.name !== '.' || property?.name !== 'PropertyName') return undefined;
  let cls: Node | null = member.parent;
  while (cls && cls.name !== 'ClassDefinition') cls = cls.parent;
  return cls ? propertyReturn(cls, text, text.slice(property.from, property.to)) : undefined;
}

/** The call the property `name` of a class returns (`@property def message(self): return EmailMessage(...)`). */
function propertyReturn(cls: Node, text: string, wanted: string): Node | undefined {
  for (const item of children(cls.getChild('Body') ?? cls)) {
    if (item.name !== 'DecoratedStatement') continue;
    const def = item.getChild('FunctionDefinition');
    const name = def?.getChild('VariableName');
    const decorators = children(item).filter((d) => d.name === 'Decorator').map((d) => text.slice(d.from, d.to).replace(/\s+/g, ''));
    if (def && name && text.slice(name.from, name.to) === wanted && decorators.some((d) => /^@(functools\.)?(cached_)?property$/.test(d))) return returnedCall(def);
  }
  return undefined;
}

/** The call the property `name` of the top-level class `className` returns (`letter.message` with `letter` a `Letter`). */
export function classPropertyCall(top: Node, text: string, className: string, name: string): Node | undefined {
  for (let c = top.firstChild; c; c = c.nextSibling) {
    const cls = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    const id = cls?.name === 'ClassDefinition' ? cls.getChild('VariableName') : null;
    if (cls && id && text.slice(id.from, id.to) === className) return propertyReturn(cls, text, name);
  }
  return undefined;
}

/** The value of the one plain assignment to a name in its def; undefined when bound otherwise or more than once. */
function onlyValue(name: Node, text: string): Node | undefined {
  let def: Node | null = name.parent;
  while (def && def.name !== 'FunctionDefinition') def = def.parent;
  if (!def) return undefined;
  const wanted = text.slice(name.from, name.to);
  const values: (Node | undefined)[] = [];
  ownNodes(def, (node) => {
    if (node.name !== 'AssignStatement' && node.name !== 'UpdateStatement' && node.name !== 'ForStatement' && node.name !== 'WithStatement') return;
    const parts = children(node);
    const targets = node.name === 'AssignStatement' ? parts.filter((p, i) => parts[i + 1]?.name === 'AssignOp') : parts.filter((p) => p.name === 'VariableName');
    if (!targets.some((t) => t.name === 'VariableName' && text.slice(t.from, t.to) === wanted)) return;
    const plain = node.name === 'AssignStatement' && parts.length === 3 && parts[1]?.name === 'AssignOp';
    values.push(plain ? parts[2] : undefined);
  });
  return values.length === 1 ? unwrap(values[0]) : undefined;
}

/** What the walk's file says of a callee: its qualified name, the def it names in this file. */
export interface CalleeResolver {
  readonly text: string;
  /** Which file this is (the defs' offsets are its own). */
  readonly id?: string;
  qualify(node: Node): string | undefined;
  resolveDef(expr: Node, at: Node): Node | undefined;
  /** A def of another module of the project the callee names (`from app.notify import post_hook`), with that module's resolver. */
  foreign?(expr: Node): { def: Node; file: CalleeResolver } | undefined;
}

/** How a module's names lead to other modules of the project: `from <module> import name`, read from `from`. */
export type ModuleLoader = (module: string, level: number, from: string) => ModuleSource | undefined;

/**
 * The def a callee names in another module of the project: `post_hook(...)` with `from app.notify import post_hook`,
 * or `notify.post_hook(...)` with `from app import notify`; with that module's own resolver, so its calls are
 * followed in turn (within the project unit and the per-file module budget).
 */
export function foreignCallee(expr: Node, text: string, imports: Imports, from: string, load: ModuleLoader): { def: Node; file: CalleeResolver } | undefined {
  // A chain whose first name was not imported from a module of the project: none.
  let start: Node | null = expr;
  while (start?.name === 'MemberExpression') start = start.firstChild;
  if (start?.name === 'VariableName' && !imports.fromImports.has(text.slice(start.from, start.to))) return undefined;
  const dotted = dottedName(expr, text);
  if (!dotted) return undefined;
  const [first, attribute, ...rest] = dotted.split('.');
  const imported = imports.fromImports.get(first);
  if (!imported || rest.length > 0) return undefined;
  const source =
    attribute === undefined
      ? load(imported.module, imported.level, from)
      : load(imported.module ? `${imported.module}.${imported.name}` : imported.name, imported.level, from);
  const def = source ? moduleDef(source, attribute ?? imported.name) : undefined;
  return source && def ? { def, file: moduleResolver(source, load) } : undefined;
}

/** A project module read from disk, as a resolver of its own callees. */
export function moduleResolver(source: ModuleSource, load: ModuleLoader): CalleeResolver {
  return {
    text: source.text,
    id: source.path,
    qualify: (node) => qualifiedName(node, source.text, source.imports),
    resolveDef: (expr) => (expr.name === 'VariableName' ? moduleDef(source, source.text.slice(expr.from, expr.to)) : undefined),
    foreign: (expr) => foreignCallee(expr, source.text, source.imports, source.path, load),
  };
}

/** How deep project calls are followed for a side effect: the call, and one more. */
const EFFECT_DEPTH = 2;

/**
 * The side effect a call of a def of this file makes in its body (its own
 * nested defs and lambdas aside), as `name → callee`, else undefined.
 */
export function sideEffectWithin(call: Node, file: CalleeResolver, depth = 0, seen = new Set<string>()): string | undefined {
  const parts = callParts(call, file.text);
  if (!parts || depth >= EFFECT_DEPTH) return undefined;
  const local = file.resolveDef(parts.callee, call);
  const there = local ? { def: local, file } : file.foreign?.(parts.callee);
  if (!there) return undefined;
  const { def } = there;
  const key = `${there.file.id ?? ''}:${def.from}`;
  if (def.name !== 'FunctionDefinition' || seen.has(key)) return undefined;
  // What a def does, read from a call at the top (nothing seen yet), is the same at every call: read once per file.
  const fresh = depth === 0 && seen.size === 0;
  let effects = fresh ? EFFECTS.get(file) : undefined;
  if (fresh && !effects) EFFECTS.set(file, (effects = new Map()));
  seen.add(key);
  let found: string | undefined;
  if (effects?.has(key)) found = effects.get(key);
  else {
    const body = def.getChild('Body');
    found = body ? effectIn(body, there.file, depth, seen) : undefined;
    effects?.set(key, found);
  }
  return found && `${dottedName(parts.callee, file.text) ?? 'a call'} → ${found}`;
}

/**
 * The side effect a method of a model instance makes (`letter.deliver()` with
 * `letter` a `Letter` the walk read): the method of the top-level class of
 * that name in `top` (this file's tree) or in `source` (the project module the
 * class is imported from), read as a call of a function of the project is.
 */
export function instanceMethodEffect(call: Node, method: string, className: string, local: { top: Node; file: CalleeResolver }, source?: { top: Node; file: CalleeResolver }): string | undefined {
  for (const where of [local, source]) {
    const def = where ? classMethod(where.top, where.file.text, className, method) : undefined;
    if (!where || !def) continue;
    const body = def.getChild('Body');
    const found = body ? effectIn(body, where.file, 0, new Set([`${where.file.id ?? ''}:${def.from}`])) : undefined;
    const parts = callParts(call, local.file.text);
    return found && `${(parts && dottedName(parts.callee, local.file.text)) ?? method} → ${found}`;
  }
  return undefined;
}

/** The method `method` of the top-level class `className` (decorated or not). */
function classMethod(top: Node, text: string, className: string, method: string): Node | undefined {
  for (let c = top.firstChild; c; c = c.nextSibling) {
    const cls = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    const id = cls?.name === 'ClassDefinition' ? cls.getChild('VariableName') : null;
    if (!cls || !id || text.slice(id.from, id.to) !== className) continue;
    for (const member of children(cls.getChild('Body') ?? cls)) {
      const def = member.name === 'DecoratedStatement' ? member.getChild('FunctionDefinition') : member;
      const name = def?.name === 'FunctionDefinition' ? def.getChild('VariableName') : null;
      if (def && name && text.slice(name.from, name.to) === method) return def;
    }
  }
  return undefined;
}

/** Per resolver (one per file): what each def a call at the top names does, by `file id:def offset`. */
const EFFECTS = new WeakMap<CalleeResolver, Map<string, string | undefined>>();

function effectIn(node: Node, file: CalleeResolver, depth: number, seen: Set<string>): string | undefined {
  for (const child of children(node)) {
    if (child.name === 'FunctionDefinition' || child.name === 'LambdaExpression' || child.name === 'ClassDefinition') continue;
    const inner = effectIn(child, file, depth, seen);
    if (inner) return inner;
  }
  if (node.name !== 'CallExpression') return undefined;
  const parts = callParts(node, file.text);
  if (!parts) return undefined;
  const method = methodCall(node, file.text);
  const qualified = file.qualify(parts.callee);
  const madeBy = () => (method ? receiverMaker(method.object, file.text, (n) => file.qualify(n)) : undefined);
  return pythonSideEffect(qualified, method?.method, method ? dottedName(method.object, file.text) : undefined, madeBy) ?? sideEffectWithin(node, file, depth + 1, seen);
}
