import { defineRule, statementsOf } from '../src/model/index.ts';
import { DISCARD_ALL } from '../src/model/triggers.ts';

export default defineRule({
  id: 'no-discard-all-with-prepared-statements',
  description: 'Disallow DISCARD ALL and DEALLOCATE ALL where they fail or break cached prepared statements',
  messages: {
    inTransaction:
      'DISCARD ALL cannot run inside a transaction block: it fails here and the cleanup it stands for never happens. Run it in autocommit, or reset only what the job set (RESET app.tenant).',
    inRoutine:
      'DISCARD ALL cannot run inside a function or procedure: every call fails. Reset only what the job set (RESET app.tenant).',
    driverDefault:
      '{{driver}} runs {{statement}} on every connection the pool takes back ({{resetReason}}), and this pool keeps prepared statements ({{reason}}): from the second checkout of a connection, its next prepared query fails with prepared statement "..." does not exist. Give the pool a reset that clears only what a job sets (RESET app.tenant), or turn prepared statements off.',
    preparedStatements:
      '{{statement}} drops the prepared statements that {{driver}} keeps for this connection ({{reason}}): its next prepared query fails with prepared statement "..." does not exist. Reset only what the job set (RESET app.tenant), or turn prepared statements off for this connection.',
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // The statements the rule reports; slonik: its pools run DISCARD ALL on release unless given another resetConnection.
  triggers: [DISCARD_ALL, 'slonik'],
  check({ file, report }) {
    // The driver's own reset on release, where no reset of the app's replaces it (Slonik's resetConnection: DISCARD ALL).
    for (const config of file.connections) {
      if (!config.driverReset || config.preparedStatements !== 'yes' || config.callbacks.some((c) => c.role === 'reset')) continue;
      const statement = config.driverReset.statements.map((s) => s.trim().replace(/\s+/g, ' ').replace(/;$/, '').toUpperCase()).find((s) => s === 'DISCARD ALL' || s === 'DEALLOCATE ALL') as
        | 'DISCARD ALL'
        | 'DEALLOCATE ALL'
        | undefined;
      if (!statement || config.driverClearsCache?.includes(statement)) continue;
      report({
        messageId: 'driverDefault',
        data: { driver: config.driver, statement, resetReason: config.driverReset.reason, reason: config.preparedReason ?? 'prepared statements are on' },
        span: config.span,
      });
    }
    for (const { site, statement } of statementsOf(file)) {
      const discardAll = statement.discard === 'all';
      if (!discardAll && !statement.deallocateAll) continue;
      if (discardAll && statement.routine) {
        report({ messageId: 'inRoutine', span: statement.span });
        continue;
      }
      if (discardAll && site.scope.kind === 'transaction') {
        // In a pool callback require-autocommit-in-reset reports it, with what the pool does then.
        if (!site.callback) report({ messageId: 'inTransaction', span: statement.span });
        continue;
      }
      const config = file.connections.find((c) => c.id === site.connection.configId);
      const statementName = discardAll ? 'DISCARD ALL' : 'DEALLOCATE ALL';
      // psycopg >= 3.3.5 with prepare_threshold=0 drops its own cache after DISCARD ALL in time.
      if (config?.preparedStatements === 'yes' && !config.driverClearsCache?.includes(statementName)) {
        report({
          messageId: 'preparedStatements',
          data: { statement: statementName, driver: config.driver, reason: config.preparedReason ?? 'prepared statements are on' },
          span: statement.span,
        });
      }
    }
  },
});
