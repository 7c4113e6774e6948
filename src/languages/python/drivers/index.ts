// The registry of driver modules: the one place that lists them. The flow
// engine asks it what an API path, a method or an annotation means; the
// order of DRIVERS settles which driver a file talks to when it imports
// several. Adding a driver: write its module, list it here.
import type { ConnectionConfig, Driver } from '../../../model/index.ts';
import type { BoundValues, PlaceholderStyle } from '../flow/params.ts';
import { DBAPI_CONTROL_METHODS, DBAPI_EXECUTE_METHODS } from '../flow/sql-sites.ts';
import type { HostText, SqlTextNames } from '../flow/strings.ts';
import type { ConfigEntry, Conn, FileApi, Maker, ReadContext } from '../flow/types.ts';
import type { Arg, Node } from '../syntax.ts';
import { aiopg } from './aiopg.ts';
import { asyncpg } from './asyncpg.ts';
import { databases } from './databases.ts';
import { django } from './django/index.ts';
import { psycopg } from './psycopg.ts';
import { psycopg2 } from './psycopg2.ts';
import { rdsData } from './rds-data.ts';
import { sqlalchemy } from './sqlalchemy/index.ts';
import type { AutocommitSetterRow, CheckoutRow, DriverOrm, FileDriver, PythonDriver, SqlFunctionRow, TransactionBlockRow } from '../flow/driver-api.ts';

/**
 * In order of precedence: a file that imports SQLAlchemy talks to it, whatever DBAPI it imports too — unless
 * it imports aiopg or databases, which build their queries with SQLAlchemy and run them on their own connections.
 */
export const DRIVERS: readonly PythonDriver[] = [aiopg, databases, sqlalchemy, asyncpg, django, psycopg, psycopg2, rdsData];

const byName = new Map<Driver, PythonDriver>(DRIVERS.map((d) => [d.name, d]));

/** The module of a driver, if it has one. */
export function driverNamed(name: Driver): PythonDriver | undefined {
  return byName.get(name);
}

const importsDriver = (driver: PythonDriver, modules: ReadonlySet<string>) => driver.modules.some((m) => modules.has(m));

/** The driver a file talks to, from the modules it imports; 'unknown' when none or several that exclude each other. */
export function fileDriverOf(modules: ReadonlySet<string>): Driver {
  for (const driver of DRIVERS) {
    if (driver.claimsFiles === false || !importsDriver(driver, modules)) continue;
    if (driver.unlessAlso?.some((other) => importsDriver(byName.get(other)!, modules))) continue;
    return driver.name;
  }
  return 'unknown';
}

/**
 * The driver modules a module read as a guest takes from the file that calls it, when it imports none of its own:
 * a helper handed the caller's rows (`mark_running(rows)`) saves them with the caller's ORM.
 */
export function inheritedDriverModules(own: ReadonlySet<string>, host: ReadonlySet<string>): string[] {
  if (DRIVERS.some((d) => importsDriver(d, own))) return [];
  return DRIVERS.flatMap((d) => d.modules.filter((m) => host.has(m)));
}

/** The file imports a driver whose connections come in as parameters and attributes. */
export function importsHandedIn(modules: ReadonlySet<string>): boolean {
  return DRIVERS.some((d) => d.handedIn && importsDriver(d, modules));
}

/** What a qualified callee makes, if it is one of the drivers' pool classes or connect functions. */
export function makerOf(qualified: string | undefined): Maker | undefined {
  if (!qualified) return undefined;
  for (const driver of DRIVERS) {
    for (const row of driver.makers ?? []) {
      if (typeof row.path === 'string' ? row.path !== qualified : !row.path.test(qualified)) continue;
      return { kind: row.kind, driver: driver.name, name: row.name ?? qualified.slice(qualified.lastIndexOf('.') + 1) };
    }
  }
  return undefined;
}

export function readConfig(call: Node, maker: Maker, ctx: ReadContext): ConfigEntry {
  return byName.get(maker.driver)!.readConfig!(call, maker, ctx);
}

export function finishConfig(entry: ConfigEntry, file: string): void {
  byName.get(entry.config.driver)?.finishConfig?.(entry, file);
}

/** A parameter annotation that names a driver's pool or connection type. */
export function annotationOf(qualified: string | undefined): { kind: 'pool' | 'conn'; driver: PythonDriver } | undefined {
  if (!qualified) return undefined;
  for (const driver of DRIVERS) {
    const kind = driver.annotations?.[qualified];
    if (kind) return { kind, driver };
  }
  return undefined;
}

export function assumedPoolConfig(driver: Driver, at: Node): ConnectionConfig | undefined {
  return byName.get(driver)?.assumedPool?.(at);
}

export function checkoutOf(driver: Driver, method: string): CheckoutRow | undefined {
  return byName.get(driver)?.checkouts?.find((row) => row.method === method);
}

/** A `with X.<method>()` that is a transaction block, in a file talking to `fileDriver`. */
export function transactionBlockOf(method: string, fileDriver: Driver): TransactionBlockRow | undefined {
  for (const driver of DRIVERS) {
    const row = driver.transactionBlocks?.find((r) => r.method === method && (!r.onlyInItsFiles || driver.name === fileDriver));
    if (row) return row;
  }
  return undefined;
}

/** The block opens a new connection when its receiver is a pool or factory of a driver that says so. */
export function opensOnNewConnection(driver: Driver, method: string): boolean {
  return byName.get(driver)?.transactionBlocks?.some((r) => r.method === method && r.onNewConnection) ?? false;
}

