import {
  configOf,
  defineRule,
  releaseClears,
  requestScopedMatcher,
  requestSettingsOptionSchema,
  resolveWrite,
  servesOneTenant,
  settingsOptionSchema,
  statementsOf,
  tenantSettingMatcher,
  asLevel,
  type FileModel,
  type FunctionRef,
  type HandedValue,
  type ParameterRef,
  type ResolvedWrite,
  type SqlSite,
  type Suggestion,
} from '../src/model/index.ts';
import { handedConnections, onlyDedicated } from '../src/model/handed.ts';
import { crossFileParts, displayPath, readOnce, type Decision, type FileFacts } from '../src/model/cross-file.ts';
import { refMaker, type Ref } from '../src/model/queue.ts';
import type { CallArgument, SettingWrite, StatementFacts } from '../src/sql/index.ts';
import { SET_STATEMENT } from '../src/model/triggers.ts';

interface Options {
  settings?: string[];
  requestSettings?: string[];
}

/** Session-level writes of search_path and role in a .sql script or migration are the script's own (pg_dump writes them). */
const IDENTITY = new Set(['search_path', 'role', 'session_authorization']);

interface SessionFacts {
  /** What this file shows by itself; a finding in a PostgREST pre-request hook is dropped when the hook is known. */
  findings: { at: Ref; messageId: string; data: Record<string, string>; routine?: string; suggestion?: Suggestion; namedQuery?: boolean; onParameter?: ParameterRef }[];
  /** Settings the named queries of query files clear (RESET x, set_config(x, '', false)); `*` for RESET ALL and DISCARD ALL. */
  queryResets?: string[];
  /** Routines named by `pgrst.db_pre_request` (ALTER ROLE ... SET): PostgREST runs them at the start of every request. */
  preRequest: string[];
  /** Routines whose tenant-setting write takes its level from a parameter: their callers decide. */
  levelRoutines: { name: string; at: Ref; setting: string; parameter: string; index: number; defaultLevel?: boolean }[];
  /** Calls of routines, with their literal arguments. */
  calls: { name: string; at: Ref; args: CallArgument[] }[];
  /**
   * Calls of routines from host code on a pooled connection (TS/JS, Python): a routine of the project that writes a
   * tenant setting at session level leaves it on that connection. `resets`: settings a finally around the call clears
   * before the release, and routines it calls there (`call:<name>`); '*' for all.
   */
  pooledCalls?: { name: string; at: Ref; resets: string[] }[];
  /** Routines of .sql files that clear settings at session level (set_config(x, '', false), RESET x; '*' for RESET ALL). */
  routineResets?: { name: string; settings: string[] }[];
  /** What calls of project functions hand their parameters (TS/JS): which connection a finding `onParameter` runs on. */
  handedValues: HandedValue[];
  escapedFunctions: FunctionRef[];
}

const bare = (name: string) => name.slice(name.lastIndexOf('.') + 1);

