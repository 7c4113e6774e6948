// The database the db tests lint: a fresh database on the test server
// (embedded PostgreSQL 17.10, or PGQ_TEST_DATABASE_URL) with
// fixtures/db/schema.sql loaded by its superuser owner, and URLs for the
// fixture's roles. Roles belong to the server, not the database: the
// embedded server goes away with them; on a PGQ_TEST_DATABASE_URL server they
// stay (the schema creates them only where missing), because the test files
// run at once and one must not drop the roles another is connected as.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';

export const SCHEMA = readFileSync(join(import.meta.dirname, '../../fixtures/db/schema.sql'), 'utf8');

export interface LintDatabase extends TestDatabase {
  /** The URL of a fixture role, with its password (or another one). */
  urlAs(role: string, password?: string): string;
  /** Runs SQL as the superuser owner. */
  run(sql: string): Promise<void>;
}

export async function startLintDatabase(): Promise<LintDatabase> {
  const db = await startTestDatabase({ seed: false });
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: db.ownerUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await run(SCHEMA);
  } catch (error) {
    await db.stop();
    throw error;
  }
  const passwords: Record<string, string> = { pgq_db_app: 'app', pgq_db_bypass: 'bypass', pgq_db_lint: 'lint', pgq_db_tenant_42: 'tenant42', pgq_db_reader: 'reader' };
  return {
    ...db,
    run,
    urlAs(role, password = passwords[role]) {
      const url = new URL(db.ownerUrl);
      url.username = role;
      url.password = password ?? '';
      return url.toString();
    },
  };
}

/** The CLI's main() in this process (no process start per run): what the built CLI does, from the source. */
export async function runMain(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli/main.ts');
  const { repoRoot } = await import('../helpers/cli.ts');
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), isTTY: false, cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' } });
  return { code, stdout, stderr };
}
