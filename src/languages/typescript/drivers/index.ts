// The driver modules the TS/JS front end knows, and what the flow engine asks
// of them as a whole. Adding a driver is a module here and a line in DRIVERS
// (and its name in the model's Driver type); the engine and the rules do not
// change. Order matters only where two modules read the same call:
// pg-promise's query methods are read before Slonik's, node-postgres' query
// config keys before Prisma's.
import type { Driver } from '../../../model/index.ts';
import type { ChainReader } from '../builder-sql.ts';
import type { Conn, PoolHook, TypeMeaning, Value } from '../flow/types.ts';
import type { Call } from '../syntax.ts';
import { checkoutConvention, executeConfigConvention, queryConfigConvention, queryConvention, releaseConvention, transactionConvention } from './conventions.ts';
import { drizzle } from './drizzle.ts';
import { knex } from './knex.ts';
import { kysely } from './kysely.ts';
import type { CallbackInput, CallbackUse, DriverContext, DriverModel, QueryRow } from './model.ts';
import { neon } from './neon.ts';
import { pg } from './pg.ts';
import { pgPromise } from './pg-promise.ts';
import { bunSql, postgresJs } from './postgres.ts';
import { prisma } from './prisma.ts';
import { sequelize } from './sequelize.ts';
import { slonik } from './slonik.ts';
import { supabase } from './supabase.ts';
import { typeorm } from './typeorm.ts';
import { vercelPostgres } from './vercel-postgres.ts';

export const DRIVERS: readonly DriverModel[] = [pg, postgresJs, bunSql, kysely, knex, drizzle, pgPromise, slonik, typeorm, prisma, sequelize, neon, vercelPostgres, supabase];

/** The registry the flow engine consults: every question it asks of the drivers, none naming one. */
export class DriverRegistry {
  private readonly byDriver = new Map<Driver, DriverModel>();
  /** Every module's query rows in order, then the shapes drivers share. */
  readonly queryRows: readonly QueryRow[];
  /** Keys of query config objects (`{ text, values, name }`, `{ sql, args }`) and the classes that wrap one. */
  readonly queryConfig: { text: string[]; values: string[]; name: string[]; classes: string[] };

  constructor(readonly models: readonly DriverModel[]) {
    for (const m of models) this.byDriver.set(m.driver, m);
    this.runnerExportNames = new Set(models.flatMap((m) => m.runnerExports?.names ?? []));
    this.queryRows = [...models.flatMap((m) => m.queries ?? []), queryConvention, executeConfigConvention];
    const keys = (pick: (c: NonNullable<DriverModel['queryConfig']>) => string | readonly string[] | undefined) =>
      models.flatMap((m) => (m.queryConfig ? [pick(m.queryConfig) ?? []].flat() : []));
    const shared = (own: string[], common: readonly string[]) => [...own, ...common.filter((k) => !own.includes(k))];
    this.queryConfig = {
      text: shared(keys((c) => c.text), queryConfigConvention.text),
      values: shared(keys((c) => c.values), queryConfigConvention.values),
      name: keys((c) => c.name),
      classes: keys((c) => c.classes),
    };
  }

  of(driver: Driver | undefined): DriverModel | undefined {
    return driver === undefined ? undefined : this.byDriver.get(driver);
  }

  /** driverOfModule's answers (null: no driver's): every file imports the same few specifiers. */
  private readonly moduleDrivers = new Map<string, Driver | null>();

  /** The driver a module specifier names. */
  driverOfModule(specifier: string): Driver | undefined {
    let found = this.moduleDrivers.get(specifier);
    if (found === undefined) {
      found = null;
      for (const { driver, modules } of this.models) {
        if (modules.names?.includes(specifier) || modules.prefixes?.some((p) => specifier.startsWith(p)) || modules.pattern?.test(specifier)) {
          found = driver;
          break;
        }
      }
      this.moduleDrivers.set(specifier, found);
    }
    return found ?? undefined;
  }

