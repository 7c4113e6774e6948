// The one connection `pgq-audit db` opens: node-postgres (an optional peer
// dependency, loaded only here), a URL or the PG* environment variables, and
// one read-only transaction with a statement timeout that is rolled back at
// the end. Every failure becomes a DatabaseError: one line naming the cause
// and the fix, never the password.
import type { Client, ClientConfig } from 'pg';
import { importModule } from '../import-module.ts';

export class DatabaseError extends Error {
  override name = 'DatabaseError';
}

export interface ConnectOptions {
  /** postgres://user:password@host:port/database?sslmode=...; undefined: the PG* environment variables. */
  url?: string;
  /** Per statement, in ms (SET LOCAL statement_timeout). */
  statementTimeout: number;
  /** To establish the connection, in ms. */
  connectTimeout: number;
}

/** Where we connect, for messages: user@host:port/database, without the password. */
export interface Target {
  user: string;
  host: string;
  port: number;
  database: string;
}

export function describeTarget(target: Target): string {
  const host = target.host.startsWith('/') ? `socket ${target.host}` : `${target.host}:${target.port}`;
  return `${target.user}@${host}/${target.database}`;
}

type PgModule = { Client: new (config?: string | ClientConfig) => Client };

/** Loads node-postgres; without it, says which package to install. `load` is for tests of that message. */
export async function loadPg(load: () => Promise<unknown> = () => importModule('pg')): Promise<PgModule> {
  try {
    const module = (await load()) as { default?: PgModule } & Partial<PgModule>;
    const pg = module.default ?? (module as PgModule);
    if (typeof pg.Client !== 'function') throw Object.assign(new Error('no Client export'), { code: 'ERR_MODULE_NOT_FOUND' });
    return pg;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new DatabaseError("pgq-audit db needs the 'pg' package (node-postgres 8.11 or later), an optional peer dependency of pgq-audit: install it next to pgq-audit with npm install --save-dev pg");
    }
    throw error;
  }
}

export interface Session {
  target: Target;
  /** Runs one query in the read-only transaction. */
  query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
}

/**
 * Connects, opens one transaction (`BEGIN`, `SET TRANSACTION ISOLATION LEVEL
 * REPEATABLE READ, READ ONLY`: every catalog query sees the same snapshot,
 * and the server refuses any write), sets a statement timeout local to it,
 * runs `work`, and rolls back.
 */
