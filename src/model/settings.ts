// Which settings carry tenant context. A custom dotted setting (app.tenant,
// app.current_tenant_id, request.jwt.claims) is one unless an extension owns
// its prefix; search_path and role leak the same way in schema-per-tenant and
// role-per-tenant designs.
import picomatch from 'picomatch';
import type { SettingWrite } from '../sql/index.ts';
import type { HostParam } from './types.ts';

/** Prefixes of custom settings that extensions and PostgreSQL modules own: configuration, not tenant context. */
export const EXTENSION_PREFIXES = [
  'pg_stat_statements', 'auto_explain', 'pg_trgm', 'pgaudit', 'plpgsql', 'pg_hint_plan', 'timescaledb', 'citus',
  'pglogical', 'cron', 'pg_cron', 'postgis', 'anon', 'pgsodium', 'pg_partman_bgw', 'pg_prewarm', 'pg_wait_sampling',
  'pg_qualstats', 'pg_squeeze', 'pgrouting', 'plv8', 'plperl', 'plpython', 'pltcl', 'orafce', 'pg_repack', 'pg_net',
  'pgtle', 'vectors', 'ivfflat', 'hnsw', 'neon', 'rds', 'azure', 'cloudsql', 'alloydb', 'google_columnar_engine',
  'supautils', 'safeupdate', 'pg_stat_monitor', 'pg_store_plans', 'powa', 'wal2json', 'bdr', 'pgactive', 'pg_failover_slots',
  'columnar',
];

/** Settings that select a tenant's schema or role. */
export const IDENTITY_SETTINGS = ['search_path', 'role', 'session_authorization'];

export interface TenantSettingMatcher {
  (name: string | undefined): boolean;
  /** The matcher's description, for messages and docs. */
  readonly describe: string;
}

export function isCustomSetting(name: string): boolean {
  return name.includes('.');
}

export function defaultTenantSetting(name: string): boolean {
  return IDENTITY_SETTINGS.includes(name) || isApplicationSetting(name);
}

/**
 * A custom setting no known extension owns: the application's (app.tenant). An extension registers its own
 * (citus.shard_count) with a default when its library loads, so RESET gives that default back, never ''.
 */
export function isApplicationSetting(name: string): boolean {
  if (!isCustomSetting(name)) return false;
  return !EXTENSION_PREFIXES.includes(name.slice(0, name.indexOf('.')));
}

/** `globs` replaces the default when given (e.g. ["app.tenant*", "search_path"]). */
export function tenantSettingMatcher(globs: readonly string[] | undefined): TenantSettingMatcher {
  if (!globs || globs.length === 0) return DEFAULT_TENANT_MATCHER;
  // Rules ask once per file with their options' one array: its matcher is made once (defineProperty on a new function is not cheap).
  let matcher = tenantMatchers.get(globs);
  if (matcher) return matcher;
  const test = globMatcher(globs);
  matcher = ((name: string | undefined) => name !== undefined && test(name)) as TenantSettingMatcher;
  Object.defineProperty(matcher, 'describe', { value: globs.join(', ') });
  tenantMatchers.set(globs, matcher);
  return matcher;
}

const DEFAULT_TENANT_MATCHER = ((name: string | undefined) => name !== undefined && defaultTenantSetting(name)) as TenantSettingMatcher;
Object.defineProperty(DEFAULT_TENANT_MATCHER, 'describe', { value: 'custom settings, search_path and role' });
const tenantMatchers = new WeakMap<readonly string[], TenantSettingMatcher>();

/** The JSON schema of the shared `settings` option. */
export const settingsOptionSchema = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Globs of the settings that carry tenant context. Replaces the default: every custom dotted setting (app.tenant, ...) except extension prefixes, plus search_path and role.',
} as const;

/** Settings a request-scoped server writes at the start of every request's transaction: PostgREST's request.jwt.claims, request.headers, request.method, ... */
export const REQUEST_SCOPED_DEFAULT = ['request.*'];

/** The JSON schema of the `requestSettings` option. */
export const requestSettingsOptionSchema = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Globs of the settings a request-scoped server (PostgREST, Supabase) rewrites at the start of every request, so a leftover value never reaches the next request. Default ["request.*"] except PostgREST\'s per-claim, per-header and per-cookie settings (request.jwt.claim.role excepted), which it writes only in the requests that carry them; [] checks them like any tenant setting.',
} as const;