  /** The driver whose generated client a module of the project is, by the names a file imports from it. */
  driverOfGenerated(imported: readonly string[]): Driver | undefined {
    return this.models.find((m) => m.generatedExports?.some((name) => imported.includes(name)))?.driver;
  }

  exportOf(driver: Driver, imported: string, specifier: string): Value | undefined {
    const model = this.of(driver);
    return model?.exportOf?.(imported, specifier) ?? own(model?.exports, imported);
  }

  typeOf(driver: Driver, exported: string, qualified: boolean): TypeMeaning | undefined {
    const model = this.of(driver);
    const what = model?.typeOf?.(exported, qualified) ?? own(model?.types, exported);
    if (!what) return undefined;
    return what === 'pool' && model?.txSatisfies?.includes(exported) ? { driver, what, orTx: true } : { driver, what };
  }

  /** The export names some driver's runner calls (`up`, `down`, `seed`). */
  readonly runnerExportNames: ReadonlySet<string>;

  /** The value a driver's runner gives the first parameter of the export `name`, when the body uses it through `used` members. */
  runnerParameter(name: string, used: ReadonlySet<string>): Value | undefined {
    for (const m of this.models) {
      const contract = m.runnerExports;
      if (contract?.names.includes(name) && contract.uses.some((u) => used.has(u))) return contract.value;
    }
    return undefined;
  }

  /** Every module's globals, the first module's where two name one: asked for each name no scope binds. */
  private globals?: ReadonlyMap<string, Value>;

  global(name: string): Value | undefined {
    if (!this.globals) {
      const all = new Map<string, Value>();
      for (const m of this.models) for (const [key, value] of m.globals ?? []) if (value && !all.has(key)) all.set(key, value);
      this.globals = all;
    }
    return this.globals.get(name);
  }

  private readonly rowsByMethod = new Map<string, readonly QueryRow[]>();

  /** The query rows that may read a call of `method`, in order: asked at every method call the walk meets. */
  queryRowsOf(method: string): readonly QueryRow[] {
    let rows = this.rowsByMethod.get(method);
    if (!rows) this.rowsByMethod.set(method, (rows = this.queryRows.filter((r) => r.methods === '*' || r.methods.has(method))));
    return rows;
  }

  /** The modules that may know a value: its driver's, or every one for a value of no driver (a table, an adapter). */
  modelsFor(driver: Driver | undefined): readonly DriverModel[] {
    if (driver === undefined) return this.models;
    const own = this.of(driver);
    return own ? [own] : [];
  }

  /** `pool.on('connect', fn)`, `addHook('afterConnect', fn)`: a hook by event, on any pool. */
  eventHook(method: string, event: string): PoolHook['role'] | undefined {
    for (const m of this.models) for (const e of m.events ?? []) if (e.event === event && e.methods.includes(method)) return e.role;
    return undefined;
  }

  callback(input: CallbackInput): CallbackUse | undefined {
    for (const m of this.models) {
      const use = m.callback?.(input);
      if (use) return use;
    }
    return transactionConvention(input);
  }

  /** `x.m(...)` on a receiver that holds no driver value: the shapes drivers share (a pg-pool checkout). */
  methodOfUnknown(method: string, call: Call, ctx: DriverContext): Value | undefined {
    return checkoutConvention(method, call, ctx);
  }

  /** A method of a flow-tracked connection: its driver module's reading, or the shared one for a connection of no known driver. */
  connectionMethod(conn: Conn, method: string, call: Call, ctx: DriverContext): void {
    const model = this.of(conn.driver);
    if (model) model.connectionMethod?.(conn, method, call, ctx);
    else releaseConvention(conn, method, call, ctx);
  }

  builderOf = (driver: Driver): ChainReader | undefined => this.of(driver)?.builder;
}

/** A record's own entry (not one of Object's: `constructor`, `toString`). */
function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record && Object.hasOwn(record, key) ? record[key] : undefined;
}

export const driverRegistry = new DriverRegistry(DRIVERS);
