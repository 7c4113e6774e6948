import {
  defineRule,
  isApplicationSetting,
  requestScopedMatcher,
  requestSettingsOptionSchema,
  settingsOptionSchema,
  statementsOf,
  tenantSettingMatcher,
} from '../src/model/index.ts';
import type { SettingDefault, Span } from '../src/sql/index.ts';
import { bareTable } from '../src/model/queue.ts';

/** Statements that run where they stand; the others create what runs later (a policy, a view, a check, a routine). */
const RUNS_NOW = new Set(['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'CallStmt', 'VariableSetStmt', 'CopyStmt']);

interface Options {
  settings?: string[];
  requestSettings?: string[];
}

export default defineRule<Options>({
  id: 'require-nullif-on-setting-cast',
  description: "Require nullif(..., '') around current_setting() before it is cast",
  messages: {
    castWithoutNullif:
      "current_setting('{{setting}}') is cast to {{type}} without nullif(..., ''): once any job on the connection has set '{{setting}}', it reads '' (not NULL) and the cast fails with {{failure}}. Write nullif(current_setting('{{setting}}', true), '')::{{type}}.",
    policyCastWithoutNullif:
      "The policy casts current_setting('{{setting}}') to {{type}} without missing_ok and without nullif(..., ''): on a connection that never set '{{setting}}' every query on the table fails with unrecognized configuration parameter, and on one that set it before, with {{failure}}. Write nullif(current_setting('{{setting}}', true), '')::{{type}}.",
    defaultSilentNull:
      "Column {{column}} of {{table}} defaults to current_setting('{{setting}}'{{missingOk}}){{reads}}, and the column allows NULL: an insert that leaves the column out, on a connection where '{{setting}}' is not set (or was cleared), stores a row with {{column}} NULL — a row of no tenant, without an error. Declare the column NOT NULL, so that insert fails instead.",
    defaultEmptyString:
      "Column {{column}} of {{table}} defaults to current_setting('{{setting}}'{{missingOk}}) as text: on a connection where '{{setting}}' was set earlier and has ended or been reset, it reads '' and an insert that leaves the column out stores {{column}} = '' — a row of no tenant, without an error. Write nullif(current_setting('{{setting}}', true), '') and declare the column NOT NULL.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema, requestSettings: requestSettingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['current_setting'],
  check({ file, options, report }) {
    // Only custom settings read '' after RESET or the end of a local transaction; built-in ones always have a value,
    // and so do those an extension registers (citus.shard_count), whose RESET gives back the extension's default.
    const isTenant = options.settings ? tenantSettingMatcher(options.settings) : (name: string | undefined) => !!name && isApplicationSetting(name);
    // PostgREST sets request.* at the start of every request's transaction: a request never sees ''.
    const isRequestScoped = requestScopedMatcher(options.requestSettings);
    const checked = (setting: string | undefined) => isTenant(setting) && !isRequestScoped(setting);
    // Columns made NOT NULL later in the file (ALTER COLUMN ... SET NOT NULL) are NOT NULL for their defaults too.
    const madeNotNull = new Set([...statementsOf(file)].flatMap(({ statement }) => (statement.notNullSet ?? []).map((c) => `${bareTable(c.table)}.${c.column}`)));
    for (const { site, statement } of statementsOf(file)) {
      const policy = statement.kind === 'CreatePolicyStmt';
      // A query of a migration or psql script (also in a DO block) reads the setting once, where it stands, on the
      // connection the tool opened for it: no job ran there before it to leave ''. What it creates (a policy, also one
      // altered in a DO block, a view, a check, a function) runs later, on the application's connections: reported.
      const readsOnceOnToolConnection =
        site.driver === 'sql' && site.connection.kind === 'dedicated' && (!statement.routine || statement.routine.kind === 'do') && RUNS_NOW.has(statement.kind);
      for (const cast of statement.settingCasts) {
        if (cast.nullif || cast.guard || cast.inDefault || !checked(cast.setting)) continue;
        if (readsOnceOnToolConnection) continue;
        // An array type rejects '' as a malformed literal (measured on PostgreSQL 17.10), a scalar one as invalid input.
        const failure = cast.type.endsWith('[]') ? 'malformed array literal: ""' : `invalid input syntax for type ${cast.type}`;
        const data = { setting: cast.setting ?? '', type: cast.type, failure };
        // One finding per cast: a policy's cast without missing_ok fails both ways, and says so once.
        const unguardedRead = policy && cast.missingOk === false;
        report({ messageId: unguardedRead ? 'policyCastWithoutNullif' : 'castWithoutNullif', data, span: cast.span });
      }
      for (const found of statement.settingDefaults ?? []) {
        const finding = judgeDefault(madeNotNull.has(`${bareTable(found.table)}.${found.column}`) ? { ...found, notNull: true } : found);
        if (finding && checked(found.setting)) report(finding);
      }
    }
  },
});

/**
 * What an insert that leaves the column out does, measured on PostgreSQL
 * 17.10: with the setting unset, missing_ok false fails and missing_ok true
 * gives NULL; with '' a non-text cast fails and text keeps ''; nullif turns
 * both into NULL. NULL into a NOT NULL column fails. Only the silent
 * outcomes — a NULL in a nullable column, a '' anywhere — are reported.
 */
function judgeDefault(found: SettingDefault): { messageId: string; data: Record<string, string>; span: Span } | undefined {
  const data = {
    column: found.column,
    table: found.table,
    setting: found.setting ?? '',
    missingOk: found.missingOk === true ? ', true' : '',
    reads: found.castType ? `::${found.castType}` : '',
  };
  if (!found.castType && !found.nullif) return { messageId: 'defaultEmptyString', data, span: found.span };
  const yieldsNull = found.nullif || found.missingOk === true;
  if (yieldsNull && found.notNull === false) {
    return { messageId: 'defaultSilentNull', data: { ...data, reads: found.nullif ? `${data.reads} through nullif(..., '')` : data.reads }, span: found.span };
  }
  return undefined;
}