const messages = {
  session:
    "Session-level write of '{{setting}}' outlives the job: the next job on this pooled connection runs as this tenant and reads its rows. Set it with set_config('{{setting}}', ..., true) or SET LOCAL inside the job's transaction.",
  sessionFlag:
    "Session-level write of '{{setting}}' = {{value}} outlives the job: the flag stays {{value}} for every later job on this pooled connection, whatever it should be for them. Set it with set_config('{{setting}}', ..., true) or SET LOCAL inside the job's transaction.",
  skippedInHook:
    "This hook writes '{{setting}}' at session level before each use of the connection, but {{how}} skips the write: a job with no tenant then runs with the previous job's '{{setting}}' still set on this pooled connection and reads that tenant's rows. Clear it on that path (RESET {{setting}}), or set it with set_config('{{setting}}', ..., true) in the job's transaction.",
  onPool:
    "'{{setting}}' is written through the pool: the call runs on whichever connection the pool hands out, so the setting lands on a random connection and leaks to its next job. Check out a client, open a transaction and use set_config('{{setting}}', ..., true) there.",
  routine:
    "{{routine}} writes '{{setting}}' at session level: the setting outlives the caller's transaction and leaks to the next job on the connection. Pass true as set_config's third argument or use SET LOCAL.",
  genericSetter:
    "{{routine}} writes the setting its caller names ({{parameter}}) at session level: every tenant setting passed through it (app.tenant, search_path, ...) outlives the caller's transaction and leaks to the next job on the connection. The name is chosen by the callers; pass true as set_config's third argument.",
  genericHelper:
    "{{function}} writes the setting its callers name ({{parameter}}) at session level: every tenant setting passed through it outlives the job and leaks to the next job on this connection. The name is chosen by the callers; pass true as set_config's third argument, inside the job's transaction.",
  pooledRoutineCall:
    "This call runs {{routine}} ({{where}}), which writes {{settings}} at session level: on this pooled connection the setting outlives the job, and the next job that checks the connection out runs as this tenant. Make the routine use set_config(..., true) inside the job's transaction, or clear the setting in a finally before the connection goes back.",
  openerValue:
    "This hook runs once, when the pool opens a connection, and writes '{{setting}}' at session level from the request or job that happened to open it (a context variable, a thread-local, the request object): every later job on this pooled connection keeps that tenant's '{{setting}}' and reads its rows. Set it per job instead, with set_config('{{setting}}', ..., true) in the job's transaction.",
  routineCall:
    "This call passes false as {{parameter}} to {{routine}} ({{where}}), which then writes '{{setting}}' at session level: the setting outlives the transaction and leaks to the next job on the connection. Pass true.",
} as const;

function read(file: FileModel, options: Options): SessionFacts {
  const isTenant = tenantSettingMatcher(options.settings);
  const isRequestScoped = requestScopedMatcher(options.requestSettings);
  const ref = refMaker(file.text);
  const facts: SessionFacts = { findings: [], preRequest: [], levelRoutines: [], calls: [], handedValues: file.handedValues ?? [], escapedFunctions: file.escapedFunctions ?? [] };
  const restored = restoredSettings(file);
  for (const { site, statement } of statementsOf(file)) {
    if (isNamedQuery(site)) {
      const resets = queryResetsOf(site, statement);
      if (resets.length > 0) (facts.queryResets ??= []).push(...resets);
    }
    for (const setting of statement.roleSettings ?? []) {
      if (setting.name === 'pgrst.db_pre_request' && setting.value) facts.preRequest.push(setting.value.toLowerCase());
    }
    for (const call of statement.calls ?? []) facts.calls.push({ name: call.name, at: ref(call.span), args: call.args });
    const pooled = statement.calls?.length ? pooledCall(file, site) : undefined;
    if (pooled) for (const call of statement.calls!) (facts.pooledCalls ??= []).push({ name: call.name.toLowerCase(), at: ref(call.span), resets: pooled.resets });
    if (statement.routine && statement.routine.kind !== 'do') {
      const settings = sessionClears(site, statement);
      if (settings.length > 0) (facts.routineResets ??= []).push({ name: statement.routine.name.toLowerCase(), settings });
    }
    for (const write of statement.settingWrites) {
      if (write.via !== 'set' && write.via !== 'set_config') continue;
      if (write.name && statement.routine?.span && restored.get(statement.routine.span.start)?.has(write.name)) continue;
      const finding = judge(file, site, statement, write, isTenant, isRequestScoped);
      if (!finding) continue;
      if (finding.kind === 'level-from-parameter') {
        const routine = statement.routine!;
        const index = routine.parameters?.indexOf(finding.parameter) ?? -1;
        const fallback = index >= 0 ? routine.parameterDefaults?.[index] : undefined;
        const defaultLevel = fallback?.kind === 'literal' ? asLevel(fallback.value) : undefined;
        facts.levelRoutines.push({ name: routine.name.toLowerCase(), at: ref(write.span), setting: finding.setting, parameter: finding.parameter, index, ...(defaultLevel !== undefined ? { defaultLevel } : {}) });
        continue;
      }
      const routine = statement.routine && statement.routine.kind !== 'do' ? statement.routine.name.toLowerCase() : undefined;
      facts.findings.push({
        at: ref(write.span),
        messageId: finding.messageId,
        data: finding.data,
        ...(routine ? { routine } : {}),
        ...(finding.suggestion ? { suggestion: finding.suggestion } : {}),
        ...(isNamedQuery(site) && !statement.routine ? { namedQuery: true } : {}),
        ...(finding.onParameter ? { onParameter: finding.onParameter } : {}),
      });
    }
  }
  return facts;
}

