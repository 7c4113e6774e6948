// The database's owner chooses the search_path every session starts with
// (ALTER DATABASE ... SET search_path). pgq-audit db must run none of the
// functions, aggregates or operators such a path would put ahead of
// pg_catalog: they would run as the linting role. The planted objects raise
// an error naming themselves, so one that runs fails the lint; a plain
// session of the linting role shows each plant does catch an unqualified call.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { runMain, startLintDatabase, type LintDatabase } from './support.ts';

let db: LintDatabase;
before(async () => {
  db = await startLintDatabase();
});
after(async () => {
  await db?.stop();
});

/** Each raises `planted <name> ran as <role>`; `grant ... to public` so the linting role's lookups find them. */
const PLANTS = `
create schema evil;
grant usage on schema evil to public;
create function evil.current_database() returns name language plpgsql as $$ begin raise exception 'planted evil.current_database() ran as %', current_user; end $$;
create function evil.current_setting(text) returns text language plpgsql as $$ begin raise exception 'planted evil.current_setting(%) ran as %', $1, current_user; end $$;
create function evil.count_step(bigint) returns bigint language plpgsql as $$ begin raise exception 'planted evil.count(*) ran as %', current_user; end $$;
create aggregate evil.count(*) (sfunc = evil.count_step, stype = bigint, initcond = '0');
create function evil.oid_eq(oid, oid) returns boolean language plpgsql as $$ begin raise exception 'planted evil.=(oid, oid) ran as %', current_user; end $$;
create operator evil.= (leftarg = oid, rightarg = oid, function = evil.oid_eq);
create function evil.name_not_match(name, text) returns boolean language plpgsql as $$ begin raise exception 'planted evil.!~(name, text) ran as %', current_user; end $$;
create operator evil.!~ (leftarg = name, rightarg = text, function = evil.name_not_match);
`;

interface JsonResult {
  filePath: string;
  messages: { ruleId: string | null; messageId?: string; line: number; column: number; message: string }[];
}

async function lint(): Promise<{ code: number; findings: string[]; stderr: string }> {
  const run = await runMain(['db', db.urlAs('pgq_db_lint'), '--role', 'pgq_db_app', '--format', 'json']);
  const results = run.code === 2 ? [] : (JSON.parse(run.stdout) as JsonResult[]);
  const findings = results.flatMap((r) => r.messages.map((m) => `${r.filePath} ${m.line}:${m.column} ${m.ruleId} ${m.messageId} ${m.message}`)).sort();
  return { code: run.code, findings, stderr: run.stderr };
}

test('a search_path default of the database puts planted functions and operators first: pgq-audit db runs none of them, and reports the same', { timeout: 120_000 }, async () => {
  await db.run(PLANTS);
  // A harmless path first, so the database's defaults have the same entries (and lines) before and after.
  await db.run(`alter database ${db.database} set search_path = "$user", public`);
  const clean = await lint();
  assert.equal(clean.code, 1, clean.stderr);
  assert.ok(clean.findings.some((f) => f.startsWith(`db:database ${db.database} `)), 'the database is named by its real name');

  await db.run(`alter database ${db.database} set search_path = evil, pg_catalog`);
  // The plants work: an unqualified call or operator in a session of the linting role runs them.
  const client = new pg.Client({ connectionString: db.urlAs('pgq_db_lint') });
  await client.connect();
  try {
    assert.equal((await client.query<{ search_path: string }>('show search_path')).rows[0].search_path, 'evil, pg_catalog');
    await assert.rejects(client.query('select current_database()'), /planted evil\.current_database\(\) ran as pgq_db_lint/);
    await assert.rejects(client.query("select current_setting('server_version')"), /planted evil\.current_setting\(server_version\) ran as pgq_db_lint/);
    await assert.rejects(client.query('select count(*) from pg_catalog.pg_class'), /planted evil\.count\(\*\) ran as pgq_db_lint/);
    await assert.rejects(client.query('select 1 from pg_catalog.pg_class c where c.oid = c.oid'), /planted evil\.=\(oid, oid\) ran as pgq_db_lint/);
    await assert.rejects(client.query("select 1 from pg_catalog.pg_namespace n where n.nspname !~ '^pg_'"), /planted evil\.!~\(name, text\) ran as pgq_db_lint/);
  } finally {
    await client.end();
  }

  const poisoned = await lint();
  assert.doesNotMatch(poisoned.stderr, /planted/);
  assert.equal(poisoned.code, 1, poisoned.stderr);
  assert.deepEqual(poisoned.findings, clean.findings);
});
