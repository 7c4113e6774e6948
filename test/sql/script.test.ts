// How the .sql front end reads a file before the parser: psql meta-commands,
// variables and COPY data, migration markers, query-file placeholders. The
// text keeps its length, so every offset stays the user's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readScript } from '../../src/languages/sql/script.ts';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

const parse = (text: string, file = 'x.sql') => sqlFrontEnd.parse(text, file, {});
const kinds = (text: string, file?: string) => parse(text, file).sites.map((s) => s.analysis.statements[0].kind);

describe('psql scripts', () => {
  test('meta-commands are blanked to the end of their line; the text keeps its length and its newlines', () => {
    const text = "\\set ON_ERROR_STOP on\n\\echo 'hi; there'\nselect 1;\n\\c other\nselect 2;\n";
    const reading = readScript(text, 'x.sql');
    assert.equal(reading.sql.length, text.length);
    assert.equal(reading.psql, true);
    assert.deepEqual(reading.sql.split('\n').map((l) => l.trim()), ['', '', 'select 1;', '', 'select 2;', '']);
    assert.deepEqual(kinds(text), ['SelectStmt', 'SelectStmt']);
  });

  test('\\gexec, \\gset and \\g end the statement before them', () => {
    const text = "select format('grant select on %I to app', tablename) from pg_tables \\gexec\nselect count(*) as n from t \\gset\nselect 3";
    assert.deepEqual(parse(text).sqlErrors, []);
    assert.deepEqual(kinds(text), ['SelectStmt', 'SelectStmt', 'SelectStmt']);
  });

  test("COPY ... FROM stdin data up to \\. is not SQL, also after \\copy ... from stdin and with ; in the data", () => {
    const text = 'copy t (a, b) from stdin;\n1\tx; y\n2\t\\N\n\\.\n\\copy t from stdin with csv\n3,"a;b"\n\\.\nselect 1;';
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['CopyStmt', 'SelectStmt']);
  });

  test("variables: :name, :'name' and :\"name\" stand for what \\set gave them, else for a value or a name", () => {
    const text = "\\set setting app.tenant\n\\set schema_name acme\nselect set_config(:'setting', '7', false);\ncreate table :\"schema_name\".jobs (id int);\nselect * from :\"unknown_schema\".t where id = :id and x::int = 1 and a[1:2] = b;";
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    const [write] = model.sites[0].analysis.statements[0].settingWrites;
    assert.equal(write.name, 'app.tenant');
    assert.equal(model.sites.length, 3);
  });

  test(":'name' or :\"name\" alone makes a psql script (no backslash command); :name alone does not (query files write it too)", () => {
    const quoted = parse("select set_config('app.tenant', :'tenant', false);\nselect * from :\"schema_name\".jobs;");
    assert.deepEqual(quoted.sqlErrors, []);
    assert.equal(readScript("select set_config('app.tenant', :'tenant', false);", 'x.sql').psql, true);
    assert.equal(readScript('select * from :"schema_name".jobs;', 'x.sql').psql, true);
    assert.deepEqual(quoted.sites.map((s) => s.connection.kind), ['dedicated', 'dedicated']);
    assert.equal(readScript('select * from jobs where id = :id;', 'x.sql').psql, false);
    assert.equal(readScript("select ':''x''' as s, a::text from t;", 'x.sql').psql, false);
  });

  test('a psql script runs on its own connection: its session writes cannot reach a pooled job', () => {
    const model = parse("\\set ON_ERROR_STOP on\nset app.tenant = '1';\nselect 1;");
    assert.deepEqual(model.sites.map((s) => s.connection.kind), ['dedicated', 'dedicated']);
  });
});