/**
 * Per routine definition (by where its CREATE starts), the settings it saves and puts back: it reads the setting's
 * current value before it first writes it at session level, and writes it again with a value that is no literal
 * (`v_old := current_setting('search_path'); set_config('search_path', 'part,' || v_old, false); ...;
 * set_config('search_path', v_old, false)`), also after a local write for its work. Its caller gets the setting back as it was: on return, from the
 * routine, and on an error, from the rollback, which undoes a session-level write of the failed transaction too.
 */
function restoredSettings(file: FileModel): Map<number, Set<string>> {
  type Seen = { readFirst: boolean; writes: number; sessionWrites: number; lastLiteral: boolean };
  const byRoutine = new Map<number, Map<string, Seen>>();
  for (const { site, statement } of statementsOf(file)) {
    const at = statement.routine?.span?.start;
    if (at === undefined) continue;
    const settings = byRoutine.get(at) ?? new Map<string, Seen>();
    byRoutine.set(at, settings);
    for (const read of statement.settingReads) {
      if (read.setting && !settings.has(read.setting)) settings.set(read.setting, { readFirst: true, writes: 0, sessionWrites: 0, lastLiteral: false });
    }
    for (const write of statement.settingWrites) {
      if (!write.name || (write.via !== 'set' && write.via !== 'set_config')) continue;
      const resolved = resolveWrite(write, site.params);
      const seen = settings.get(write.name) ?? { readFirst: false, writes: 0, sessionWrites: 0, lastLiteral: false };
      // A local write before the session-level one counts too: save, SET LOCAL for the work, then write the saved value
      // back at session level (`set_config('search_path', v_saved, false)`) is a restore as much as two session writes.
      if (resolved.level !== 'session') {
        settings.set(write.name, { ...seen, writes: seen.writes + 1 });
        continue;
      }
      // In SQL an EXECUTE builds, a variable concatenated into a quoted value ('...''' || v_old || '''...') reads as $N inside the literal.
      const holdsVariable = statement.dynamic !== undefined && typeof resolved.literal === 'string' && /\$\d/.test(resolved.literal);
      // A value the caller passes (a parameter, a placeholder) is the caller's choice, no value the routine saved.
      const fromCaller = write.value?.kind === 'routine-parameter' || write.value?.kind === 'placeholder';
      const lastLiteral = (resolved.constant && !holdsVariable) || fromCaller;
      settings.set(write.name, { ...seen, writes: seen.writes + 1, sessionWrites: seen.sessionWrites + 1, lastLiteral });
    }
  }
  const out = new Map<number, Set<string>>();
  for (const [at, settings] of byRoutine) {
    const names = [...settings].filter(([, s]) => s.readFirst && s.writes >= 2 && s.sessionWrites >= 1 && !s.lastLiteral).map(([name]) => name);
    if (names.length > 0) out.set(at, new Set(names));
  }
  return out;
}

/**
 * A named query of a query file (sqlc, aiosql, yesql, pgtyped): the SQL front
 * end gives its top-level statements an unknown scope, as the application
 * runs each where it chooses.
 */
function isNamedQuery(site: SqlSite): boolean {
  return site.driver === 'sql' && site.scope.kind === 'unknown';
}

/** The settings a statement clears at session level: RESET x, SET x TO DEFAULT, set_config(x, '', false); `*` for RESET ALL and DISCARD ALL. */
function queryResetsOf(site: SqlSite, statement: StatementFacts): string[] {
  return statement.routine ? [] : sessionClears(site, statement);
}

/**
 * A routine called from host code on a connection that goes back to a pool for other tenants' jobs, with what the
 * code clears before that (a finally's resets, the pool's own reset on release). Undefined where the connection
 * is not known to be pooled, serves one tenant, or the transaction never commits.
 */
