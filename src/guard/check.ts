// The check itself: one SQL text read in one round trip, and the comparison
// of what it returns with the connection's values at connect. Every name in
// it is pg_catalog-qualified, so no user object or search_path can change
// what it runs. With proofs on (option elide) it also reads the
// connection's facts for src/guard/proof.ts in the same round trip.
import { BUILTIN_FUNCTIONS, BUILTIN_OPERATORS, BUILTIN_TYPES, type ConnectionFacts } from './proof.ts';

/** Raw strings for every column: a pool's own type parsers must not change what we compare. */
export const RAW_TYPES = { getTypeParser: () => (value: unknown) => value };

/** What a check reads besides the settings: nothing, standard_conforming_strings, or that and the catalog facts. */
export type FactsRead = 'none' | 'strings' | 'all';

export interface CheckPlan {
  names: readonly string[];
  /** One select-list expression per setting, then the open-transaction test. */
  columns: readonly string[];
  /** The settings only: used when the driver already knows the transaction status. */
  settingsSql: string;
  /** The settings and an open-transaction test, for drivers that do not report the status. */
  settingsAndTxSql: string;
  /** The check's text: with the open-transaction test or not, then the facts asked for; and where those start (-1: none). */
  sql(withTx: boolean, facts: FactsRead): { text: string; factsAt: number };
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
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

/**
 * Relations on which the server runs code the query text does not show and
 * that is not a built-in's: a trigger, policy, default or generated column,
 * CHECK constraint, index expression or rule/view that depends on a function
 * or operator outside pg_catalog; then, transitively, every relation whose
 * policies or views read one of those, every parent an FK or inheritance
 * reaches one from (a cascade, a partition). PostgreSQL's own relations
 * (pg_catalog, information_schema) are left out.
 */
const eq = 'operator(pg_catalog.=)';

/** The relation an object of the catalog `classid` (trigger, policy, default, constraint, rule, index) is attached to. */
function ownerOf(classid: string, objid: string): string {
  return (
    `coalesce(` + // coalesce and nullif are syntax, not functions a name could shadow
    `(select t.tgrelid from pg_catalog.pg_trigger t where ${classid} ${eq} 2620::pg_catalog.oid and t.oid ${eq} ${objid}), ` +
    `(select p.polrelid from pg_catalog.pg_policy p where ${classid} ${eq} 3256::pg_catalog.oid and p.oid ${eq} ${objid}), ` +
    `(select a.adrelid from pg_catalog.pg_attrdef a where ${classid} ${eq} 2604::pg_catalog.oid and a.oid ${eq} ${objid}), ` +
    `(select nullif(c.conrelid, 0::pg_catalog.oid) from pg_catalog.pg_constraint c where ${classid} ${eq} ${PG_CONSTRAINT} and c.oid ${eq} ${objid}), ` +
    `(select r.ev_class from pg_catalog.pg_rewrite r where ${classid} ${eq} 2618::pg_catalog.oid and r.oid ${eq} ${objid}), ` +
    `(select i.indrelid from pg_catalog.pg_index i where ${classid} ${eq} 1259::pg_catalog.oid and i.indexrelid ${eq} ${objid}))`
  );
}

/**
 * Relations on which the server runs code the query text does not show and
 * that is not a built-in's: a trigger, policy, default or generated column,
 * CHECK constraint, index expression or rule/view that depends on a function
 * or operator outside pg_catalog; then, transitively, every relation whose
 * policies or views read one of those, every parent an FK or inheritance
 * reaches one from (a cascade, a partition). Walked from the user's code
 * through pg_depend's indexes, so its cost grows with that code, not with
 * the catalog. PostgreSQL's own relations (pg_catalog, information_schema)
 * are left out of the answer.
 */
const IMPLICIT_RELATIONS =
  `(with recursive code(classid, oid) as (` +
  `select ${PG_PROC}, p.oid from pg_catalog.pg_proc p where p.pronamespace operator(pg_catalog.<>) ${CATALOG_NS} ` +
  `union all select ${PG_OPERATOR}, o.oid from pg_catalog.pg_operator o where o.oprnamespace operator(pg_catalog.<>) ${CATALOG_NS}), ` +
  `implicit(relid) as (` +
  `select ${ownerOf('d.classid', 'd.objid')} from code c join pg_catalog.pg_depend d ` +
  `on d.refclassid ${eq} c.classid and d.refobjid ${eq} c.oid ` +
  `union select n.relid from implicit i cross join lateral (` +
  `select ${ownerOf('d.classid', 'd.objid')} as relid from pg_catalog.pg_depend d ` +
  `where d.refclassid ${eq} 1259::pg_catalog.oid and d.refobjid ${eq} i.relid ` +
  `union all select c.confrelid from pg_catalog.pg_constraint c where c.conrelid ${eq} i.relid and c.contype ${eq} 'f' ` +
  `union all select h.inhparent from pg_catalog.pg_inherits h where h.inhrelid ${eq} i.relid) n where n.relid is not null) ` +
  `select pg_catalog.json_agg(distinct c.relname) from pg_catalog.pg_class c ` +
  `where c.oid ${eq} any (select relid from implicit) ` +
  `and c.relnamespace operator(pg_catalog.<>) ${CATALOG_NS} ` +
  `and c.relnamespace operator(pg_catalog.<>) 'information_schema'::pg_catalog.regnamespace)`;

const STRINGS_COLUMN = "pg_catalog.current_setting('standard_conforming_strings')";

/** The catalog facts of src/guard/proof.ts, one column each, in the order factsFrom reads them. */
const CATALOG_COLUMNS = [
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
  IMPLICIT_RELATIONS,
];

/** standard_conforming_strings from a check that read it (`offset`), and the catalog facts after it when read. */
export function factsFrom(
  row: readonly unknown[],
  offset: number,
  catalog: boolean,
  previous: ConnectionFacts | undefined,
): ConnectionFacts {
  const standardStrings = normalize(row[offset]) === 'on';
  if (!catalog) {
    return previous ? { ...previous, standardStrings } : { ...UNKNOWN_CATALOG, standardStrings };
  }
  const at = offset + 1;
  const words = (i: number) => new Set(normalize(row[at + i]).split(' ').filter(Boolean));
  const yes = (i: number) => normalize(row[at + i]) === 't' || normalize(row[at + i]) === 'true';
  const relations = normalize(row[at + 5]);
  return {
    standardStrings,
    shadowedFunctions: words(0),
    shadowedOperators: words(1),
    shadowedTypes: words(2),
    userCasts: yes(3),
    userDomainChecks: yes(4),
    implicitRelations: new Set(relations ? (JSON.parse(relations) as string[]) : []),
  };
}

/** Before the catalog was read: nothing can be proven. */
const UNKNOWN_CATALOG: ConnectionFacts = {
  standardStrings: false,
  shadowedFunctions: new Set(),
  shadowedOperators: new Set(),
  shadowedTypes: new Set(),
  userCasts: true,
  userDomainChecks: true,
  implicitRelations: new Set(),
};

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
  const texts = new Map<string, { text: string; factsAt: number }>();
  return {
    names,
    columns: [...columns, tx],
    settingsSql: `select ${columns.join(', ')}`,
    settingsAndTxSql: `select ${columns.join(', ')}, ${tx}`,
    sql(withTx, facts) {
      const key = `${withTx}/${facts}`;
      let found = texts.get(key);
      if (!found) {
        const list = withTx ? [...columns, tx] : [...columns];
        const factsAt = facts === 'none' ? -1 : list.length;
        if (facts !== 'none') list.push(STRINGS_COLUMN);
        if (facts === 'all') list.push(...CATALOG_COLUMNS);
        found = { text: `select ${list.join(', ')}`, factsAt };
        texts.set(key, found);
      }
      return found;
    },
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
