// The check itself: one SQL text read in one round trip, and the comparison
// of what it returns with the connection's values at connect. Every name in
// it is pg_catalog-qualified, so no user object or search_path can change
// what it runs. With proofs on (option elide) it also reads the
// connection's facts for src/guard/proof.ts in the same round trip.
import { BUILTIN_FUNCTIONS, BUILTIN_OPERATORS, BUILTIN_TYPES, type ConnectionFacts } from './proof.ts';

/** Raw strings for every column: a pool's own type parsers must not change what we compare. */
export const RAW_TYPES = { getTypeParser: () => (value: unknown) => value };

export interface CheckPlan {
  names: readonly string[];
  /** One select-list expression per setting, then the open-transaction test. */
  columns: readonly string[];
  /** The settings only: used when the driver already knows the transaction status. */
  settingsSql: string;
  /** The settings and an open-transaction test, for drivers that do not report the status. */
  settingsAndTxSql: string;
  /** The same two, followed by the facts columns. */
  settingsFactsSql: string;
  settingsAndTxFactsSql: string;
}

/** pg_catalog's namespace and the catalogs' own OIDs: fixed in every PostgreSQL. */
const CATALOG_NS = '11::pg_catalog.oid';
const PG_PROC = '1255::pg_catalog.oid';
const PG_OPERATOR = '2617::pg_catalog.oid';
const PG_CONSTRAINT = '2606::pg_catalog.oid';

function nameArray(names: Iterable<string>): string {
  return `'{${[...names].map((n) => `"${n}"`).join(',')}}'::pg_catalog.name[]`;
}

function shadowed(catalog: string, column: string, namespace: string, names: Iterable<string>): string {
  return (
    `(select pg_catalog.string_agg(distinct x.${column}::pg_catalog.text, ' ') from pg_catalog.${catalog} x ` +
    `where x.${column} operator(pg_catalog.=) any (${nameArray(names)}) and x.${namespace} operator(pg_catalog.<>) ${CATALOG_NS})`
  );
}

/** The facts of src/guard/proof.ts, one column each, in the order factsFrom reads them. */
const FACTS_COLUMNS = [
  "pg_catalog.current_setting('standard_conforming_strings')",
  shadowed('pg_proc', 'proname', 'pronamespace', BUILTIN_FUNCTIONS),
  shadowed('pg_operator', 'oprname', 'oprnamespace', BUILTIN_OPERATORS),
  shadowed('pg_type', 'typname', 'typnamespace', BUILTIN_TYPES),
  // A cast whose function is not a built-in.
  `exists (select from pg_catalog.pg_cast c join pg_catalog.pg_proc p on p.oid operator(pg_catalog.=) c.castfunc ` +
    `where p.pronamespace operator(pg_catalog.<>) ${CATALOG_NS})`,
  // A domain constraint that depends on a function or operator that is not a built-in.
  `exists (select from pg_catalog.pg_constraint c join pg_catalog.pg_depend d on d.classid operator(pg_catalog.=) ${PG_CONSTRAINT} ` +
    `and d.objid operator(pg_catalog.=) c.oid ` +
    `left join pg_catalog.pg_proc p on d.refclassid operator(pg_catalog.=) ${PG_PROC} and p.oid operator(pg_catalog.=) d.refobjid ` +
    `left join pg_catalog.pg_operator o on d.refclassid operator(pg_catalog.=) ${PG_OPERATOR} and o.oid operator(pg_catalog.=) d.refobjid ` +
    `where c.contypid operator(pg_catalog.<>) 0::pg_catalog.oid ` +
    `and (p.pronamespace operator(pg_catalog.<>) ${CATALOG_NS} or o.oprnamespace operator(pg_catalog.<>) ${CATALOG_NS}))`,
];

/** Facts from the columns of a check that read them, starting at `offset`. */
export function factsFrom(row: readonly unknown[], offset: number): ConnectionFacts {
  const words = (i: number) => new Set(normalize(row[offset + i]).split(' ').filter(Boolean));
  const yes = (i: number) => normalize(row[offset + i]) === 't' || normalize(row[offset + i]) === 'true';
  return {
    standardStrings: normalize(row[offset]) === 'on',
    shadowedFunctions: words(1),
    shadowedOperators: words(2),
    shadowedTypes: words(3),
    userCasts: yes(4),
    userDomainChecks: yes(5),
  };
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * A custom setting (name with a dot) is read with missing_ok, since a
 * never-touched placeholder raises otherwise. A built-in name is read
 * without it, so a misspelt one fails loudly instead of always matching.
 */
export function makePlan(names: readonly string[]): CheckPlan {
  const columns = names.map((name) =>
    name.includes('.') ? `pg_catalog.current_setting(${literal(name)}, true)` : `pg_catalog.current_setting(${literal(name)})`,
  );
  // In an open transaction now() is its start; in a fresh implicit one it
  // equals the statement's start (F4). Only with the simple protocol: with
  // Parse/Bind/Execute the two differ even in autocommit, so the check
  // must never be sent with parameters.
  const tx = '(pg_catalog.now() operator(pg_catalog.<>) pg_catalog.statement_timestamp())::pg_catalog.text';
  const facts = FACTS_COLUMNS.join(', ');
  return {
    names,
    columns: [...columns, tx],
    settingsSql: `select ${columns.join(', ')}`,
    settingsAndTxSql: `select ${columns.join(', ')}, ${tx}`,
    settingsFactsSql: `select ${columns.join(', ')}, ${facts}`,
    settingsAndTxFactsSql: `select ${columns.join(', ')}, ${tx}, ${facts}`,
  };
}

/** NULL and '' are the same "unset" (F9: a custom setting reads '' after its local transaction). */
export function normalize(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

/** Values at connect, taken from a check row. */
export function baselineFrom(plan: CheckPlan, row: readonly unknown[], adopted: boolean): string[] {
  // A connection opened before the guard wrapped the pool: custom settings
  // are compared with "unset"; a built-in's current value is all we have.
  return plan.names.map((name, i) => (adopted && name.includes('.') ? '' : normalize(row[i])));
}

/** Names whose current value differs from the value at connect. */
export function dirtyNames(plan: CheckPlan, row: readonly unknown[], baseline: readonly string[]): string[] {
  const dirty: string[] = [];
  for (let i = 0; i < plan.names.length; i++) {
    if (normalize(row[i]) !== baseline[i]) dirty.push(plan.names[i]!);
  }
  return dirty;
}

/** The open-transaction column of settingsAndTxSql. */
export function txOpenFrom(plan: CheckPlan, row: readonly unknown[]): boolean {
  const value = normalize(row[plan.names.length]);
  return value === 'true' || value === 't';
}

export function valuesOf(
  plan: CheckPlan,
  row: readonly unknown[],
  names: readonly string[],
): Record<string, string | null> {
  const values: Record<string, string | null> = {};
  for (const name of names) {
    const v = row[plan.names.indexOf(name)];
    values[name] = v === null || v === undefined ? null : normalize(v);
  }
  return values;
}