function pooledCall(file: FileModel, site: SqlSite): { resets: string[] } | undefined {
  if (site.driver === 'sql' || site.callback) return undefined;
  if (site.connection.kind !== 'pool' && site.connection.kind !== 'pooled-client') return undefined;
  const config = configOf(file, site);
  if (servesOneTenant(config)) return undefined;
  if (site.scope.kind === 'transaction' && site.scope.neverCommits) return undefined;
  // A pool that resets every connection on release (DISCARD ALL, RESET ALL): a name no setting has stands for any.
  if (releaseClears(config, '\u0000')) return { resets: ['*'] };
  return { resets: site.resetInFinally ?? [] };
}

/** Settings RESET ALL leaves as they are (GUC_NO_RESET_ALL); DISCARD ALL resets them too. */
const KEPT_BY_RESET_ALL = new Set(['role', 'session_authorization']);

/**
 * A later statement of the same host text resets the setting (`SET SESSION AUTHORIZATION "u1"; GRANT ...; RESET
 * SESSION AUTHORIZATION` in one execute). A text of several statements goes as one simple query, which PostgreSQL
 * runs as one implicit transaction: either every statement runs, the reset too, or the failed one aborts it and the
 * write is rolled back with it. Not across a COMMIT or BEGIN in the text, nor in a .sql file, whose statements psql
 * and the migration tools send one at a time.
 */
function resetLaterInText(site: SqlSite, statement: StatementFacts, name: string): boolean {
  if (site.driver === 'sql' || statement.routine) return false;
  const statements = site.analysis.statements;
  const at = statements.indexOf(statement);
  if (at < 0) return false;
  for (const later of statements.slice(at + 1)) {
    if (later.transaction || later.routine) return false;
    if (resetsSetting(later, site, name, (write) => write.clears && write.level === 'session')) return true;
  }
  return false;
}

/**
 * The statement resets the setting `name` (DISCARD ALL, RESET ALL unless it keeps `name`, RESET name), or writes it
 * with SET or set_config in a way `rewrites` accepts.
 */
function resetsSetting(statement: StatementFacts, site: SqlSite, name: string, rewrites: (write: ResolvedWrite) => boolean): boolean {
  if (statement.discard === 'all') return true;
  for (const write of statement.settingWrites) {
    if (write.via === 'reset_all' && !KEPT_BY_RESET_ALL.has(name)) return true;
    if (write.via === 'reset' && write.name === name) return true;
    if (write.via === 'set' || write.via === 'set_config') {
      const resolved = resolveWrite(write, site.params);
      if (resolved.name === name && rewrites(resolved)) return true;
    }
  }
  return false;
}

/** A name a hook's skip path writes (hook-skips.ts: the setting, '*' for DISCARD ALL, '*reset-all') covers the setting `name`. */
function coversSetting(written: string, name: string): boolean {
  return written === name || written === '*' || (written === '*reset-all' && !KEPT_BY_RESET_ALL.has(name));
}

function sessionClears(site: SqlSite, statement: StatementFacts): string[] {
  const out: string[] = statement.discard === 'all' ? ['*'] : [];
  for (const write of statement.settingWrites) {
    if (write.via === 'reset_all') out.push('*');
    else if (write.via === 'reset' && write.name) out.push(write.name);
    else if (write.via === 'set' || write.via === 'set_config') {
      const resolved = resolveWrite(write, site.params);
      if (resolved.clears && resolved.level === 'session' && resolved.name) out.push(resolved.name);
    }
  }
  return out;
}

type Judgement =
  /** `onParameter`: the connection is the one the callers hand in as that parameter; a single-connection client from each of them keeps the write to one job. */
  | { kind: 'report'; messageId: keyof typeof messages; data: Record<string, string>; suggestion?: Suggestion; onParameter?: ParameterRef }
  | { kind: 'level-from-parameter'; setting: string; parameter: string };

