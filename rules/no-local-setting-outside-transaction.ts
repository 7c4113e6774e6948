import { defineRule, resolveWrite, settingsOptionSchema, statementsOf, tenantSettingMatcher, type FileModel, type FunctionRef, type SqlSite } from '../src/model/index.ts';
import { crossFileParts, type Decision, type FileFacts } from '../src/model/cross-file.ts';
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
  /** Local writes on a function's connection parameter, in whatever state its callers hand it in. */
  onParameter: { function: FunctionRef; parameter: number; at: Ref; setting: string }[];
  /** Calls of project functions handing them a connection: in autocommit, or as the caller's own parameter or callback parameter. */
  handings: { function: FunctionRef; argument: number; at: Ref; autocommit: boolean; fromParameter?: { function: FunctionRef; parameter: number }; fromCallback?: { function: FunctionRef; argument: number; parameter: number } }[];
  /** A function's calls of its callback parameter with a connection in autocommit. */
  callbackCalls: { function: FunctionRef; parameter: number; connectionArgument: number; at: Ref }[];
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
  const facts: LocalFacts = { findings: [], setters: [], calls: [], onParameter: [], handings: [], callbackCalls: [] };
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
    if (site.scope.kind === 'unknown' && site.runsOnParameter && !statement.routine) {
      for (const write of statement.settingWrites) {
        const resolved = resolveWrite(write, site.params);
        if ((write.via === 'set' || write.via === 'set_config') && resolved.level === 'local' && isTenant(resolved.name) && !resolved.clears) {
          facts.onParameter.push({ ...site.runsOnParameter, at: ref(write.span), setting: resolved.name ?? '' });
        }
      }
    }
    if (!inAutocommit(site, statement)) continue;
    for (const call of statement.calls ?? []) facts.calls.push({ name: call.name, at: ref(call.span) });
    for (const write of statement.settingWrites) {
      const resolved = resolveWrite(write, site.params);
      // A write that clears ('', NULL, DEFAULT) carries no tenant for the next query to miss.
      if ((write.via === 'set' || write.via === 'set_config') && resolved.level === 'local' && isTenant(resolved.name) && !resolved.clears) {
        facts.findings.push({ at: ref(write.span), setting: resolved.name ?? '' });
      }
    }
  }
  for (const h of file.connectionCalls ?? []) {
    const autocommit = h.scope.kind === 'autocommit';
    if (!autocommit && !h.fromParameter && !h.fromCallback) continue;
    facts.handings.push({ function: h.function, argument: h.argument, at: ref(h.span), autocommit, ...(h.fromParameter ? { fromParameter: h.fromParameter } : {}), ...(h.fromCallback ? { fromCallback: h.fromCallback } : {}) });
  }
  for (const c of file.callbackCalls ?? []) {
    if (c.scope.kind === 'autocommit') facts.callbackCalls.push({ function: c.function, parameter: c.parameter, connectionArgument: c.connectionArgument, at: ref(c.span) });
  }
  for (const [name, routine] of routines) {
    // A setter and nothing else: what it sets is meant for the caller's later queries.
    const doesWork = routine.statements.some((s) => s.rowWrites.length > 0 || s.lockingReads.length > 0 || (s.kind === 'SelectStmt' && s.settingWrites.length === 0 && !s.calls?.length));
    if (routine.write && !doesWork) facts.setters.push({ name, ...routine.write });
  }
  return facts;
}

const sameFunction = (a: FunctionRef, b: FunctionRef) => a.module === b.module && a.at === b.at;

/** How deep a connection is followed back through callers that hand on their own parameter. */
const MAX_HANDING_DEPTH = 4;

/**
 * Local writes on a function's connection parameter (`SET LOCAL` on `client`
 * before any BEGIN of the function's own): a caller that hands it a
 * connection outside any transaction (a client it checked out and did not
 * BEGIN on) runs them in autocommit. Followed back through callers that hand
 * on a parameter of their own and through callbacks a project function runs
 * with its checked-out client; a caller whose connection's state is unknown
 * decides nothing.
 */
