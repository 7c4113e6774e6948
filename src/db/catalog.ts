// What `pgq-audit db` reads from the catalog, in a handful of queries (not
// one per object): routines with their definitions, policies with their
// expressions, tables with row level security or policies, role and
// database defaults, and the app's role. System schemas and objects that
// belong to an extension are left out; --schema / --exclude-schema narrow
// the rest.
//
// The session's search_path is pg_catalog, pg_temp (connection.ts) before the
// first query here, so no schema the database's owner controls can supply a
// function, operator, type or table to them; functions, types and tables are
// also named with their schema, so a query stays safe read on its own.
import picomatch from 'picomatch';
import { DatabaseError, type Session } from './connection.ts';

export interface CatalogOptions {
  /** Globs of the schemas to read (default: every schema but the system ones). */
  schemas?: readonly string[];
  /** Globs of schemas to leave out. */
  excludeSchemas?: readonly string[];
  /** The role the app runs as (--role): its attributes, and which tables it owns. */
  role?: string;
}

export interface RoutineRow {
  schema: string;
  name: string;
  /** Argument types, as in public.f(integer, text). */
  args: string;
  kind: 'f' | 'p';
  language: string;
  definition: string;
}

export interface PolicyRow {
  schema: string;
  table: string;
  name: string;
  permissive: boolean;
  cmd: string;
  /** Quoted role names; ['public'] for every role. */
  roles: string[];
  qual: string | null;
  with_check: string | null;
}

export interface TableRow {
  schema: string;
  name: string;
  rls: boolean;
  force: boolean;
  owner: string;
  /** 'owner' or 'member' when the --role has the owner's privileges. */
  app_role_owns: 'owner' | 'member' | null;
}

export interface SettingRow {
  /** Undefined: every role. */
  role: string | null;
  /** Undefined: every database. */
  database: string | null;
  config: string[];
}

export interface RoleRow {
  name: string;
  superuser: boolean;
  bypass_rls: boolean;
}

export interface CatalogSnapshot {
  database: string;
  serverVersion: string;
  schemas: string[];
  routines: RoutineRow[];
  /** Routines in other languages (C, plpython, ...): not read, counted for the summary. */
  otherRoutines: number;
  policies: PolicyRow[];
  tables: TableRow[];
  settings: SettingRow[];
  role?: RoleRow;
}

const SYSTEM_SCHEMAS = ['pg_catalog', 'information_schema', 'pg_toast'];

/** Not a member of an extension: the extension's own objects are its authors' to lint. */
const notExtensionMember = (classid: string, alias: string) =>
  `not exists (select 1 from pg_catalog.pg_depend d where d.classid = '${classid}'::pg_catalog.regclass and d.objid = ${alias}.oid and d.deptype = 'e')`;