function judge(
  file: FileModel,
  site: SqlSite,
  statement: StatementFacts,
  write: SettingWrite,
  isTenant: (name: string | undefined) => boolean,
  isRequestScoped: (name: string | undefined) => boolean,
): Judgement | undefined {
  // Pool callbacks: configure= and checkout hooks run the same for every tenant before any job, reset= clears.
  // Unless a checkout hook has a path that skips the write (`if tenant is None: return`): that job keeps the last one's.
  const skipped = site.callback?.role === 'checkout' ? site.callback.skipped : undefined;
  // A hook run once per new connection writes the same value for every job, unless that value is the request's or
  // job's that happened to open the connection (a ContextVar, a thread-local): then every later job inherits it.
  const opener = site.callback?.role === 'configure' && fromRequest(write, site) ? site.callback : undefined;
  if (site.callback && !skipped && !opener) return undefined;
  const config = configOf(file, site);
  // Pools and clients whose session state cannot reach another tenant's job.
  if (servesOneTenant(config)) return undefined;
  // Undone before another job can see it: a transaction rolled back on every path.
  if (site.scope.kind === 'transaction' && site.scope.neverCommits) return undefined;
  const resolved = resolveWrite(write, site.params);
  if (resolved.clears) return undefined;
  // Or the driver's own reset on release (asyncpg's RESET ALL, a pool's DISCARD ALL).
  if (resolved.level !== 'local' && resolved.name !== undefined && releaseClears(config, resolved.name)) return undefined;
  // Or the code's own: a finally around the write resets it on that connection before releasing it.
  if (resolved.name !== undefined && site.resetInFinally?.some((n) => n === '*' || n === resolved.name)) return undefined;
  // Or a later statement of the same text: the reset runs, or the write is rolled back with the statement that failed.
  if (resolved.name !== undefined && resetLaterInText(site, statement, resolved.name)) return undefined;
  const inRoutine = statement.routine !== undefined && statement.routine.kind !== 'do';
  const routineName = !statement.routine ? '' : statement.routine.kind === 'do' ? 'This DO block' : `${statement.routine.kind} ${statement.routine.name}`;

  // A setter whose name its callers pass: every tenant setting that goes through it is written this way.
  if (resolved.name === undefined) {
    if (!resolved.nameChosenBy || resolved.level !== 'session') return undefined;
    if (resolved.nameChosenBy.kind === 'routine-parameter' && inRoutine) {
      return { kind: 'report', messageId: 'genericSetter', data: { routine: routineName, parameter: resolved.nameChosenBy.name } };
    }
    if (resolved.nameChosenBy.kind === 'caller-parameter' && site.connection.kind !== 'dedicated') {
      return { kind: 'report', messageId: 'genericHelper', data: { function: site.functionName ?? 'This helper', parameter: resolved.nameChosenBy.name }, ...handed(site) };
    }
    return undefined;
  }
  if (!isTenant(resolved.name) || isRequestScoped(resolved.name)) return undefined;
  // A search_path written as a literal (`SET search_path = ag_catalog, "$user", public`) is the same for every job that
  // runs the code: it names the schemas the code was written for, not the job's tenant, whose schema comes in a value.
  // So is one filled from the deployment (a schema named in the environment's DATABASE_URL): every job gets the same.
  if (resolved.name === 'search_path' && resolved.constant && !resolved.clears && !holdsHole(resolved.literal, site.deploymentValues)) return undefined;
  // Placeholders the host filled from the deployment, alone or in a list (`"SET search_path TO " + SCHEMA_FROM_ENV`).
  if (resolved.name === 'search_path' && filledFromDeployment(write.value, site.deploymentValues)) return undefined;
  const data = { setting: resolved.name, routine: routineName };
  if (resolved.level === 'unknown') {
    if (resolved.levelChosenBy && inRoutine) return { kind: 'level-from-parameter', setting: resolved.name, parameter: resolved.levelChosenBy };
    return undefined;
  }
  // A write straight before RAISE EXCEPTION is rolled back with the transaction (or the block that catches it).
  if (statement.plpgsql?.raisesNext) return undefined;
  // A local write leaks nothing, wherever it lands: it ends with its transaction (on the pool, with its own
  // statement). That it then does nothing is no-local-setting-outside-transaction's finding.
  if (resolved.level !== 'session') return undefined;
  if (opener) {
    // A checkout hook of the same pool that writes or clears it on every path: the opener's value never reaches a job.
    if (rewrittenAtCheckout(file, opener.configId, resolved.name)) return undefined;
    return { kind: 'report', messageId: 'openerValue', data };
  }
  if (skipped) {
    const name = resolved.name;
    // The skip path writes or clears it too: every use of the connection starts from a value this hook chose.
    if (skipped.writtenElsewhere.some((n) => coversSetting(n, name))) return undefined;
    return { kind: 'report', messageId: 'skippedInHook', data: { ...data, how: skipped.how } };
  }
  if (site.connection.kind === 'pool') return { kind: 'report', messageId: 'onPool', data };
  // A routine's body runs where it is called; one whose only callers are on a dedicated connection (a regression
  // test's helper, called on psql's connection to the test's database) runs there.
  if (inRoutine && site.connection.kind !== 'dedicated') return { kind: 'report', messageId: 'routine', data };
  if (site.connection.kind === 'dedicated') return undefined; // a connection the job (or psql, or the migration tool) opened and closes itself
  if (statement.routine) return { kind: 'report', messageId: 'routine', data, ...handed(site) }; // a DO block, on the file's connection
  // A .sql file's own search_path and role, at its top or in its own BEGIN ... COMMIT (a migration, a pg_dump).
  if (site.driver === 'sql' && IDENTITY.has(resolved.name) && (site.scope.kind === 'script' || site.scope.kind === 'transaction')) return undefined;
  // Inside the job's transaction the local form is the fix; outside one it would do nothing (no-local-setting-outside-transaction).
  const suggestion = site.scope.kind === 'transaction' ? localForm(file.text, write) : undefined;
  // A flag (app.is_platform_admin = 'false') carries a permission or a mode to the next job, not a tenant.
  const flag = flagValue(resolved.literal);
  if (flag !== undefined) return { kind: 'report', messageId: 'sessionFlag', data: { ...data, value: flag }, ...(suggestion ? { suggestion } : {}), ...handed(site) };
  return { kind: 'report', messageId: 'session', data, ...(suggestion ? { suggestion } : {}), ...handed(site) };
}