export async function withReadOnlySession<T>(options: ConnectOptions, work: (session: Session) => Promise<T>, pg?: PgModule): Promise<T> {
  const { Client } = pg ?? (await loadPg());
  let client: Client;
  try {
    client = new Client({
      ...(options.url !== undefined ? { connectionString: options.url } : {}),
      connectionTimeoutMillis: options.connectTimeout,
      // A server that stops answering mid-query must not hang the CLI: the client gives up a little after the server would.
      query_timeout: options.statementTimeout + 5000,
      application_name: 'pgq-audit',
    });
  } catch (error) {
    // node-postgres parses the URL and reads its sslcert, sslkey and sslrootcert files here.
    throw urlError(error, options.url);
  }
  const parameters = (client as unknown as { connectionParameters: Target & { host: string } }).connectionParameters;
  const target: Target = { user: String(parameters.user ?? ''), host: String(parameters.host ?? 'localhost'), port: Number(parameters.port ?? 5432), database: String(parameters.database ?? parameters.user ?? '') };
  // An error on an idle client (the server ending the session) must not crash the process: the next
  // query fails with "not queryable", and the message reports this error, its cause.
  let lostWith: unknown;
  client.on('error', (error) => {
    lostWith ??= error;
  });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw connectError(error, target, options, Boolean((parameters as { password?: unknown }).password));
  }
  let phase = 'opening the read-only transaction';
  try {
    await client.query('BEGIN');
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // Before any query that names a function, operator, type or table: the database's or the role's
    // search_path default (ALTER DATABASE ... SET search_path = evil, pg_catalog) would otherwise pick
    // the objects our catalog queries run, as the linting role. pg_temp comes last explicitly: left
    // out, it is searched first for tables and types (never for functions and operators).
    await client.query('SET LOCAL search_path = pg_catalog, pg_temp');
    // Idle between our own queries only while the client works, which is short: a floor keeps a tight
    // --statement-timeout from ending the session before its statements get to time out.
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${idleTimeout(options.statementTimeout)}`);
    // Last: the statements above must not be the ones a 1 ms timeout cancels.
    await client.query(`SET LOCAL statement_timeout = ${statementTimeout(options.statementTimeout)}`);
    const session: Session = {
      target,
      async query<Row>(text: string, values?: unknown[]) {
        phase = text;
        const result = await client.query(text, values);
        return result.rows as Row[];
      },
    };
    const value = await work(session);
    await client.query('ROLLBACK');
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw queryError(lostWith ?? error, target, options, phase);
  } finally {
    await client.end().catch(() => {});
  }
}

const statementTimeout = (ms: number) => Math.max(1, Math.floor(ms));

/** idle_in_transaction_session_timeout: twice the statement timeout, and at least a minute. */
const idleTimeout = (statementMs: number) => Math.max(60_000, 2 * statementTimeout(statementMs));

/** The URL for a message: the password masked, in the user info or as ?password= (a URL that does not parse may still hold one). */
function redactUrl(url: string): string {
  const parts = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!parts) return '(not shown)';
  const [, scheme, authority, rest] = parts;
  const at = authority.lastIndexOf('@');
  const userinfo = authority.slice(0, Math.max(0, at));
  const colon = userinfo.indexOf(':');
  const shownAuthority = at < 0 || colon < 0 ? authority : `${userinfo.slice(0, colon)}:****${authority.slice(at)}`;
  return `${scheme}${shownAuthority}${rest.replace(/([?&]password=)[^&#]*/gi, '$1****')}`;
}

/** The URL's files node-postgres reads, by the parameter that names them. */
const SSL_FILES = ['sslcert', 'sslkey', 'sslrootcert'] as const;

function urlError(error: unknown, url: string | undefined): Error {
  const { code, message, path } = error as { code?: string; message: string; path?: string };
  const shown = url === undefined ? 'the PG* environment variables' : `the connection URL ${redactUrl(url)}`;
  if (code === 'ERR_INVALID_URL') {
    return new DatabaseError(
      `${shown} is not a valid URL. Write it as postgres://user:password@host:port/database, with an IPv6 host in brackets ([::1]) and @, :, / or % in the user name or password percent-encoded (%40, %3A, %2F, %25).`,
    );
  }
  if (path !== undefined && code !== undefined && /^E[A-Z]+$/.test(code)) {
    const option = url === undefined ? undefined : SSL_FILES.find((name) => queryParameter(url, name) === path);
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : code;
    return new DatabaseError(
      `cannot read the ${option ?? 'SSL'} file '${path}' named in ${shown}: ${why}. Check the path of ${option ?? 'sslcert, sslkey and sslrootcert'} (relative paths are read from the current folder).`,
    );
  }
  return new DatabaseError(`cannot use ${shown}: ${message.split('\n')[0]}`);
}

/** A query parameter of the URL, as node-postgres reads it. */
function queryParameter(url: string, name: string): string | undefined {
  try {
    return new URL(url, 'postgres://base').searchParams.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

const HOST_HINT = 'Check the host and port (in the URL, or PGHOST and PGPORT)';

function connectError(error: unknown, target: Target, options: ConnectOptions, passwordGiven: boolean): Error {
  if (error instanceof DatabaseError) return error;
  const { code, message } = error as { code?: string; message: string };
  const where = describeTarget(target);
  const host = target.host.startsWith('/') ? `socket ${target.host}` : `${target.host}:${target.port}`;
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOENT':
      return new DatabaseError(`cannot reach the database at ${host}: connection refused. ${HOST_HINT}, and that the server is running and accepts connections there.`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new DatabaseError(`cannot reach the database: host '${target.host}' does not resolve. ${HOST_HINT}.`);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new DatabaseError(`cannot reach the database at ${host}: ${code}. ${HOST_HINT}, and that no firewall is in the way.`);
    case '28P01':
      if (!passwordGiven) return new DatabaseError(`the server asks role '${target.user}' (${where}) for a password and none was given. Put it in the URL, PGPASSWORD or ~/.pgpass.`);
      return new DatabaseError(`the server refused the password of role '${target.user}' (${where}): password authentication failed. Check the password in the URL, PGPASSWORD or ~/.pgpass.`);
    case '28000':
      return new DatabaseError(`the server refused role '${target.user}' (${where}): ${message}. Check the user name, and that pg_hba.conf lets it connect from here (with sslmode=require if the server needs SSL).`);
    case '3D000':
      return new DatabaseError(`database '${target.database}' does not exist on ${host}. Check the database name in the URL or PGDATABASE.`);
    case '42501':
      return new DatabaseError(`role '${target.user}' may not connect to database '${target.database}': ${message}. GRANT CONNECT ON DATABASE ${target.database} TO ${target.user}, or lint as a role that may.`);
    case '53300':
      return new DatabaseError(`the server at ${host} accepts no more connections: ${message}. Try again, or lint through the pooler.`);
  }
  if (/timeout expired|connection timeout/i.test(message)) {
    return new DatabaseError(`cannot reach the database at ${host}: no answer within ${options.connectTimeout} ms. ${HOST_HINT}, or raise --connect-timeout.`);
  }
  if (/client password must be a string|password authentication|no password/i.test(message)) {
    return new DatabaseError(`the server asks role '${target.user}' (${where}) for a password and none was given. Put it in the URL, PGPASSWORD or ~/.pgpass.`);
  }
  if (/ssl|tls|certificate/i.test(message)) {
    return new DatabaseError(`cannot open the SSL connection to ${host}: ${message}. Check sslmode in the URL (or PGSSLMODE) and the server's certificate.`);
  }
  return new DatabaseError(`cannot connect to ${where}: ${message}${code ? ` (${code})` : ''}.`);
}

function queryError(error: unknown, target: Target, options: ConnectOptions, phase: string): Error {
  if (error instanceof DatabaseError) return error;
  const { code, message } = error as { code?: string; message: string };
  const catalog = /relation "?(pg_catalog\.)?(pg_\w+)"?|table (pg_\w+)/.exec(message);
  switch (code) {
    case '42501': {
      const table = catalog ? catalog[2] ?? catalog[3] : firstCatalog(phase);
      return new DatabaseError(
        `role '${target.user}' cannot read the catalog${table ? ` (pg_catalog.${table})` : ''}: ${message}. Lint as a role that can read pg_catalog (every role can, unless SELECT on it was revoked), or GRANT SELECT ON pg_catalog.${table ?? '<table>'} TO ${target.user}.`,
      );
    }
    case '57014':
      // query_canceled: a statement timeout, or someone's pg_cancel_backend.
      if (/statement timeout/i.test(message)) {
        return new DatabaseError(`reading the catalog of ${describeTarget(target)} took longer than the statement timeout (${options.statementTimeout} ms, --statement-timeout): ${message}. Raise --statement-timeout, or read fewer schemas with --schema.`);
      }
      // PostgreSQL also says "user request" for its own statement timeout when the timer fires as the statement ends
      // (measured on 17.10 with a 1 ms timeout on a loaded machine): name both causes.
      return new DatabaseError(
        `reading the catalog of ${describeTarget(target)} was canceled: ${message}. Either the statement timeout (${options.statementTimeout} ms, --statement-timeout) fired as a statement ended, which PostgreSQL reports this way, or another session canceled the query (pg_cancel_backend). Try again, or raise --statement-timeout.`,
      );
    case '25P03':
      return new DatabaseError(`the server ended the session of ${describeTarget(target)} between two catalog queries: ${message} (idle_in_transaction_session_timeout, which pgq-audit sets to twice --statement-timeout and at least a minute). Try again; if this machine is very busy, raise --statement-timeout.`);
    case '25006':
      return new DatabaseError(`the server refused a write in pgq-audit's read-only transaction: ${message}. This is a bug of pgq-audit, which writes nothing; please report it.`);
  }
  if (/Query read timeout/.test(message)) {
    return new DatabaseError(`the server at ${describeTarget(target)} stopped answering (no reply within ${options.statementTimeout + 5000} ms). Try again, or raise --statement-timeout.`);
  }
  if (/Connection terminated|ECONNRESET|not queryable/i.test(message) || code === 'ECONNRESET' || code === '57P01') {
    return new DatabaseError(`the connection to ${describeTarget(target)} was closed while reading the catalog: ${message}. Try again.`);
  }
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    return new DatabaseError(`reading the catalog of ${describeTarget(target)} failed: ${message} (SQLSTATE ${code}).`);
  }
  return error as Error;
}

/** The first pg_catalog table a query reads, for a permission error that does not name it. */
function firstCatalog(query: string): string | undefined {
  return /\b(pg_(?:proc|policy|class|namespace|roles|db_role_setting|depend|language|database|auth_members))\b/.exec(query)?.[1];
}