/**
 * PostgREST before v10 (v9 with db-use-legacy-gucs) also wrote one setting per
 * JWT claim, header and cookie of the request (`request.jwt.claim.user_id`,
 * `request.header.x-tenant`): only those the request carries, so a request
 * without the claim reads what an earlier request on the connection left — ''
 * after a local write — and is not covered by the default. The role claim is
 * always written: PostgREST fills it with the anonymous role.
 */
const PER_ITEM_REQUEST_SETTINGS = ['request.jwt.claim.*', 'request.header.*', 'request.cookie.*'];
const ALWAYS_WRITTEN_ITEMS = ['request.jwt.claim.role'];

export function requestScopedMatcher(globs: readonly string[] | undefined): (name: string | undefined) => boolean {
  const list = globs ?? REQUEST_SCOPED_DEFAULT;
  if (list.length === 0) return () => false;
  const test = globMatcher(list);
  if (globs) return (name) => name !== undefined && test(name);
  const perItem = globMatcher(PER_ITEM_REQUEST_SETTINGS);
  return (name) => name !== undefined && test(name) && (!perItem(name) || ALWAYS_WRITTEN_ITEMS.includes(name));
}

/** Where a setting write takes its name, level and value, with the host's placeholder values applied. */
export interface ResolvedWrite {
  name: string | undefined;
  level: 'local' | 'session' | 'unknown';
  /** The value written is NULL, '' or DEFAULT: the write clears the setting. */
  clears: boolean;
  /** The value is a literal (the same for every job). */
  constant: boolean;
  /** The literal written, when it is one. */
  literal?: string | number | boolean | null;
  /** The name is chosen by the callers of the enclosing host function or routine: its parameter's name. */
  nameChosenBy?: { kind: 'routine-parameter' | 'caller-parameter'; name: string };
  /** The level is chosen by a parameter of the enclosing routine. */
  levelChosenBy?: string;
}

function hostParam(params: readonly HostParam[] | undefined, index: number): HostParam | undefined {
  return params?.[index - 1];
}

export function resolveWrite(write: SettingWrite, params: readonly HostParam[] | undefined): ResolvedWrite {
  const resolved: ResolvedWrite = { name: write.name, level: write.level, clears: false, constant: false };
  if (resolved.name === undefined && write.nameFrom) {
    if (write.nameFrom.kind === 'routine-parameter') resolved.nameChosenBy = { kind: 'routine-parameter', name: write.nameFrom.name };
    else {
      const param = hostParam(params, write.nameFrom.index);
      if (param?.kind === 'literal' && typeof param.value === 'string') resolved.name = param.value.toLowerCase();
      else if (param?.kind === 'caller-parameter') resolved.nameChosenBy = { kind: 'caller-parameter', name: param.name };
    }
  }
  if (resolved.level === 'unknown' && write.levelFrom) {
    if (write.levelFrom.kind === 'routine-parameter') resolved.levelChosenBy = write.levelFrom.name;
    else {
      const param = hostParam(params, write.levelFrom.index);
      const local = param?.kind === 'literal' ? asLevel(param.value) : undefined;
      if (local !== undefined) resolved.level = local ? 'local' : 'session';
    }
  }
  let value = write.value;
  if (value?.kind === 'placeholder') {
    const param = hostParam(params, value.index);
    if (param?.kind === 'literal') value = { kind: 'literal', value: param.value };
  }
  if (value?.kind === 'default') resolved.clears = true;
  if (value?.kind === 'literal') {
    resolved.constant = true;
    resolved.literal = value.value;
    if (value.value === null || value.value === '') resolved.clears = true;
  }
  return resolved;
}

/** set_config's third argument as PostgreSQL reads it: true/false, 'on'/'off', 1/0 ... */
export function asLevel(value: string | number | boolean | null): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['true', 't', 'on', 'yes', 'y', '1'].includes(v)) return true;
    if (['false', 'f', 'off', 'no', 'n', '0'].includes(v)) return false;
  }
  return undefined;
}

/** Rules build their matchers once per file: compile each list of globs once per process. */
const compiled = new Map<string, (name: string) => boolean>();
/** The same, by the list itself (a rule's options, a constant): no key to build for each file. */
const compiledLists = new WeakMap<readonly string[], (name: string) => boolean>();

function globMatcher(globs: readonly string[]): (name: string) => boolean {
  const known = compiledLists.get(globs);
  if (known) return known;
  const lower = globs.map((g) => g.toLowerCase());
  const key = JSON.stringify(lower);
  let test = compiled.get(key);
  if (!test) compiled.set(key, (test = picomatch(lower)));
  compiledLists.set(globs, test);
  return test;
}