/** A write whose value holds a placeholder the front end filled from the current request or job. */
function fromRequest(write: SettingWrite, site: SqlSite): boolean {
  const request = site.requestValues;
  if (!request?.length) return false;
  const value = write.value;
  const holes = value?.kind === 'placeholder' ? [value.index] : value?.kind === 'expression' ? (value.placeholders ?? []) : value?.kind === 'literal' ? literalHoles(value.value) : [];
  return holes.some((n) => request.includes(n));
}

/** The placeholders the front end built a literal around (`tenant_$1, public`, the analyzer's `pgq_param_1`), by number. */
function literalHoles(literal: string | number | boolean | null | undefined): number[] {
  return typeof literal === 'string' ? [...literal.matchAll(/\$(\d+)|pgq_param_(\d+)/g)].map((m) => Number(m[1] ?? m[2])) : [];
}

/**
 * A checkout hook of the pool `configId` writes or clears `name` before every use of the connection: on every path
 * (or its skip paths write it too), by name, with DISCARD ALL, or with RESET ALL for a setting RESET ALL resets.
 */
function rewrittenAtCheckout(file: FileModel, configId: string, name: string): boolean {
  for (const { site, statement } of statementsOf(file)) {
    const hook = site.callback;
    if (hook?.role !== 'checkout' || hook.configId !== configId) continue;
    if (hook.skipped && !hook.skipped.writtenElsewhere.some((n) => coversSetting(n, name))) continue;
    if (resetsSetting(statement, site, name, () => true)) return true;
  }
  return false;
}

/** A site on a connection its function's callers hand in (a parameter the front end cannot type): which one is theirs to say. */
function handed(site: SqlSite): { onParameter?: ParameterRef } {
  return site.clientParameter ? { onParameter: site.clientParameter } : {};
}

/** A value whose every placeholder (`$1`, `$1, public`) the host filled with a value of the deployment. */
function filledFromDeployment(value: SettingWrite['value'], deploymentValues: readonly number[] = []): boolean {
  const holes = value?.kind === 'placeholder' ? [value.index] : value?.kind === 'expression' ? value.placeholders : undefined;
  return !!holes && holes.length > 0 && holes.every((n) => deploymentValues.includes(n));
}

