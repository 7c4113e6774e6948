// boto3 / aioboto3 `rds-data`: the Aurora Data API. Read from the AWS
// documentation (boto3's RDSDataService reference, the Aurora user guide's
// "Using RDS Data API"); we cannot run it here, so nothing below is measured.
//
// - `boto3.client('rds-data')` (or a Session's `.client('rds-data')`,
//   aioboto3's `async with session.client('rds-data') as client`) is a client
//   of the service, which runs each call on a database connection it pools.
// - `execute_statement(resourceArn=, secretArn=, database=, sql=,
//   parameters=[{'name': ..., 'value': {...}}], transactionId=)` runs `sql`
//   with `:name` placeholders; `batch_execute_statement(sql=,
//   parameterSets=)` likewise. Without `transactionId` "changes that result
//   from the call are committed automatically": each call is its own
//   transaction, on whichever pooled connection the service picks.
// - `begin_transaction(...)` returns `{'transactionId': ...}`; the calls that
//   pass that id run in that transaction, until `commit_transaction(
//   transactionId=)` or `rollback_transaction(transactionId=)` (or the service
//   rolls it back: 3 minutes unused, 24 hours at most).
//
// So a session-level `set_config(..., false)` or `SET` lands on a pooled
// connection other callers get next (the service's reset between callers is
// not documented), and `set_config(..., true)` or `SET LOCAL` without a
// transactionId ends with its own call. The client is the model's pool; a
// transaction is a connection of it, found again by the name its id (or the
// response holding it) is assigned to. An id this file cannot follow (a
// parameter) runs in a transaction of unknown scope.
import { newConfigEntry } from '../flow/config.ts';
import type { BoundValues } from '../flow/params.ts';
import { enterTransaction, ended } from '../flow/scopes.ts';
import type { ConfigEntry, Conn, FileApi, Maker, PoolBinding, WalkApi } from '../flow/types.ts';
import { callParts, children, dottedName, keyword, methodCall, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

const SERVICE = 'rds-data';
/** Calls of the client that run the SQL of a keyword argument. */
const SQL_KEYWORD: Readonly<Record<string, string>> = {
  execute_statement: 'sql',
  batch_execute_statement: 'sql',
  // The deprecated ExecuteSql of Aurora Serverless v1: one or more statements, committed by the call.
  execute_sql: 'sqlStatements',
};
const CLIENT_MAKERS = new Set(['client', 'create_client']);
const MAKER: Maker = { kind: 'pool', driver: 'rds-data', name: 'client' };

export const rdsData: PythonDriver = {
  name: 'rds-data',
  modules: ['boto3', 'aioboto3', 'botocore'],
  // A file imports boto3 for S3, SQS and the rest as often: its `client("rds-data")` calls say it talks to the Data API.
  claimsFiles: false,
  // The types boto3-stubs gives the client.
  annotations: {
    'mypy_boto3_rds_data.RDSDataServiceClient': 'pool',
    'mypy_boto3_rds_data.client.RDSDataServiceClient': 'pool',
    'types_aiobotocore_rds_data.RDSDataServiceClient': 'pool',
    'types_aiobotocore_rds_data.client.RDSDataServiceClient': 'pool',
  },
  assumedPool: (at) => ({ ...clientConfig(at), id: `rds-data-parameter@${at.from}`, preparedReason: 'the client is made elsewhere' }),
  staticBinding: (file, call) => {
    const entry = clientEntry(file, call);
    return entry ? { kind: 'pool', entry } : undefined;
  },
  callBinding: (walk, call) => {
    const entry = clientEntry(walk.file, call);
    return entry ? { kind: 'pool', entry, driver: 'rds-data' } : undefined;
  },
  poolCall,
  // `:name` placeholders, bound by `parameters=[{'name': 'x', 'value': {'stringValue': v}}]`.
  placeholderStyle: (method) => (method in SQL_KEYWORD ? 'colon' : undefined),
  boundValues: (args, method, text) => (method in SQL_KEYWORD ? parametersOf(args, text) : undefined),
  postgresOnly: false,
};

/** The service name a `client(...)` call asks for, when it is a literal. */
function serviceOf(args: Arg[], text: string): string | undefined {
  const node = unwrap(positional(args, 0) ?? keyword(args, 'service_name'));
  if (node?.name !== 'String') return undefined;
  return /^[rRuU]?(['"])([\w-]+)\1$/.exec(text.slice(node.from, node.to))?.[2];
}

/** `boto3.client('rds-data')`, `session.client('rds-data')`, `botocore_session.create_client('rds-data')`: the client's config, once per call. */
function clientEntry(file: FileApi, call: Node): ConfigEntry | undefined {
  const parts = callParts(call, file.text);
  if (!parts) return undefined;
  const method = methodCall(call, file.text)?.method ?? (parts.callee.name === 'VariableName' ? file.qualify(parts.callee)?.split('.').pop() : undefined);
  if (!method || !CLIENT_MAKERS.has(method) || serviceOf(parts.args, file.text) !== SERVICE) return undefined;
  if (!rdsData.modules.some((m) => file.imports.modules.has(m))) return undefined;
  const made = file.driverState('rds-data', () => new Map<number, ConfigEntry>());
  const known = made.get(call.from);
  if (known) return known;
  const entry = newConfigEntry(call, MAKER);
  entry.config = { ...entry.config, ...clientConfig(call), id: entry.config.id };
  made.set(call.from, entry);
  file.model.connections.push(entry.config);
  return entry;
}

function clientConfig(at: Node) {
  return {
    id: `rds-data@${at.from}`,
    driver: 'rds-data' as const,
    kind: 'pool' as const,
    span: span(at),
    // Each call without a transactionId is committed by the service.
    autocommit: true,
    // The SQL goes to the service as text; what it prepares on its connections is not documented.
    preparedStatements: 'unknown' as const,
    preparedReason: "the Data API's connections are the service's: what it prepares on them is not documented",
    callbacks: [],
  };
}

/** The Data API transactions of a walk, by the name their id or their begin_transaction response is assigned to. */
const transactions = new WeakMap<WalkApi, Map<string, Conn>>();

/** A call of the client: SQL, with or without a transactionId, and the transaction calls. true when handled. */
function poolCall(walk: WalkApi, node: Node, pool: PoolBinding, method: string, args: Arg[]): boolean {
  const configId = pool.entry?.config.id;
  const txArg = keyword(args, 'transactionId');
  if (method === 'begin_transaction') {
    const conn = walk.newConn('rds-data', { kind: 'pooled-client', configId }, 'rds-data.transaction', pool.entry, true);
    const receiver = methodCall(node, walk.text)?.object;
    enterTransaction(conn, walk.file.model.file, `\`${receiver ? walk.text.slice(receiver.from, receiver.to) : 'client'}.begin_transaction()\``);
    const name = assignedName(node, walk.text);
    if (name) {
      const known = transactions.get(walk) ?? new Map<string, Conn>();
      known.set(name, conn);
      transactions.set(walk, known);
    }
    return true;
  }
  if (method === 'commit_transaction' || method === 'rollback_transaction') {
    const conn = txArg ? transactionOf(walk, txArg) : undefined;
    if (conn && conn.flow.explicit.length > 0) {
      conn.flow.explicit = [];
      ended(conn, method === 'commit_transaction' ? 'commit' : 'rollback');
    }
    return true;
  }
  const sqlKeyword = SQL_KEYWORD[method];
  if (!sqlKeyword) return false;
  const sql = keyword(args, sqlKeyword);
  if (!txArg && args.some((a) => a.star === '**')) {
    // `**options` may hold the transactionId: which transaction, and which connection, is not known.
    const conn = walk.newConn('rds-data', { kind: 'unknown', configId }, 'rds-data', pool.entry, 'unknown');
    walk.conns.delete(conn);
    walk.sqlSite(sql, conn, args, method);
    return true;
  }
  if (!txArg) {
    // Its own transaction, on any connection of the service's pool.
    const conn = walk.newConn('rds-data', { kind: 'pool', configId }, 'rds-data', pool.entry, true);
    walk.conns.delete(conn);
    walk.sqlSite(sql, conn, args, method);
    return true;
  }
  // In the transaction of that id; one this file does not see begin is in a state it cannot tell.
  const conn = transactionOf(walk, txArg) ?? walk.newConn('rds-data', { kind: 'pooled-client', configId }, 'rds-data.transaction', pool.entry, 'unknown');
  const statements = walk.sqlSite(sql, conn, args, method);
  walk.afterStatements(conn, statements, span(node));
  return true;
}

/** `tx = client.begin_transaction(...)['transactionId']`, `resp = await client.begin_transaction(...)`: the name assigned. */
function assignedName(call: Node, text: string): string | undefined {
  let current = call;
  for (let parent = current.parent; parent; parent = current.parent) {
    if (parent.name === 'AwaitExpression' || parent.name === 'ParenthesizedExpression') current = parent;
    else if (parent.name === 'MemberExpression' && parent.firstChild?.from === current.from && isIdAccess(parent, text)) current = parent;
    else if (parent.name === 'MemberExpression' && parent.parent?.name === 'CallExpression' && /\.get$/.test(text.slice(parent.from, parent.to))) current = parent.parent;
    else break;
  }
  const statement = current.parent;
  if (statement?.name !== 'AssignStatement' || statement.lastChild?.from !== current.from) return undefined;
  const targets = children(statement).filter((c) => c.name !== 'AssignOp');
  return targets.length === 2 ? dottedName(targets[0], text) : undefined;
}

/** `x['transactionId']`. */
function isIdAccess(member: Node, text: string): boolean {
  return /\[\s*['"]transactionId['"]\s*\]$/.test(text.slice(member.from, member.to));
}

/** The transaction a transactionId argument names: `tx`, `resp['transactionId']`, `resp.get('transactionId')`, `self.tx`. */
function transactionOf(walk: WalkApi, arg: Node): Conn | undefined {
  const known = transactions.get(walk);
  if (!known) return undefined;
  let expr = unwrap(arg);
  if (expr?.name === 'MemberExpression' && isIdAccess(expr, walk.text)) expr = unwrap(expr.firstChild);
  else if (expr?.name === 'CallExpression' && methodCall(expr, walk.text)?.method === 'get') expr = unwrap(methodCall(expr, walk.text)!.object);
  const name = dottedName(expr, walk.text);
  return name ? known.get(name) : undefined;
}

/** `parameters=[{'name': 'tenant', 'value': {'stringValue': t}}, ...]`: each value by its name. */
function parametersOf(args: Arg[], text: string | undefined): BoundValues | undefined {
  const list = unwrap(keyword(args, 'parameters'));
  if (!list) return undefined;
  if (list.name !== 'ArrayExpression' || text === undefined) return { opaque: true };
  const mapping = new Map<string, Node>();
  let opaque = false;
  for (const item of children(list)) {
    if (item.name === '[' || item.name === ']' || item.name === ',') continue;
    const entries = dictEntries(item, text);
    const name = entries?.get('name');
    const nameText = name ? /^(['"])(\w+)\1$/.exec(text.slice(name.from, name.to))?.[2] : undefined;
    const typed = entries?.get('value');
    const value = typed ? [...(dictEntries(typed, text)?.values() ?? [])] : [];
    if (nameText && value.length === 1) mapping.set(nameText, value[0]);
    else opaque = true;
  }
  return { mapping, opaque };
}

/** The literal-keyed entries of a dict display; undefined for anything else. */
function dictEntries(node: Node, text: string): Map<string, Node> | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'DictionaryExpression') return undefined;
  const parts = children(expr).filter((c) => c.name !== '{' && c.name !== '}' && c.name !== ',');
  const out = new Map<string, Node>();
  for (let i = 0; i + 2 < parts.length; i += 3) {
    if (parts[i + 1]?.name !== ':') return undefined;
    const key = /^(['"])(\w+)\1$/.exec(text.slice(parts[i].from, parts[i].to))?.[2];
    if (!key) return undefined;
    out.set(key, parts[i + 2]);
  }
  return out;
}
