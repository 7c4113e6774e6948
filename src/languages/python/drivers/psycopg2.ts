// psycopg2: not autocommit by default (an implicit transaction until
// commit()/rollback() or the end of `with conn:`), SQL runs on cursors
// only, nothing is prepared. Its pools (psycopg2.pool.SimpleConnectionPool,
// ThreadedConnectionPool, ...) pass their keyword arguments on to connect()
// and hand connections out with getconn(); psycopg2.extras' execute_values
// and execute_batch run SQL on a cursor they are given.
import { booleanOf, keywordMap, newConfigEntry } from '../flow/config.ts';
import type { ConfigEntry, Maker, ReadContext } from '../flow/types.ts';
import { callParts, unwrap, type Node } from '../syntax.ts';
import { dbapiImplicitForm } from './psycopg.ts';
import type { PythonDriver } from '../flow/driver-api.ts';

export const psycopg2: PythonDriver = {
  name: 'psycopg2',
  modules: ['psycopg2'],
  unlessAlso: ['psycopg'],
  handedIn: { origin: 'parameter' },
  makers: [
    { path: /^psycopg2\.(?:\w+\.)*pool\.(?:\w+\.)*(SimpleConnectionPool|ThreadedConnectionPool|PersistentConnectionPool|AbstractConnectionPool)$/, kind: 'pool' },
    { path: 'psycopg2.connect', kind: 'connect', name: 'connect' },
  ],
  readConfig,
  checkouts: [
    { method: 'connection', origin: 'pool.connection' },
    { method: 'getconn', origin: 'getconn' },
  ],
  runsSqlOnConnection: () => false,
  controlMethods: ['set_session', 'set_isolation_level'],
  autocommitSetters: [{ method: 'set_session', keyword: 'autocommit' }, { method: 'set_isolation_level', autocommitOf: isolationLevelAutocommit }],
  sqlFunctions: ['psycopg2.extras.execute_values', 'psycopg2.extras.execute_batch'].map((path) => ({ path, cursorArg: 0, sqlArg: 1, sqlKeyword: 'sql' })),
  postgresOnly: true,
  sqlText: {
    composed: ['psycopg2.sql.SQL'],
    identifiers: ['psycopg2.sql.Identifier'],
    literals: ['psycopg2.sql.Literal'],
    placeholders: ['psycopg2.sql.Placeholder'],
  },
  notWork: ['psycopg2.sql'],
  implicitForm: (conn) => dbapiImplicitForm('psycopg2', conn),
};

/**
 * `conn.set_isolation_level(level)`: ISOLATION_LEVEL_AUTOCOMMIT (0) switches autocommit on; any other level
 * switches it off (psycopg2 2.7+: set_session(isolation_level=level, autocommit=False)). A level the code
 * computes is not known.
 */
function isolationLevelAutocommit(argument: Node | undefined, text: string): boolean | 'unknown' {
  const expr = unwrap(argument);
  if (!expr) return 'unknown';
  const written = text.slice(expr.from, expr.to);
  const name = written.slice(written.lastIndexOf('.') + 1);
  if (name === 'ISOLATION_LEVEL_AUTOCOMMIT' || written === '0') return true;
  if (/^ISOLATION_LEVEL_(READ_UNCOMMITTED|READ_COMMITTED|REPEATABLE_READ|SERIALIZABLE|DEFAULT)$/.test(name) || /^[1-4]$/.test(written)) return false;
  return 'unknown';
}

function readConfig(callNode: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  const args = callParts(callNode, ctx.text)!.args;
  const entry = newConfigEntry(callNode, maker);
  const { config } = entry;
  // Pools pass their keyword arguments on to psycopg2.connect().
  if (args.some((a) => a.star === '**')) {
    config.autocommit = 'unknown';
  } else {
    const autocommit = keywordMap(args).get('autocommit');
    config.autocommit = autocommit ? booleanOf(autocommit, ctx) : false;
  }
  config.preparedStatements = 'no';
  config.preparedReason = 'psycopg2 does not prepare statements';
  return entry;
}