describe('migration tools', () => {
  test('goose, sql-migrate and dbmate markers and the Drizzle breakpoint end a statement that has no semicolon', () => {
    for (const [tool, text] of [
      ['goose', '-- +goose Up\ncreate table a (id int)\n-- +goose Down\ndrop table a'],
      ['sql-migrate', '-- +migrate Up\ncreate table a (id int)\n-- +migrate Down\ndrop table a'],
      ['dbmate', '-- migrate:up\ncreate table a (id int)\n-- migrate:down\ndrop table a'],
      ['drizzle', 'create table a (id int)\n--> statement-breakpoint\ndrop table a'],
    ]) {
      const reading = readScript(text, 'm.sql');
      assert.equal(reading.migration, tool);
      const model = parse(text, 'm.sql');
      assert.deepEqual(model.sqlErrors, [], tool);
      assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['CreateStmt', 'DropStmt'], tool);
      assert.ok(model.sites.every((s) => s.connection.kind === 'dedicated'), tool);
    }
  });

  test('Flyway, golang-migrate, Prisma, Supabase and sqitch files are known by their path', () => {
    assert.equal(readScript('', '/p/db/V3__init.sql').migration, 'flyway');
    assert.equal(readScript('', '/p/db/000042_outbox.up.sql').migration, 'golang-migrate');
    assert.equal(readScript('', '/p/prisma/migrations/20240101_init/migration.sql').migration, 'prisma');
    assert.equal(readScript('', '/p/supabase/migrations/20240101000000_a.sql').migration, 'supabase');
    assert.equal(readScript('', '/p/sqitch/deploy/jobs.sql').migration, 'sqitch');
    assert.equal(readScript('', '/p/queries/jobs.sql').migration, undefined);
  });

  test('${name} placeholders (Flyway, goose ENVSUB) stand for names or values', () => {
    const model = parse("create table ${schema}.audit (actor text default '${flyway:user}');\ngrant select on ${schema}.audit to ${role:-reader};", '/p/V1__a.sql');
    assert.deepEqual(model.sqlErrors, []);
    assert.equal(model.sites.length, 2);
  });
});

describe('query files', () => {
  test('aiosql/yesql `-- name:` headers start a query; :name and %(name)s are placeholders', () => {
    const text = '-- name: one^\nselect * from t where id = :id\n\n-- name: two!\nupdate t set a = %(a)s where id = %s\n-- name: three\nselect * from t where id in (:ids)';
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['SelectStmt', 'UpdateStmt', 'SelectStmt']);
    assert.ok(model.sites.every((s) => s.scope.kind === 'unknown'), 'the application decides where a named query runs');
  });

  test('pgtyped: `/* @name */` comments start a query; :id! and list parameters (IN :ids, VALUES :rows) parse', () => {
    const text = '/* @name A */\nselect * from t where id = :id!\n/* @name B\n @param rows -> ((a, b)...) */\ninsert into t (a, b) values :rows;\n/* @name C */ select * from t where id in :ids';
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['SelectStmt', 'InsertStmt', 'SelectStmt']);
  });

  test('sqlc: @name parameters in a file with sqlc headers, sqlc.arg() calls', () => {
    const model = parse('-- name: ListJobs :many\nselect * from jobs where status = @status and kind = sqlc.arg(kind) limit sqlc.narg(max_rows);');
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites[0].analysis.statements[0].calls ?? [], []);
  });

  test('Python format templates: {table}, {where}, {}', () => {
    const model = parse('select id from {table} where {where} order by id limit {limit};\nupdate {} set status = %s where id = any(%s);');
    assert.deepEqual(model.sqlErrors, []);
    assert.equal(model.sites.length, 2);
  });

  test('the PostgreSQL operators the placeholders look like are left alone: ::, :=, a[1:2], %, @, jsonb ?', () => {
    const text = "select a::int, f(x := 1), arr[1:2], arr[lo:hi], 7 % 2, @ -5, '{\"a\":1}'::jsonb ? 'a', '10:30'::time";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes, []);
    assert.deepEqual(analyzeSql(reading.sql).errors, []);
  });
});

describe('files that are not PostgreSQL', () => {
  test('are skipped with one warning only when they do not parse: a PostgreSQL file that mentions PRAGMA parses and is read', () => {
    const model = parse('-- PRAGMA foreign_keys is SQLite; here we use real constraints\ncreate table t (id int primary key);');
    assert.equal(model.skipped, undefined);
    assert.equal(model.sites.length, 1);
    const sqlite = parse('PRAGMA foreign_keys = ON;\ncreate table t (id integer primary key autoincrement);');
    assert.match(sqlite.skipped?.message ?? '', /SQLite, not PostgreSQL \(PRAGMA foreign_keys at line 1\)/);
    assert.deepEqual([sqlite.sites, sqlite.sqlErrors, sqlite.fatal], [[], [], undefined]);
  });
});