/** A literal the front end built around a value it filled in: `tenant_$1, public`, `{schema}, public` (`$user` is PostgreSQL's own). */
function holdsHole(literal: string | number | boolean | null | undefined, deploymentValues: readonly number[] = []): boolean {
  if (typeof literal !== 'string') return false;
  if (/\{[^}]*\}/.test(literal)) return true;
  // A placeholder the host filled from the deployment is not a job's value.
  return literalHoles(literal).some((n) => !deploymentValues.includes(n));
}

/** PostgreSQL's words for a boolean (not 1/0, t/f, y/n: those are as likely a tenant's id or code), as written. */
const FLAG_WORDS = new Set(['true', 'false', 'on', 'off', 'yes', 'no']);

function flagValue(literal: string | number | boolean | null | undefined): string | undefined {
  if (typeof literal === 'boolean') return String(literal);
  return typeof literal === 'string' && FLAG_WORDS.has(literal.trim().toLowerCase()) ? `'${literal}'` : undefined;
}

function decide(files: readonly FileFacts<SessionFacts>[], { place }: { place: (file: string, ref: Ref, from: string) => string }): Decision[] {
  const hooks = new Set(files.flatMap(({ facts }) => facts.preRequest.map(bare)));
  // A query file that also offers the setting's reset: the application pairs them (set at checkout, reset at release,
  // as pgx's BeforeAcquire and AfterRelease do), in code that may not be scanned. Whether it calls the reset is unknown.
  const queryResets = new Set(files.flatMap(({ facts }) => facts.queryResets ?? []));
  // Which connections the calls these files show hand a parameter: a single-connection client (`new Client()`) from each is one job's.
  let handedTo: ReturnType<typeof handedConnections> | undefined;
  const onlyOneJobs = (p: ParameterRef) =>
    onlyDedicated((handedTo ??= handedConnections({ handedValues: files.flatMap(({ facts }) => facts.handedValues), escapedFunctions: files.flatMap(({ facts }) => facts.escapedFunctions) }))(p));
  const out: Decision[] = [];
  for (const { file, facts } of files) {
    for (const f of facts.findings) {
      if (f.routine && hooks.has(bare(f.routine))) continue; // PostgREST runs it first in every request: its value never reaches another request
      if (f.onParameter && onlyOneJobs(f.onParameter)) continue;
      if (f.namedQuery && f.data.setting && (queryResets.has(f.data.setting) || queryResets.has('*'))) continue;
      out.push({ file, at: f.at, messageId: f.messageId, data: f.data });
    }
  }
  out.push(...pooledRoutineCalls(files, hooks, place));
  // A routine whose level is a parameter: the calls that pass false write at session level.
  const byName = new Map<string, { file: string; routine: SessionFacts['levelRoutines'][number] }[]>();
  for (const { file, facts } of files) {
    for (const routine of facts.levelRoutines) {
      if (hooks.has(bare(routine.name))) continue;
      const list = byName.get(bare(routine.name)) ?? [];
      list.push({ file, routine });
      byName.set(bare(routine.name), list);
    }
  }
  if (byName.size === 0) return out;
  for (const { file, facts } of files) {
    for (const call of facts.calls) {
      for (const { file: routineFile, routine } of byName.get(bare(call.name)) ?? []) {
        if (call.name.includes('.') && routine.name.includes('.') && call.name !== routine.name) continue;
        const named = call.args.find((a) => a.name === routine.parameter);
        const positional = routine.index >= 0 && call.args.filter((a) => !a.name).length > routine.index ? call.args[routine.index] : undefined;
        const arg = named ?? (positional && !positional.name ? positional : undefined);
        const level = arg ? (arg.value.kind === 'literal' ? asLevel(arg.value.value) : undefined) : routine.defaultLevel;
        if (level !== false) continue;
        out.push({
          file,
          at: call.at,
          messageId: 'routineCall',
          data: { routine: bare(routine.name), parameter: routine.parameter, setting: routine.setting, where: place(routineFile, routine.at, file) },
        });
      }
    }
  }
  return out;
}