export async function readCatalog(session: Session, options: CatalogOptions = {}): Promise<CatalogSnapshot> {
  const [about] = await session.query<{ database: string; version: string; version_num: string }>(
    `select pg_catalog.current_database() as database, pg_catalog.current_setting('server_version') as version, pg_catalog.current_setting('server_version_num') as version_num`,
  );
  if (Number(about.version_num) < 110000) {
    throw new DatabaseError(`pgq-audit db reads PostgreSQL 11 or later; ${session.target.host} runs ${about.version}.`);
  }

  const namespaces = await session.query<{ oid: number; name: string }>(
    `select n.oid, n.nspname as name from pg_catalog.pg_namespace n
      where n.nspname <> all($1::pg_catalog.text[]) and n.nspname !~ '^pg_(toast_)?temp_' and n.nspname !~ '^pg_toast'
        and ${notExtensionMember('pg_catalog.pg_namespace', 'n')}
      order by n.nspname`,
    [SYSTEM_SCHEMAS],
  );
  const include = options.schemas?.length ? picomatch([...options.schemas]) : () => true;
  const exclude = options.excludeSchemas?.length ? picomatch([...options.excludeSchemas]) : () => false;
  const chosen = namespaces.filter((n) => include(n.name) && !exclude(n.name));
  const oids = chosen.map((n) => n.oid);

  const routines = await session.query<RoutineRow>(
    `select n.nspname as schema, p.proname as name, pg_catalog.oidvectortypes(p.proargtypes) as args, p.prokind as kind,
            l.lanname as language, pg_catalog.pg_get_functiondef(p.oid) as definition
       from pg_catalog.pg_proc p
       join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       join pg_catalog.pg_language l on l.oid = p.prolang
      where p.pronamespace = any($1::pg_catalog.oid[]) and p.prokind in ('f', 'p') and l.lanname in ('sql', 'plpgsql')
        and ${notExtensionMember('pg_catalog.pg_proc', 'p')}
      order by 1, 2, 3`,
    [oids],
  );
  const [others] = await session.query<{ count: string }>(
    `select pg_catalog.count(*) as count from pg_catalog.pg_proc p join pg_catalog.pg_language l on l.oid = p.prolang
      where p.pronamespace = any($1::pg_catalog.oid[]) and p.prokind in ('f', 'p') and l.lanname not in ('sql', 'plpgsql', 'internal', 'c')
        and ${notExtensionMember('pg_catalog.pg_proc', 'p')}`,
    [oids],
  );

  const policies = await session.query<PolicyRow>(
    `select n.nspname as schema, c.relname as table, pol.polname as name, pol.polpermissive as permissive, pol.polcmd as cmd,
            case when pol.polroles = '{0}'::pg_catalog.oid[] then array['public']
                 else array(select pg_catalog.quote_ident(r.rolname) from pg_catalog.pg_roles r where r.oid = any(pol.polroles) order by 1) end as roles,
            pg_catalog.pg_get_expr(pol.polqual, pol.polrelid) as qual,
            pg_catalog.pg_get_expr(pol.polwithcheck, pol.polrelid) as with_check
       from pg_catalog.pg_policy pol
       join pg_catalog.pg_class c on c.oid = pol.polrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relnamespace = any($1::pg_catalog.oid[]) and ${notExtensionMember('pg_catalog.pg_class', 'c')}
      order by 1, 2, 3`,
    [oids],
  );

  let role: RoleRow | undefined;
  if (options.role !== undefined) {
    [role] = await session.query<RoleRow>(
      `select r.rolname as name, r.rolsuper as superuser, r.rolbypassrls as bypass_rls from pg_catalog.pg_roles r where r.rolname = $1`,
      [options.role],
    );
    if (!role) throw new DatabaseError(`--role ${options.role}: there is no such role in database ${about.database}. Name the role the app connects as (role names are case-sensitive).`);
  }
  // A superuser or BYPASSRLS role skips every policy whoever owns the table: ownership says nothing more.
  const ownerCheck = role && !role.superuser && !role.bypass_rls ? role.name : null;
  const tables = await session.query<TableRow>(
    `select n.nspname as schema, c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as force,
            pg_catalog.pg_get_userbyid(c.relowner) as owner,
            case when $2::pg_catalog.text is null then null
                 when c.relowner = (select r.oid from pg_catalog.pg_roles r where r.rolname = $2) then 'owner'
                 when pg_catalog.pg_has_role($2::pg_catalog.name, c.relowner, 'USAGE') then 'member' end as app_role_owns
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relnamespace = any($1::pg_catalog.oid[]) and c.relkind in ('r', 'p')
        and (c.relrowsecurity or exists (select 1 from pg_catalog.pg_policy pol where pol.polrelid = c.oid))
        and ${notExtensionMember('pg_catalog.pg_class', 'c')}
      order by 1, 2`,
    [oids, ownerCheck],
  );

  // Defaults that apply to connections to this database: of this database, or of every database.
  const settings = await session.query<SettingRow>(
    `select r.rolname as role, d.datname as database, s.setconfig as config
       from pg_catalog.pg_db_role_setting s
       left join pg_catalog.pg_roles r on r.oid = s.setrole
       left join pg_catalog.pg_database d on d.oid = s.setdatabase
      where s.setdatabase = 0 or d.datname = pg_catalog.current_database()
      order by r.rolname nulls first, d.datname nulls first`,
  );

  return {
    database: about.database,
    serverVersion: about.version,
    schemas: chosen.map((n) => n.name),
    routines,
    otherRoutines: Number(others.count),
    policies,
    tables,
    settings,
    ...(role ? { role } : {}),
  };
}
