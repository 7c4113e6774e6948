import { defineRule, settingsOptionSchema, statementsOf, tenantSettingMatcher } from '../src/model/index.ts';

interface Options {
  settings?: string[];
}

/** Session-level writes of search_path and role at the top of a .sql script are the script's own (pg_dump writes them). */
const IDENTITY = new Set(['search_path', 'role', 'session_authorization']);

export default defineRule<Options>({
  id: 'no-session-tenant-setting',
  description: 'Disallow session-level writes of tenant settings on pooled connections',
  messages: {
    session:
      "Session-level write of '{{setting}}' outlives the job: the next job on this pooled connection runs as this tenant and reads its rows. Set it with set_config('{{setting}}', ..., true) or SET LOCAL inside the job's transaction.",
    onPool:
      "'{{setting}}' is written through the pool: the call runs on whichever connection the pool hands out, so the setting lands on a random connection and leaks to its next job. Check out a client, open a transaction and use set_config('{{setting}}', ..., true) there.",
    routine:
      "{{routine}} writes '{{setting}}' at session level: the setting outlives the caller's transaction and leaks to the next job on the connection. Pass true as set_config's third argument or use SET LOCAL.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['set_config', 'set '],
  check({ file, options, report }) {
    const isTenant = tenantSettingMatcher(options.settings);
    for (const { site, statement } of statementsOf(file)) {
      for (const write of statement.settingWrites) {
        if (write.via !== 'set' && write.via !== 'set_config') continue;
        if (!isTenant(write.name)) continue;
        // Pool callbacks: configure= runs before any job (the same for every tenant), reset= clears.
        if (site.callback) continue;
        const data = { setting: write.name ?? '', routine: statement.routine ? `${statement.routine.kind} ${statement.routine.name}` : '' };
        // A local write between BEGIN and COMMIT of the same call runs on one connection and ends with it.
        const inlineTransaction =
          write.level === 'local' &&
          site.analysis.statements.some((s) => s.transaction === 'begin' && s.span.start < statement.span.start) &&
          site.analysis.statements.some((s) => (s.transaction === 'commit' || s.transaction === 'rollback') && s.span.start > statement.span.start);
        if (site.connection.kind === 'pool' && write.level !== 'unknown' && !inlineTransaction) {
          report({ messageId: 'onPool', data, span: write.span });
          continue;
        }
        if (write.level !== 'session') continue;
        if (site.connection.kind === 'dedicated') continue; // a connection the job opened and closes itself
        if (statement.routine) {
          report({ messageId: 'routine', data, span: write.span });
          continue;
        }
        if (site.scope.kind === 'script' && IDENTITY.has(write.name ?? '')) continue;
        report({ messageId: 'session', data, span: write.span });
      }
    }
  },
});
