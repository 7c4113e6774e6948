import { defineRule, resolveWrite, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel, type SqlSite } from '../src/model/index.ts';
import { crossFileParts, type Decision } from '../src/model/cross-file.ts';
import { refMaker, type Ref } from '../src/model/queue.ts';
import type { StatementFacts } from '../src/sql/index.ts';

interface Options {
  settings?: string[];
}

interface LocalFacts {
  /** Local writes this file runs in autocommit. */
  findings: { at: Ref; setting: string }[];
  /** Routines that only set a tenant setting for the current transaction (their callers must be in one). */
  setters: { name: string; at: Ref; setting: string }[];
  /** Calls of routines made in autocommit. */
  calls: { name: string; at: Ref }[];
}

const bare = (name: string) => name.slice(name.lastIndexOf('.') + 1);

/** The site runs each statement on its own: autocommit, outside a BEGIN ... COMMIT of the same call. */
function inAutocommit(site: SqlSite, statement: StatementFacts): boolean {
  if (site.scope.kind !== 'autocommit' || statement.routine) return false;
  return !site.analysis.statements.some((s) => s.transaction === 'begin' && s.span.start < statement.span.start);
}

function read(file: FileModel, options: Options): LocalFacts {
  const isTenant = tenantSettingMatcher(options.settings);
  const ref = refMaker(file.text);
  const facts: LocalFacts = { findings: [], setters: [], calls: [] };
  const routines = new Map<string, { statements: StatementFacts[]; write?: { at: Ref; setting: string } }>();
  for (const { site, statement } of statementsOf(file)) {
    if (statement.routine && statement.routine.kind !== 'do') {
      const name = statement.routine.name.toLowerCase();
      const routine = routines.get(name) ?? { statements: [] };
      routine.statements.push(statement);
      routines.set(name, routine);
      for (const write of statement.settingWrites) {
        const resolved = resolveWrite(write, undefined);
        if ((write.via === 'set' || write.via === 'set_config') && resolved.level === 'local' && isTenant(resolved.name) && !resolved.clears) {
          routine.write ??= { at: ref(write.span), setting: resolved.name! };
        }
      }
      continue;
    }
    if (!inAutocommit(site, statement)) continue;
    for (const call of statement.calls ?? []) facts.calls.push({ name: call.name, at: ref(call.span) });
    for (const write of statement.settingWrites) {
      const resolved = resolveWrite(write, site.params);
      if ((write.via === 'set' || write.via === 'set_config') && resolved.level === 'local' && isTenant(resolved.name)) {
        facts.findings.push({ at: ref(write.span), setting: resolved.name ?? '' });
      }
    }
  }
  for (const [name, routine] of routines) {
    // A setter and nothing else: what it sets is meant for the caller's later queries.
    const doesWork = routine.statements.some((s) => s.rowWrites.length > 0 || s.lockingReads.length > 0 || (s.kind === 'SelectStmt' && s.settingWrites.length === 0 && !s.calls?.length));
    if (routine.write && !doesWork) facts.setters.push({ name, ...routine.write });
  }
  return facts;
}

export default defineRule<Options, LocalFacts>({
  id: 'no-local-setting-outside-transaction',
  description: 'Disallow transaction-local settings outside a transaction',
  messages: {
    outsideTransaction:
      "'{{setting}}' is set for the current transaction, but this runs in autocommit: the setting ends with its own statement and the job's next query runs without it (0 rows under RLS, or the wrong tenant's defaults). Open a transaction first and set it inside.",
    setterOutsideTransaction:
      "{{routine}} ({{where}}) sets '{{setting}}' for the current transaction only, but this call runs in autocommit: the setting ends with the call and the job's next query runs without it (0 rows under RLS). Open a transaction and call it inside, before the job's queries.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  // A call of a routine: select enter_tenant($1), call enter_tenant(...), Supabase's supabase.rpc('enter_tenant', ...).
  triggers: ['set_config', 'set local', /(?:select|call|perform)(?:\s|\\[nrt])+[a-z_][\w.]*\s*\(/i, '.rpc('],
  // A setter routine in the project's SQL and the call that runs it in autocommit may be in two files.
  ...crossFileParts<Options, LocalFacts>(read, (files, { place }) => {
    const out: Decision[] = [];
    const setters = new Map<string, { file: string; setter: LocalFacts['setters'][number] }[]>();
    for (const { file, facts } of files) {
      for (const f of facts.findings) out.push({ file, at: f.at, messageId: 'outsideTransaction', data: { setting: f.setting } });
      for (const setter of facts.setters) setters.set(bare(setter.name), [...(setters.get(bare(setter.name)) ?? []), { file, setter }]);
    }
    if (setters.size === 0) return out;
    for (const { file, facts } of files) {
      for (const call of facts.calls) {
        const match = (setters.get(bare(call.name)) ?? []).find(({ setter }) => !(call.name.includes('.') && setter.name.includes('.') && call.name !== setter.name));
        if (!match) continue;
        out.push({ file, at: call.at, messageId: 'setterOutsideTransaction', data: { routine: bare(match.setter.name), setting: match.setter.setting, where: place(match.file, match.setter.at, file) } });
      }
    }
    return out;
  }),
});
