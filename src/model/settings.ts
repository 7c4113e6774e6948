// Which settings carry tenant context. A custom dotted setting (app.tenant,
// app.current_tenant_id, request.jwt.claims) is one unless an extension owns
// its prefix; search_path and role leak the same way in schema-per-tenant and
// role-per-tenant designs.
import picomatch from 'picomatch';

/** Prefixes of custom settings that extensions and PostgreSQL modules own: configuration, not tenant context. */
export const EXTENSION_PREFIXES = [
  'pg_stat_statements', 'auto_explain', 'pg_trgm', 'pgaudit', 'plpgsql', 'pg_hint_plan', 'timescaledb', 'citus',
  'pglogical', 'cron', 'pg_cron', 'postgis', 'anon', 'pgsodium', 'pg_partman_bgw', 'pg_prewarm', 'pg_wait_sampling',
  'pg_qualstats', 'pg_squeeze', 'pgrouting', 'plv8', 'plperl', 'plpython', 'pltcl', 'orafce', 'pg_repack', 'pg_net',
  'pgtle', 'vectors', 'ivfflat', 'hnsw', 'neon', 'rds', 'azure', 'cloudsql', 'alloydb', 'google_columnar_engine',
  'supautils', 'safeupdate', 'pg_stat_monitor', 'pg_store_plans', 'powa', 'wal2json', 'bdr', 'pgactive', 'pg_failover_slots',
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
  if (IDENTITY_SETTINGS.includes(name)) return true;
  if (!isCustomSetting(name)) return false;
  const prefix = name.slice(0, name.indexOf('.'));
  return !EXTENSION_PREFIXES.includes(prefix);
}

/** `globs` replaces the default when given (e.g. ["app.tenant*", "search_path"]). */
export function tenantSettingMatcher(globs: readonly string[] | undefined): TenantSettingMatcher {
  if (!globs || globs.length === 0) {
    const matcher = ((name: string | undefined) => name !== undefined && defaultTenantSetting(name)) as TenantSettingMatcher;
    Object.defineProperty(matcher, 'describe', { value: 'custom settings, search_path and role' });
    return matcher;
  }
  const test = picomatch(globs.map((g) => g.toLowerCase()));
  const matcher = ((name: string | undefined) => name !== undefined && test(name)) as TenantSettingMatcher;
  Object.defineProperty(matcher, 'describe', { value: globs.join(', ') });
  return matcher;
}

/** The JSON schema of the shared `settings` option. */
export const settingsOptionSchema = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Globs of the settings that carry tenant context. Replaces the default: every custom dotted setting (app.tenant, ...) except extension prefixes, plus search_path and role.',
} as const;
