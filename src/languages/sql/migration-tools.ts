// The migration tools a .sql file belongs to: by its path and name, and by the markers their files carry.

export type MigrationTool = 'goose' | 'sql-migrate' | 'dbmate' | 'drizzle' | 'flyway' | 'sqitch' | 'golang-migrate' | 'prisma' | 'supabase' | 'north' | 'migrations folder';

const GOOSE = /^--\s*\+goose\s+(up|down|statementbegin|statementend|no transaction|envsub\s+(?:on|off))\b/i;
const SQL_MIGRATE = /^--\s*\+migrate\s+(up|down|statementbegin|statementend)\b/i;
const DBMATE = /^--\s*migrate:(up|down)\b/i;
const DRIZZLE = /^-->\s*statement-breakpoint\b/i;
/** Markers that start a new statement (the SQL before them needs no `;`). */
const ENDS_STATEMENT = /^(up|down|statementend|statementbegin)$/i;

/** A migration tool's marker in a comment, and whether it ends the statement before it. */
export function markerOf(comment: string, lineStart: boolean): { tool: MigrationTool; endsStatement: boolean } | undefined {
  if (DRIZZLE.test(comment)) return { tool: 'drizzle', endsStatement: true };
  if (!lineStart) return undefined;
  const goose = GOOSE.exec(comment);
  if (goose) return { tool: 'goose', endsStatement: ENDS_STATEMENT.test(goose[1]) };
  const sqlMigrate = SQL_MIGRATE.exec(comment);
  if (sqlMigrate) return { tool: 'sql-migrate', endsStatement: ENDS_STATEMENT.test(sqlMigrate[1]) };
  if (DBMATE.test(comment)) return { tool: 'dbmate', endsStatement: true };
  return undefined;
}

/** Tools known by where their files live and how they are named. */
export function migrationByPath(file: string): MigrationTool | undefined {
  const path = file.replace(/\\/g, '/');
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (/\/supabase\/migrations\//.test(path)) return 'supabase';
  if (/\/migrations\/[^/]+\/migration\.sql$/.test(path)) return 'prisma';
  if (/^[VUR]\d*(?:[._]\d+)*__.+\.sql$/.test(name) || /^R__.+\.sql$/.test(name)) return 'flyway';
  if (/^\d+_.+\.(up|down)\.sql$/.test(name)) return 'golang-migrate';
  if (/\/(deploy|revert|verify)\/[^/]+\.sql$/.test(path) && /\/sqitch\b|sqitch/.test(path)) return 'sqitch';
  if (/\/(migrations?|migrate|db\/migrate|schema_migrations)\/[^/]+\.sql$/i.test(path)) return 'migrations folder';
  // Migrations grouped by the database they target (`migrations/tenant/0038-add-flag.sql`): numbered, in order.
  if (/\/(migrations?|migrate)\/[^/]+\/\d[^/]*\.sql$/i.test(path)) return 'migrations folder';
  return undefined;
}
