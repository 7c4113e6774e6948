// What happens to a connection's session state when the job gives it back:
// whether a session-level setting written on it can reach another job.
// Front ends fill ConnectionConfig.reuse and driverReset; this reads them.
import type { ConnectionConfig, FileModel, SqlSite } from './types.ts';

/** Settings RESET ALL leaves alone (PostgreSQL 17: measured through an asyncpg pool). */
const SURVIVE_RESET_ALL = new Set(['role', 'session_authorization']);

/** Whether the connection serves one job's tenant only: not reused, one connection a script ends, a pool per tenant. */
export function servesOneTenant(config: ConnectionConfig | undefined): boolean {
  return config?.reuse === 'no-reuse' || config?.reuse === 'single-connection' || config?.reuse === 'per-tenant';
}

/** The configuration of the pool or client a site runs on, when the file knows it. */
export function configOf(file: FileModel, site: SqlSite): ConnectionConfig | undefined {
  const id = site.connection.configId;
  return id ? file.connections.find((c) => c.id === id) : undefined;
}

/**
 * Why a session-level write of `setting` on this connection cannot reach
 * another job, or undefined when it can: the connection is not reused
 * (NullPool, CONN_MAX_AGE=0, a one-connection script, a per-tenant pool), or
 * the driver's own reset on release undoes it (asyncpg's RESET ALL, DISCARD ALL).
 */
export function releaseClears(config: ConnectionConfig | undefined, setting: string | undefined): string | undefined {
  if (!config) return undefined;
  if (servesOneTenant(config)) return config.reuse;
  const statements = (config.driverReset?.statements ?? []).map((s) => s.trim().replace(/;$/, '').replace(/\s+/g, ' ').toUpperCase());
  if (statements.includes('DISCARD ALL')) return 'driver-reset';
  if (statements.includes('RESET ALL') && setting !== undefined && !SURVIVE_RESET_ALL.has(setting)) return 'driver-reset';
  if (setting !== undefined && statements.includes(`RESET ${setting.toUpperCase()}`)) return 'driver-reset';
  return undefined;
}
