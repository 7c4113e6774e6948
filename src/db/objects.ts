// Catalog rows -> the objects pgq-audit reports on. Each object gets a
// definition text in SQL — a routine as pg_get_functiondef prints it (what
// psql's \sf shows), a policy as the CREATE POLICY that makes it, a table's
// row level security state and a role's defaults as the ALTER statements
// that set them — so the SQL front end and the rules read it like any .sql
// file, and findings have lines and a code frame in a text the user can
// recognise.
import type { DatabaseObject } from '../engine/findings.ts';
import { quoteIdent, quoteSettingName } from '../model/identifiers.ts';
import type { CatalogSnapshot, PolicyRow, RoutineRow, SettingRow, TableRow } from './catalog.ts';

export interface DbObject {
  object: DatabaseObject;
  /** The pseudo-path results carry: `db:function public.enter_tenant(integer)`. */
  filePath: string;
  text: string;
}

export interface TableObject extends DbObject {
  row: TableRow;
  /** Offsets of the statement the table's finding goes on. */
  span: { start: number; end: number };
}

export interface RoleObject extends DbObject {
  /** Offsets of the role's attribute line (only for the --role). */
  attributesSpan?: { start: number; end: number };
}

export interface CatalogObjects {
  routines: DbObject[];
  policies: (DbObject & { row: PolicyRow })[];
  tables: TableObject[];
  /** Roles, databases and ALTER ROLE ALL: their setting defaults (and the --role's attributes). */
  settings: RoleObject[];
}

export { quoteIdent };

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

function make(kind: string, name: string, fullyQualifiedName: string, display: string, text: string): DbObject {
  const artifactPath = `pgq-audit-db/${kind}/${fullyQualifiedName}`;
  return { object: { kind, name, fullyQualifiedName, display, artifactPath }, filePath: `db:${display}`, text };
}

function routineObject(row: RoutineRow): DbObject {
  const kind = row.kind === 'p' ? 'procedure' : 'function';
  const name = `${quoteIdent(row.name)}(${row.args})`;
  const qualified = `${quoteIdent(row.schema)}.${name}`;
  return make(kind, name, qualified, `${kind} ${qualified}`, row.definition.endsWith('\n') ? row.definition : `${row.definition}\n`);
}

const COMMANDS: Record<string, string> = { '*': 'ALL', r: 'SELECT', a: 'INSERT', w: 'UPDATE', d: 'DELETE' };

