// Connection configs of a TS/JS file: node-postgres `new Pool/Client(...)`,
// postgres.js `postgres(...)` (its `prepare` option), pg-promise `pgp(...)`,
// and the other drivers' pools; and whether each caches prepared statements.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { ConnectionConfig, Driver, Span } from '../../model/index.ts';
import { lineIndexOf } from '../../engine/lines.ts';
import { objectProperty, span, unwrap, type Node } from './syntax.ts';

export interface ConfigEntry {
  config: ConnectionConfig;
  /** postgres.js `prepare: false`. */
  prepareOff?: boolean;
  /** Named (prepared) queries that run on this config. */
  namedQueries: { name: string; span: Span }[];
  /** Transactions opened on this config (postgres.js sql.begin): where its retry cannot help. */
  transactions: Span[];
  /** Made in another module of the project: its facts were read there. */
  imported?: boolean;
}

export function makeConfig(file: string, node: Node, driver: Driver, kind: 'pool' | 'client', args: readonly TSESTree.CallExpressionArgument[]): ConfigEntry {
  const config: ConnectionConfig = {
    id: `${file}#${driver}@${node.range[0]}`,
    driver,
    kind,
    span: span(node),
    preparedStatements: 'unknown',
    autocommit: true,
    callbacks: [],
  };
  const entry: ConfigEntry = { config, namedQueries: [], transactions: [] };
  if (driver === 'postgres.js') {
    for (const arg of args) {
      const options = unwrap(arg as Node);
      if (options?.type !== 'ObjectExpression') continue;
      const prepare = objectProperty(options, 'prepare');
      const value = prepare ? unwrap(prepare.value as Node) : undefined;
      if (value?.type === 'Literal' && value.value === false) entry.prepareOff = true;
    }
  }
  return entry;
}

/** After the walk: prepared statements per config, from the named queries and options seen. */
export function finishConfigs(entries: readonly ConfigEntry[], text: string): void {
  const lines = lineIndexOf(text);
  const line = (s: Span) => lines.position(s.start).line;
  for (const { config, namedQueries, prepareOff, transactions } of entries) {
    if (config.driver === 'pg' || config.driver === 'pg-promise') {
      if (namedQueries.length > 0) {
        const first = namedQueries[0];
        config.preparedStatements = 'yes';
        config.preparedReason = `named query '${first.name}' at line ${line(first.span)} is prepared once per connection and never re-prepared`;
      } else {
        config.preparedStatements = 'no';
      }
    } else if (config.driver === 'postgres.js') {
      if (prepareOff) {
        config.preparedStatements = 'no';
      } else {
        config.preparedStatements = 'yes';
        if (transactions.length === 0) {
          // postgres.js retries once after "prepared statement ... does not exist": outside a transaction that recovers (F8).
          config.driverClearsCache = ['DISCARD ALL', 'DEALLOCATE ALL'];
          config.preparedReason = 'postgres.js prepares every query (prepare: true by default); outside a transaction it retries once and recovers';
        } else {
          config.preparedReason = `postgres.js prepares every query (prepare: true by default), and its one retry cannot succeed inside sql.begin (line ${line(transactions[0])}): the failed statement has already aborted the transaction`;
        }
      }
    }
  }
}
