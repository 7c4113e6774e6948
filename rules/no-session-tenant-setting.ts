import { configOf, defineRule, releaseClears, settingsOptionSchema, statementsOf, tenantSettingMatcher, type Suggestion } from '../src/model/index.ts';
import type { SettingWrite } from '../src/sql/index.ts';
import { SET_STATEMENT } from '../src/model/triggers.ts';

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
    callerChoosesName:
      "{{function}} writes a setting whose name its callers choose (parameter '{{parameter}}') at session level: every tenant setting passed through it outlives the job and leaks to the next job on the connection. Pass true as set_config's third argument, inside the job's transaction.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  triggers: ['set_config', SET_STATEMENT],
  hasSuggestions: true,
  check({ file, options, report }) {
    const isTenant = tenantSettingMatcher(options.settings);
    for (const { site, statement } of statementsOf(file)) {
      for (const write of statement.settingWrites) {
        if (write.via !== 'set' && write.via !== 'set_config') continue;
        // Pool callbacks: configure= runs before any job (the same for every tenant), reset= clears.
        if (site.callback) continue;
        // Undone before another job can see it: a transaction rolled back on every path, a connection
        // not reused, or the driver's own reset on release (asyncpg's RESET ALL).
        if (site.scope.kind === 'transaction' && site.scope.neverCommits) continue;
        if (write.level !== 'local' && releaseClears(configOf(file, site), write.name)) continue;
        const callerName = write.name === undefined && write.level === 'session' ? callerChosenName(site, write) : undefined;
        if (callerName && site.connection.kind !== 'dedicated') {
          report({ messageId: 'callerChoosesName', data: { function: site.functionName ?? 'This function', parameter: callerName }, span: write.span });
          continue;
        }
        if (!isTenant(write.name)) continue;
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
        // Inside the job's transaction the local form is the fix; outside one it would do nothing (no-local-setting-outside-transaction).
        const suggestion = site.scope.kind === 'transaction' ? localForm(file.text, write) : undefined;
        report({ messageId: 'session', data, span: write.span, ...(suggestion ? { suggestions: [suggestion] } : {}) });
      }
    }
  },
});

/** A generic setter: the name is a placeholder bound to a parameter of the host function. */
function callerChosenName(site: import('../src/model/index.ts').SqlSite, write: SettingWrite): string | undefined {
  if (write.nameFrom?.kind !== 'placeholder') return undefined;
  const param = site.params?.[write.nameFrom.index - 1];
  return param?.kind === 'caller-parameter' ? param.name : undefined;
}

/**
 * The edit that makes a session write local, read from the host text at the
 * write: set_config's literal `false` becomes `true`, `SET [SESSION]` becomes
 * `SET LOCAL`. None where the text there is not that (a constant, an escape).
 */
function localForm(text: string, write: SettingWrite): Suggestion | undefined {
  if (write.via === 'set') {
    const match = /^SET(\s+SESSION)?(?=\s)/i.exec(text.slice(write.span.start, write.span.end));
    if (!match) return undefined;
    const keyword = match[1] ? { start: write.span.start + match[0].length - match[1].trimStart().length, end: write.span.start + match[0].length } : undefined;
    return keyword
      ? { description: "Make it local to the job's transaction: SET LOCAL.", span: keyword, replacement: 'LOCAL' }
      : { description: "Make it local to the job's transaction: SET LOCAL.", span: { start: write.span.start + 3, end: write.span.start + 3 }, replacement: ' LOCAL' };
  }
  if (!/^set_config$/i.test(text.slice(write.span.start, write.span.end))) return undefined;
  // The third argument of set_config(...): the last one at depth 0 before the closing parenthesis.
  let i = write.span.end;
  while (i < text.length && /\s/.test(text[i])) i++;
  if (text[i] !== '(') return undefined;
  let depth = 0;
  let quote: string | undefined;
  let lastComma = -1;
  for (let j = i; j < text.length && j < i + 2000; j++) {
    const c = text[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) {
        const arg = text.slice(lastComma + 1, j);
        const word = /^(\s*)(false)(\s*)$/i.exec(arg);
        if (lastComma < 0 || !word) return undefined;
        const start = lastComma + 1 + word[1].length;
        return { description: "Make it local to the job's transaction: set_config(..., true).", span: { start, end: start + word[2].length }, replacement: 'true' };
      }
    } else if (c === ',' && depth === 1) lastComma = j;
  }
  return undefined;
}