/**
 * Calls from host code, on a pooled connection, of a routine the .sql files define with a session-level write of
 * a tenant setting: reported at the call, as if the write were there, unless the code clears each such setting
 * before the connection goes back (itself, or by calling a routine that clears it, in a finally).
 */
function pooledRoutineCalls(files: readonly FileFacts<SessionFacts>[], hooks: ReadonlySet<string>, place: (file: string, ref: Ref, from: string) => string): Decision[] {
  const writes = new Map<string, { file: string; at: Ref; name: string; settings: string[] }>();
  for (const { file, facts } of files) {
    for (const f of facts.findings) {
      if (!f.routine || f.messageId !== 'routine' || !f.data.setting || hooks.has(bare(f.routine))) continue;
      const known = writes.get(f.routine) ?? { file, at: f.at, name: f.routine, settings: [] };
      if (!known.settings.includes(f.data.setting)) known.settings.push(f.data.setting);
      writes.set(f.routine, known);
    }
  }
  if (writes.size === 0) return [];
  const clears = new Map<string, string[]>();
  for (const { facts } of files) for (const r of facts.routineResets ?? []) clears.set(r.name, [...(clears.get(r.name) ?? []), ...r.settings]);
  /** The routine a call names: by its qualified name, or by its bare one when only one routine has it. */
  const routineOf = <T>(byName: ReadonlyMap<string, T>, name: string): T | undefined => {
    if (byName.has(name)) return byName.get(name);
    if (name.includes('.')) return undefined;
    const bareMatches = [...byName.keys()].filter((k) => bare(k) === name);
    return bareMatches.length === 1 ? byName.get(bareMatches[0]) : undefined;
  };
  const out: Decision[] = [];
  for (const { file, facts } of files) {
    for (const call of facts.pooledCalls ?? []) {
      const routine = routineOf(writes, call.name);
      if (!routine) continue;
      const cleared = new Set(call.resets.flatMap((r) => (r.startsWith('call:') ? (routineOf(clears, r.slice(5)) ?? []) : [r])));
      const left = cleared.has('*') ? [] : routine.settings.filter((setting) => !cleared.has(setting));
      if (left.length === 0) continue;
      out.push({ file, at: call.at, messageId: 'pooledRoutineCall', data: { routine: routine.name, where: place(routine.file, routine.at, file), settings: left.map((x) => `'${x}'`).join(', ') } });
    }
  }
  return out;
}

// The check reads the facts for their suggestions, and the project pass collects the same facts.
const factsOf = readOnce(read);
const parts = crossFileParts<Options, SessionFacts>(factsOf, (files, context) => decide(files, context));

export default defineRule<Options, SessionFacts>({
  id: 'no-session-tenant-setting',
  description: 'Disallow session-level writes of tenant settings on pooled connections',
  messages,
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: {
    type: 'object',
    properties: { settings: settingsOptionSchema, requestSettings: requestSettingsOptionSchema },
    additionalProperties: false,
  },
  defaultOptions: {},
  // .rpc(: Supabase's call of a routine whose level parameter the call passes.
  // A module that checks a client out or opens one may hand it to a function whose session write then runs on it.
  triggers: ['set_config', SET_STATEMENT, '.rpc(', { byLanguage: { typescript: /poolclient|reservedsql|\.(?:connect|reserve)\(\s*\)/i } }],
  hasSuggestions: true,
  check({ file, options, report }) {
    // The per-file part, with the suggestions the facts carry.
    const facts = factsOf(file, options);
    const suggestions = new Map(facts.findings.filter((f) => f.suggestion).map((f) => [`${f.at.span.start}:${f.at.span.end}`, f.suggestion!]));
    const place = (other: string, ref: Ref, from: string) => (other === from ? `line ${ref.loc.line}` : `${displayPath(other)}:${ref.loc.line}`);
    for (const d of decide([{ file: file.file, facts }], { place })) {
      if (d.file !== file.file) continue;
      const suggestion = suggestions.get(`${d.at.span.start}:${d.at.span.end}`);
      report({ messageId: d.messageId, data: d.data, span: d.at.span, ...(suggestion ? { suggestions: [suggestion] } : {}) });
    }
  },
  collect: parts.collect,
  checkProject: parts.checkProject,
});

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