function onParameterFindings(files: readonly FileFacts<LocalFacts>[], place: (file: string, at: Ref, from: string) => string): Decision[] {
  const handings = files.flatMap(({ file, facts }) => facts.handings.map((h) => ({ file, ...h })));
  const callbackCalls = files.flatMap(({ file, facts }) => facts.callbackCalls.map((c) => ({ file, ...c })));
  if (handings.length === 0) return [];
  /** The first place a connection outside any transaction is handed to parameter `parameter` of `fn`, if any. */
  const autocommitCall = (fn: FunctionRef, parameter: number, depth: number): { file: string; at: Ref } | undefined => {
    if (depth > MAX_HANDING_DEPTH) return undefined;
    for (const h of handings) {
      if (!sameFunction(h.function, fn) || h.argument !== parameter) continue;
      if (h.autocommit) return { file: h.file, at: h.at };
      if (h.fromParameter) {
        const found = autocommitCall(h.fromParameter.function, h.fromParameter.parameter, depth + 1);
        if (found) return found;
      }
      const via = h.fromCallback;
      if (via) {
        const run = callbackCalls.find((c) => sameFunction(c.function, via.function) && c.parameter === via.argument && c.connectionArgument === via.parameter);
        if (run) return { file: run.file, at: run.at };
      }
    }
    return undefined;
  };
  const out: Decision[] = [];
  for (const { file, facts } of files) {
    for (const w of facts.onParameter) {
      const call = autocommitCall(w.function, w.parameter, 0);
      if (call) out.push({ file, at: w.at, messageId: 'parameterOutsideTransaction', data: { setting: w.setting, where: place(call.file, call.at, file) } });
    }
  }
  return out;
}

export default defineRule<Options, LocalFacts>({
  id: 'no-local-setting-outside-transaction',
  description: 'Disallow transaction-local settings outside a transaction',
  messages: {
    outsideTransaction:
      "'{{setting}}' is set for the current transaction, but this runs in autocommit: the setting ends with its own statement and the job's next query runs without it (0 rows under RLS, or the wrong tenant's defaults). Open a transaction first and set it inside.",
    parameterOutsideTransaction:
      "'{{setting}}' is set for the current transaction, but the call at {{where}} hands this connection in outside any transaction and nothing here opens one: the setting ends with its own statement and the job's next query runs without it (0 rows under RLS). BEGIN on the connection before setting it, or call this inside the caller's transaction.",
    setterOutsideTransaction:
      "{{routine}} ({{where}}) sets '{{setting}}' for the current transaction only, but this call runs in autocommit: the setting ends with the call and the job's next query runs without it (0 rows under RLS). Open a transaction and call it inside, before the job's queries.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: { settings: settingsOptionSchema }, additionalProperties: false },
  defaultOptions: {},
  // A call of a routine: select enter_tenant($1), call enter_tenant(...), Supabase's supabase.rpc('enter_tenant', ...).
  triggers: [
    'set_config',
    'set local',
    /(?:select|call|perform)(?:\s|\\[nrt])+[a-z_][\w.]*\s*\(/i,
    '.rpc(',
    // A module that checks a client out, or types one, may hand it to the function that sets the setting on it.
    { byLanguage: { typescript: /poolclient|reservedsql|\.(?:connect|reserve)\(\s*\)/i } },
  ],
  // A setter routine in the project's SQL and the call that runs it in autocommit may be in two files.
  ...crossFileParts<Options, LocalFacts>(read, (files, { place }) => {
    const out: Decision[] = [];
    const setters = new Map<string, { file: string; setter: LocalFacts['setters'][number] }[]>();
    for (const { file, facts } of files) {
      for (const f of facts.findings) out.push({ file, at: f.at, messageId: 'outsideTransaction', data: { setting: f.setting } });
      for (const setter of facts.setters) setters.set(bare(setter.name), [...(setters.get(bare(setter.name)) ?? []), { file, setter }]);
    }
    out.push(...onParameterFindings(files, place));
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