/** Methods that send SQL given as their first argument, on a connection or a cursor of the driver. */
export function sqlMethodsOf(driver: Driver, via: 'conn' | 'cursor'): ReadonlySet<string> {
  const own = byName.get(driver)?.sqlMethods;
  return (via === 'conn' ? own?.connection : own?.cursor) ?? DBAPI_EXECUTE_METHODS;
}

/** Methods of a pool object that run SQL on any of its connections. */
export function poolRunsSql(driver: Driver, method: string): boolean {
  return byName.get(driver)?.sqlMethods?.pool?.has(method) ?? false;
}

/** Whether SQL a pool runs itself runs in autocommit. */
export function poolSqlAutocommit(driver: Driver): boolean | 'unknown' {
  return byName.get(driver)?.sqlMethods?.poolAutocommit ?? 'unknown';
}

export function runsSqlOnConnection(conn: Conn): boolean {
  return byName.get(conn.driver)?.runsSqlOnConnection?.(conn) ?? true;
}

/** Every method name that may send SQL, for receivers of unknown origin. */
export const SQL_METHOD_NAMES: ReadonlySet<string> = new Set([
  ...DBAPI_EXECUTE_METHODS,
  ...DRIVERS.flatMap((d) => [...(d.sqlMethods?.connection ?? []), ...(d.sqlMethods?.cursor ?? [])]),
]);
/** Methods that end or switch a transaction. */
export const CONTROL_METHODS: ReadonlySet<string> = new Set([...DBAPI_CONTROL_METHODS, ...DRIVERS.flatMap((d) => d.controlMethods ?? [])]);

const AUTOCOMMIT_SETTERS = new Map<string, AutocommitSetterRow>(DRIVERS.flatMap((d) => d.autocommitSetters ?? []).map((r) => [r.method, r]));
export const autocommitSetterOf = (method: string) => AUTOCOMMIT_SETTERS.get(method);

/** Connection attributes a driver reads when the code sets them (`autocommit` is every DB-API driver's). */
export const CONNECTION_ATTRIBUTES = new Map(DRIVERS.flatMap((d) => Object.entries(d.connectionAttributes ?? {})));

const SQL_FUNCTIONS = new Map<string, SqlFunctionRow>(DRIVERS.flatMap((d) => d.sqlFunctions ?? []).map((r) => [r.path, r]));
export const sqlFunctionOf = (qualified: string | undefined) => (qualified ? SQL_FUNCTIONS.get(qualified) : undefined);

/** The host placeholders of SQL sent this way: text()'s :name anywhere, else the driver's, else the DB-API's pyformat (%s). */
export function placeholderStyle(driver: Driver, method: string, host: HostText): PlaceholderStyle {
  if (host.colonParams) return 'colon';
  return byName.get(driver)?.placeholderStyle?.(method, host) ?? 'pyformat';
}

export function driverBoundValues(driver: Driver, args: Arg[], method: string, text: string, valueOf: (node: Node) => Node | undefined): BoundValues | undefined {
  return byName.get(driver)?.boundValues?.(args, method, text, valueOf);
}

export function postgresOnly(driver: Driver): boolean {
  return byName.get(driver)?.postgresOnly ?? false;
}

export function unitOfWork(driver: Driver): boolean {
  return byName.get(driver)?.unitOfWork ?? false;
}

const sqlTextOf = (key: keyof SqlTextNames): ReadonlySet<string> => new Set(DRIVERS.flatMap((d) => d.sqlText?.[key] ?? []));
/** The API paths that build SQL text, of every driver. */
export const SQL_TEXT: SqlTextNames = {
  composed: sqlTextOf('composed'),
  identifiers: sqlTextOf('identifiers'),
  literals: sqlTextOf('literals'),
  placeholders: sqlTextOf('placeholders'),
  boundText: sqlTextOf('boundText'),
};

/** Settings objects read from the deployment, of every driver. */
export const DEPLOYMENT_SETTINGS: ReadonlySet<string> = new Set(DRIVERS.flatMap((d) => d.deploymentSettings ?? []));

/** Module prefixes whose calls are not the job's work. */
export const NOT_WORK_MODULES: readonly string[] = DRIVERS.flatMap((d) => d.notWork ?? []);

/** The form of a connection's implicit transaction: its driver's words, else a DB-API driver's (psycopg's). */
export function implicitFormOf(conn: Omit<Conn, 'id' | 'implicitForm' | 'flow'>): string {
  return byName.get(conn.driver)?.implicitForm?.(conn) ?? psycopg.implicitForm!(conn)!;
}

/** The ORM instances are read with in this file: one the file claims, else the default one. */
export function instanceOrm(file: FileApi): DriverOrm | undefined {
  const orms = DRIVERS.flatMap((d) => (d.orm ? [d.orm] : []));
  return orms.find((o) => !o.byDefault && o.claims?.(file)) ?? orms.find((o) => o.byDefault);
}

/** The outside-world call a driver's framework knows a call to be (Django's send_mail, `EmailMessage(...).send()`). */
export function driverSideEffect(qualified: string | undefined, method: string | undefined, madeBy: () => string | undefined): string | undefined {
  for (const driver of DRIVERS) {
    const found = driver.sideEffect?.(qualified, method, madeBy);
    if (found) return found;
  }
  return undefined;
}

export const ORMS: readonly DriverOrm[] = DRIVERS.flatMap((d) => (d.orm ? [d.orm] : []));

/** The per-file parts of the drivers this file uses. */
export function fileDrivers(file: FileApi): FileDriver[] {
  return DRIVERS.flatMap((d) => {
    const part = d.forFile?.(file);
    return part ? [part] : [];
  });
}

export type { PythonDriver };