function tableName(schema: string, table: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

function policyObject(row: PolicyRow, table: TableRow | undefined): DbObject & { row: PolicyRow } {
  const on = tableName(row.schema, row.table);
  const lines: string[] = [];
  // The table's state comes first: whether the policy applies at all is part of what it does.
  if (table?.rls) lines.push(`ALTER TABLE ${on} ENABLE ROW LEVEL SECURITY;`);
  if (table?.force) lines.push(`ALTER TABLE ${on} FORCE ROW LEVEL SECURITY;`);
  lines.push(`CREATE POLICY ${quoteIdent(row.name)} ON ${on} AS ${row.permissive ? 'PERMISSIVE' : 'RESTRICTIVE'} FOR ${COMMANDS[row.cmd] ?? 'ALL'} TO ${row.roles.join(', ')}`);
  if (row.qual !== null) lines.push(`  USING (${row.qual})`);
  if (row.with_check !== null) lines.push(`  WITH CHECK (${row.with_check})`);
  const text = `${lines.join('\n')};\n`;
  return { ...make('policy', quoteIdent(row.name), `${on}.${quoteIdent(row.name)}`, `policy ${quoteIdent(row.name)} on ${on}`, text), row };
}

function tableObject(row: TableRow): TableObject {
  const name = tableName(row.schema, row.name);
  const lines = [
    `ALTER TABLE ${name} OWNER TO ${quoteIdent(row.owner)};`,
    `ALTER TABLE ${name} ${row.rls ? 'ENABLE' : 'DISABLE'} ROW LEVEL SECURITY;`,
    `ALTER TABLE ${name} ${row.force ? 'FORCE' : 'NO FORCE'} ROW LEVEL SECURITY;`,
  ];
  // The finding goes where the fix goes: the DISABLE line, else the NO FORCE line.
  const at = row.rls ? 2 : 1;
  const start = lines.slice(0, at).reduce((n, l) => n + l.length + 1, 0);
  const text = `${lines.join('\n')}\n`;
  return { ...make('table', quoteIdent(row.name), name, `table ${name}`, text), row, span: { start, end: start + lines[at].length } };
}

/** One `SET name TO 'value'` per entry of setconfig ('name=value'). */
function setClauses(config: readonly string[]): string[] {
  return config.map((entry) => {
    const eq = entry.indexOf('=');
    const name = eq < 0 ? entry : entry.slice(0, eq);
    const value = eq < 0 ? '' : entry.slice(eq + 1);
    return `SET ${quoteSettingName(name)} TO ${quoteLiteral(value)}`;
  });
}

function settingObjects(snapshot: CatalogSnapshot): RoleObject[] {
  const roles = new Map<string, string[]>();
  const out: RoleObject[] = [];
  const database = quoteIdent(snapshot.database);
  const databaseLines: string[] = [];
  const allRolesLines: string[] = [];
  for (const row of snapshot.settings as SettingRow[]) {
    if (row.role === null) {
      const target = row.database === null ? allRolesLines : databaseLines;
      const prefix = row.database === null ? 'ALTER ROLE ALL' : `ALTER DATABASE ${database}`;
      for (const clause of setClauses(row.config)) target.push(`${prefix} ${clause};`);
      continue;
    }
    const lines = roles.get(row.role) ?? [];
    const prefix = `ALTER ROLE ${quoteIdent(row.role)}${row.database === null ? '' : ` IN DATABASE ${database}`}`;
    for (const clause of setClauses(row.config)) lines.push(`${prefix} ${clause};`);
    roles.set(row.role, lines);
  }
  const appRole = snapshot.role;
  if (appRole && !roles.has(appRole.name)) roles.set(appRole.name, []);
  for (const [role, lines] of [...roles].sort(([a], [b]) => a.localeCompare(b))) {
    let attributesSpan: RoleObject['attributesSpan'];
    if (appRole?.name === role) {
      const line = `ALTER ROLE ${quoteIdent(role)} WITH ${appRole.superuser ? 'SUPERUSER' : 'NOSUPERUSER'} ${appRole.bypass_rls ? 'BYPASSRLS' : 'NOBYPASSRLS'};`;
      const start = lines.reduce((n, l) => n + l.length + 1, 0);
      lines.push(line);
      attributesSpan = { start, end: start + line.length };
    }
    const object: RoleObject = make('role', quoteIdent(role), quoteIdent(role), `role ${quoteIdent(role)}`, `${lines.join('\n')}\n`);
    if (attributesSpan) object.attributesSpan = attributesSpan;
    out.push(object);
  }
  if (databaseLines.length) out.push(make('database', database, database, `database ${database}`, `${databaseLines.join('\n')}\n`));
  if (allRolesLines.length) out.push(make('role', 'ALL', 'ALL', 'all roles', `${allRolesLines.join('\n')}\n`));
  return out;
}

export function catalogObjects(snapshot: CatalogSnapshot): CatalogObjects {
  const tablesByName = new Map(snapshot.tables.map((t) => [`${t.schema}.${t.name}`, t]));
  return {
    routines: snapshot.routines.map(routineObject),
    policies: snapshot.policies.map((row) => policyObject(row, tablesByName.get(`${row.schema}.${row.table}`))),
    tables: snapshot.tables.map(tableObject),
    settings: settingObjects(snapshot),
  };
}
