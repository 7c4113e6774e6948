// Table identity: `billing.jobs` and `public.jobs` are two tables, and an
// unqualified `jobs` is the one in the schema the connection's search_path
// finds first. That schema is a property of the project unit (the database
// its code talks to), so facts keep the name as written and a cross-file
// rule resolves it with its unit's default schema.

/** PostgreSQL's default search_path is `"$user", public`: without a schema named after the role, public. */
export const DEFAULT_SCHEMA = 'public';

/** A table as a statement names it. */
export interface TableName {
  table: string;
  /** The schema written before it, if any. */
  schema?: string;
}

/** The table a name means when unqualified names resolve to `defaultSchema`: always `schema.table`. */
export function tableKey(name: TableName, defaultSchema: string = DEFAULT_SCHEMA): string {
  return `${name.schema ?? defaultSchema}.${name.table}`;
}

/** The name as the code writes it, for messages. */
export function writtenName(name: TableName): string {
  return name.schema ? `${name.schema}.${name.table}` : name.table;
}

/**
 * Within one statement or one transaction, where the default schema is not
 * known: the same table name, and not two different schemas written out.
 */
export function mayBeSameTable(a: TableName, b: TableName): boolean {
  return a.table === b.table && (a.schema === undefined || b.schema === undefined || a.schema === b.schema);
}

/** The tables of a locking read (`from billing.jobs j ... for update of j`), with their schemas. */
export function tablesOf(read: { tables: readonly string[]; schemas?: readonly (string | null)[] }): TableName[] {
  return read.tables.map((table, i) => {
    const schema = read.schemas?.[i];
    return schema ? { table, schema } : { table };
  });
}
