// aiopg: psycopg2 in asynchronous mode. Read from aiopg 1.4.0's source
// (Debian's python3-aiopg): the connection is always in autocommit (its
// commit()/rollback() raise "cannot be used in asynchronous mode"), so every
// statement commits alone unless the code sends BEGIN itself, through
// `async with cur.begin():` (BEGIN, then COMMIT or ROLLBACK on error; a
// savepoint with begin_nested() inside one) or `cur.execute("BEGIN")`.
// SQL runs on cursors (`async with conn.cursor() as cur`, `%s` /
// `%(name)s` placeholders, psycopg2 prepares nothing). Pool.release() runs
// no reset: a connection returned idle keeps every session setting for the
// next acquire; one returned inside a transaction is closed (with a
// ResourceWarning), so an open transaction does not reach the next user.
// create_pool(on_connect=) runs a coroutine on each new connection.
//
// aiopg.sa: create_engine() is such a pool; `engine.acquire()` gives an
// SAConnection whose execute()/scalar() take SQL text (or SQLAlchemy
// constructs) and whose `async with conn.begin():` sends BEGIN ... COMMIT
// (ROLLBACK on error); closing it rolls back a transaction left open.
import { keywordMap, newConfigEntry } from '../flow/config.ts';
import type { ConfigEntry, Maker, ReadContext } from '../flow/types.ts';
import { boundValues } from '../flow/params.ts';
import { callParts, keyword, unwrap, type Node } from '../syntax.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

export const aiopg: PythonDriver = {
  name: 'aiopg',
  // aiopg.sa files import SQLAlchemy to build queries, and aiopg files psycopg2 for its errors and extras:
  // their connections are aiopg's (the registry lists aiopg before both).
  modules: ['aiopg'],
  handedIn: { origin: 'parameter' },
  makers: [
    { path: 'aiopg.create_pool', kind: 'pool', name: 'create_pool' },
    { path: 'aiopg.pool.create_pool', kind: 'pool', name: 'create_pool' },
    { path: 'aiopg.sa.create_engine', kind: 'pool', name: 'create_engine' },
    { path: 'aiopg.sa.engine.create_engine', kind: 'pool', name: 'create_engine' },
    { path: 'aiopg.connect', kind: 'connect', name: 'connect' },
    { path: 'aiopg.connection.connect', kind: 'connect', name: 'connect' },
  ],
  readConfig,
  annotations: {
    'aiopg.Pool': 'pool',
    'aiopg.pool.Pool': 'pool',
    'aiopg.sa.Engine': 'pool',
    'aiopg.sa.engine.Engine': 'pool',
    'aiopg.Connection': 'conn',
    'aiopg.connection.Connection': 'conn',
    'aiopg.sa.SAConnection': 'conn',
    'aiopg.sa.connection.SAConnection': 'conn',
  },
  checkouts: [
    // Released inside a transaction, the connection is closed: what was not committed is lost.
    { method: 'acquire', origin: 'aiopg.acquire', autocommit: true, exitEnds: 'rollback' },
    // `with (await pool.cursor()) as cur`: a connection of the pool and a cursor on it.
    { method: 'cursor', origin: 'aiopg.acquire', autocommit: true, exitEnds: 'rollback' },
  ],
  transactionBlocks: [
    { method: 'begin', onlyInItsFiles: true, onCursor: true },
    { method: 'begin_nested', onlyInItsFiles: true, onCursor: true },
  ],
  // A cursor's execute; an SAConnection's execute and scalar (a plain aiopg Connection has neither).
  sqlMethods: { connection: new Set(['execute', 'scalar']), cursor: new Set(['execute']) },
  // An SAConnection's execute(sql, *multiparams, **params): `execute(q, t=1)`, `execute(q, 1, 2)`, `execute(q, (1, 2))`.
  boundValues(args, method, text, valueOf) {
    const values = args.filter((a) => !a.star && !a.name).slice(1);
    const named = args.filter((a) => a.name && a.name !== 'timeout' && a.name !== 'parameters');
    if (args.some((a) => a.star)) return { opaque: true };
    if (named.length > 0 && values.length === 0) return { mapping: new Map(named.map((a) => [a.name!, a.value])) };
    if (values.length > 1) return { sequence: values.map((a) => a.value) };
    const given = values[0]?.value ?? keyword(args, 'parameters');
    return given ? boundValues(given, text, valueOf) : undefined;
  },
  postgresOnly: true,
  implicitForm: () => "aiopg's autocommit (psycopg2 in asynchronous mode)",
};

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  // psycopg2's asynchronous connections are in autocommit, and aiopg offers no way out of it.
  config.autocommit = true;
  config.preparedStatements = 'no';
  config.preparedReason = 'aiopg runs psycopg2, which does not prepare statements';
  const onConnect = keywordMap(args).get('on_connect');
  if (maker.kind === 'pool' && onConnect && unwrap(onConnect)?.name !== 'None') entry.callbackArgs.push({ role: 'configure', node: onConnect });
  return entry;
}
