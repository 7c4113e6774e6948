// Drizzle builder chains the scan can only half resolve, read as the SQL they
// send all the same. The database is often a module the scan cannot read
// (`import { db } from '../db'`, a workspace package) and so is the schema
// (`import { jobs } from '../db/schema'`): in a file that imports Drizzle,
// `db.update(jobs).set({...}).where(eq(jobs.id, id))` on such names is
// Drizzle's update all the same (the pool it runs on is the database made
// when that module loaded: autocommit on a pool connection, as
// `db.execute(sql`...`)` on it is read in drizzle.ts). An unread table is
// named the way its interpolation `${jobs}` in raw SQL is named (flow/sites.ts
// nameHoleTables; a pgTable the walk read is its declared name in both), so
// the builder's finish and the raw claim are statements on one table; its columns are the snake_case of their keys (Drizzle's
// convention, as builder-sql.ts column() reads any table). A condition given
// by name (`const where = fenced ? and(...) : eq(...)`) is read through the
// name; a conditional one only when both branches send the same SQL: where
// they differ (a fence in one branch only) the query is unknown, and quiet.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { SqlWriter, type BuilderHost, type ChainLink } from '../builder-sql.ts';
import type { TableValue, Value } from '../flow/types.ts';
import { propertyName, unwrap, type Node } from '../syntax.ts';

const WRITES = new Set(['update', 'delete']);
const READS = new Set(['select', 'selectDistinct']);

/** The table a chain names: a pgTable the walk read, or a name imported from a module it cannot read. */
export function tableArg(w: SqlWriter, node: Node | undefined): TableValue | undefined {
  if (!node) return undefined;
  const value = w.host.value(node);
  if (value?.kind === 'table') return value.table;
  const n = unwrap(node);
  if (n?.type !== 'Identifier' || !w.host.importedUnread?.(n)) return undefined;
  const table: TableValue = { name: `\${${n.name}}`, columns: new Map() };
  w.assumedTables.set(n.name, table);
  return table;
}

/** A table name as SQL: an unread table's `${jobs}` quoted, a pgTable's name as written. */
export function tableSql(table: TableValue): string {
  return /^[A-Za-z_][\w$.]*$/.test(table.name) ? table.name : `"${table.name.replace(/"/g, '""')}"`;
}

function tableNode(links: readonly ChainLink[]): Node | undefined {
  const first = links[0];
  if (WRITES.has(first.name)) return first.args[0];
  if (READS.has(first.name)) return links.find((l) => l.name === 'from')?.args[0];
  return undefined;
}

/**
 * The database a Drizzle chain runs on when its root is a name imported from
 * a module the scan cannot read: a pool, in a file that imports Drizzle, for
 * an update, delete or select whose table is a pgTable or an unread import too.
 */
export function unreadDatabase(root: Node, links: readonly ChainLink[], host: BuilderHost): { on: Value } | undefined {
  if (links.length < 2 || !host.imports?.drivers.includes('drizzle') || !host.importedUnread?.(root)) return undefined;
  const table = tableNode(links);
  const n = unwrap(table);
  if (!n) return undefined;
  const value = host.value(n);
  if (value?.kind !== 'table' && !(n.type === 'Identifier' && host.importedUnread(n))) return undefined;
  return { on: { kind: 'pool', driver: 'drizzle' } };
}

/** A literal value as SQL would read it: two branches that bind different literals send different SQL. */
function literalKey(node: Node): string {
  const n = unwrap(node);
  return n?.type === 'Literal' ? `${typeof n.value}:${String(n.value)}` : '';
}

/**
 * A condition given by name or as `cond ? a : b`: read through the name, and
 * a conditional only when both branches send the same SQL (the same text,
 * the same literals; what the code computes may differ: `eq(jobs.id,
 * retry.id)` and `eq(jobs.id, id)` are one shape). `read` writes one condition; undefined when `node` is neither.
 */
export function namedCondition(w: SqlWriter, node: Node, read: (into: SqlWriter, condition: Node) => boolean): boolean | undefined {
  const n = unwrap(node);
  if (n?.type === 'Identifier' || (n?.type === 'MemberExpression' && propertyName(n) !== undefined)) {
    const init = unwrap(w.host.constantOf?.(n));
    if (!init || init === n || init.type === 'Identifier') return undefined;
    // Read where it is written, reported at the name (as SQL text reached through a name is, strings.ts).
    const scratch = scratchOf(w);
    if (!(init.type === 'ConditionalExpression' ? eitherBranch(scratch, init, read) : read(scratch, init))) return false;
    appendAt(w, scratch, n);
    return true;
  }
  if (n?.type !== 'ConditionalExpression') return undefined;
  return eitherBranch(w, n, read);
}

function scratchOf(w: SqlWriter): SqlWriter {
  const scratch = new SqlWriter(w.host);
  for (const [k, t] of w.assumedTables) scratch.assumedTables.set(k, t);
  return scratch;
}

/** `cond ? a : b` whose branches send the same SQL: that SQL; false where they differ. */
function eitherBranch(w: SqlWriter, n: TSESTree.ConditionalExpression, read: (into: SqlWriter, condition: Node) => boolean): boolean {
  const branch = (b: Node) => {
    const scratch = scratchOf(w);
    if (!read(scratch, b)) return undefined;
    return [scratch.out.text, ...scratch.values.map(literalKey)].join('\u0000');
  };
  const a = branch(n.consequent as Node);
  if (a === undefined || a !== branch(n.alternate as Node)) return false;
  return read(w, n.consequent as Node);
}

/** The scratch writer's SQL appended to `w`, every character at `at`, its placeholders numbered after w's. */
function appendAt(w: SqlWriter, scratch: SqlWriter, at: Node): void {
  const offset = w.values.length;
  const text = scratch.out.text.replace(/\$(\d+)/g, (_, d: string) => `$${Number(d) + offset}`);
  w.text(text, at);
  w.values.push(...scratch.values);
  w.calls.push(...scratch.calls);
}
