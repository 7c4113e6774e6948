// .sql files as repositories have them (fixtures/sql-files): psql scripts,
// pg_dump output, migration tools' files, query files with host placeholders.
// Scanned as one folder with the files that are not PostgreSQL
// (fixtures/sql-not-postgresql), none gets a fatal message; those others get
// one warning each, or none, or a parse error, as sql.dialectDetection says.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { validateConfig } from '../../src/config/validate.ts';

const root = join(import.meta.dirname, '../../fixtures/sql-files');
const foreign = join(import.meta.dirname, '../../fixtures/sql-not-postgresql');
const kinds: Record<string, RegExp> = {
  'dbt-model.sql': /a Jinja\/dbt template/,
  'go-template.sql': /a Go template/,
  'mysql-schema.sql': /MySQL/,
  'bigquery-schema.sql': /it is BigQuery,/,
  'clickhouse-table.sql': /ClickHouse/,
  'clickhouse-alter.sql': /ClickHouse/,
  'clickhouse-mutation.sql': /ClickHouse/,
  'clickhouse-view.sql': /ClickHouse/,
  'clickhouse-grants.sql': /ClickHouse/,
  'mysql-grants.sql': /MySQL/,
  'sqlite-schema.sql': /SQLite/,
  'tsql-schema.sql': /T-SQL/,
};

describe('fixtures/sql-files and fixtures/sql-not-postgresql scanned together', { timeout: 60_000 }, () => {
  test('no valid file gets a fatal message; each file that is not PostgreSQL gets one warning naming what it is', async () => {
    const { results } = await scan({ paths: [root, foreign], concurrency: 'off' });
    assert.ok(results.length >= 30, `${results.length} files`);
    const fatal = results.flatMap((r) => r.messages.filter((m) => m.fatal).map((m) => `${r.filePath}:${m.line} ${m.message}`));
    assert.deepEqual(fatal, []);
    for (const result of results.filter((r) => r.filePath.startsWith(foreign))) {
      const name = result.filePath.slice(foreign.length + 1);
      assert.equal(result.messages.length, 1, name);
      const [message] = result.messages;
      assert.deepEqual([message.ruleId, message.severity, message.messageId], [null, 1, 'not-postgresql'], name);
      assert.match(message.message, kinds[name], name);
      assert.match(message.message, /not PostgreSQL/);
    }
    assert.deepEqual(
      results.filter((r) => r.filePath.startsWith(foreign)).map((r) => r.filePath.slice(foreign.length + 1)).sort(),
      readdirSync(foreign).sort(),
    );
  });

  test('a function body that does not parse is a parse error unless check_function_bodies was turned off before it', async () => {
    const text = readFileSync(join(root, 'unchecked-function-bodies.sql'), 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'pgq-unchecked-'));
    // The same file with the SET after the functions: PostgreSQL parses the bodies at CREATE and rejects the first.
    const setAfter = text.replace('SET check_function_bodies = false;\n', '') + 'SET check_function_bodies = false;\n';
    writeFileSync(join(dir, 'set-after.sql'), setAfter);
    const { results } = await scan({ paths: [join(root, 'unchecked-function-bodies.sql'), join(dir, 'set-after.sql')], concurrency: 'off' });
    const fatal = (name: string) => results.find((r) => r.filePath.endsWith(name))!.messages.filter((m) => m.fatal).map((m) => m.message);
    assert.deepEqual(fatal('unchecked-function-bodies.sql'), []);
    assert.equal(fatal('set-after.sql').length, 1);
    assert.match(fatal('set-after.sql')[0], /PL\/pgSQL body of billing\.close_period/);
  });

  test('dialectDetection "quiet" skips them silently, "off" parses them as PostgreSQL', async () => {
    const quiet = await scan({ paths: [foreign], concurrency: 'off', sql: { dialectDetection: 'quiet' } });
    assert.deepEqual(quiet.results.flatMap((r) => r.messages), []);
    const off = await scan({ paths: [foreign], concurrency: 'off', sql: { dialectDetection: 'off' } });
    assert.equal(off.results.length, Object.keys(kinds).length);
    for (const result of off.results) assert.ok(result.messages.some((m) => m.fatal && /Parsing error/.test(m.message)), result.filePath);
  });

  test('a file that does not parse, in a folder named after another database, is that database\'s', async () => {
    const folders = join(import.meta.dirname, '../../fixtures/sql-dialect-folders');
    const { results } = await scan({ paths: [folders], concurrency: 'off' });
    const messages = (name: string) => results.find((r) => r.filePath.endsWith(name))!.messages.map((m) => [m.fatal ?? false, m.messageId, m.message]);
    assert.deepEqual(messages('postgresql/query.sql'), []);
    assert.match(String(messages('mysql/query.sql')[0]?.[2]), /^File skipped: it is MySQL, not PostgreSQL \(it does not parse as PostgreSQL, in a folder named mysql\/\)/);
    assert.match(String(messages('sqlite/schema.sql')[0]?.[2]), /it is SQLite, not PostgreSQL/);
    assert.match(String(messages('mysql_functions/concat.sql')[0]?.[2]), /it is MySQL, not PostgreSQL \(it does not parse as PostgreSQL, in a folder named mysql_functions\/\)/);
    assert.match(String(messages('sqlc-package/query.sql')[0]?.[2]), /it is MySQL, not PostgreSQL \(it does not parse as PostgreSQL, and sqlc.yaml "engine": "mysql" says so\)/);
    // The folder is a sign only where the text does not parse: a PostgreSQL error there is still reported.
    const dir = mkdtempSync(join(tmpdir(), 'pgq-folder-'));
    mkdirSync(join(dir, 'postgres'));
    writeFileSync(join(dir, 'postgres', 'broken.sql'), 'SELECT FROM WHERE;\n');
    const broken = await scan({ paths: [dir], concurrency: 'off' });
    assert.equal(broken.results[0].messages.filter((m) => m.fatal).length, 1);
  });

  test('a migration named for another database (`x.mysql.up.sql`, `x.cockroach.up.sql`) that does not parse is that database\'s', async () => {
    const folder = join(import.meta.dirname, '../../fixtures/sql-dialect-folders/per-database-migrations');
    const { results } = await scan({ paths: [folder], concurrency: 'off' });
    const messages = (name: string) => results.find((r) => r.filePath.endsWith(name))!.messages.map((m) => [m.fatal ?? false, m.message]);
    assert.deepEqual(messages('_orders_index.cockroach.up.sql').map(([fatal]) => fatal), [false]);
    assert.match(String(messages('_orders_index.cockroach.up.sql')[0][1]), /^File skipped: it is CockroachDB, not PostgreSQL \(it does not parse as PostgreSQL, and its name has \.cockroach\.\)/);
    assert.match(String(messages('_orders_index.mysql.down.sql')[0][1]), /^File skipped: it is MySQL, not PostgreSQL \(it does not parse as PostgreSQL, and its name has \.mysql\.\)/);
    assert.deepEqual(messages('_orders_index.postgres.up.sql'), []);
    // A name that says PostgreSQL is no sign of another database: its parse error is reported.
    assert.deepEqual(messages('_orders_index.postgres.down.sql').map(([fatal]) => fatal), [true]);
  });

  test('a routine a regression script defines runs on psql\'s connection to the test database: its session-level write leaks to no job', async () => {
    const script = join(import.meta.dirname, '../../fixtures/sql-regress/test/sql/schema_helpers.sql');
    const inRegress = await scan({ paths: [script], concurrency: 'off' });
    assert.deepEqual(inRegress.results[0].messages.map((m) => m.ruleId), []);
    // The same routine in a migration of an application: its callers may be pooled jobs, and it is reported.
    const dir = mkdtempSync(join(tmpdir(), 'pgq-regress-'));
    writeFileSync(join(dir, 'schema_helpers.sql'), readFileSync(script, 'utf8'));
    const elsewhere = await scan({ paths: [dir], concurrency: 'off' });
    assert.deepEqual(elsewhere.results[0].messages.map((m) => m.ruleId), ['no-session-tenant-setting']);
  });

  test('a routine a pgTAP script, or a file one includes, defines runs on psql\'s connection: its session-level write leaks to no job', async () => {
    const suite = join(import.meta.dirname, '../../fixtures/sql-pgtap');
    const inSuite = await scan({ paths: [suite], concurrency: 'off' });
    // Only the test folder's file no pgTAP script includes: a schema the server under test serves over its pool.
    assert.deepEqual(
      inSuite.results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(suite.length + 1)}:${m.line} ${m.ruleId}`)),
      ['tests/server_schema.sql:6 no-session-tenant-setting'],
    );
    // The same routines in an application's schema file: their callers may be pooled jobs, and they are reported.
    const dir = mkdtempSync(join(tmpdir(), 'pgq-pgtap-'));
    writeFileSync(join(dir, 'login_helpers.sql'), readFileSync(join(suite, 'tests/login_helpers.sql'), 'utf8'));
    const pgtapFree = readFileSync(join(suite, 'checks/visibility.sql'), 'utf8').replace(/^SELECT (?:plan\(1\)|is\(.*|\* FROM finish\(\));$/gm, '');
    writeFileSync(join(dir, 'visibility.sql'), pgtapFree);
    const elsewhere = await scan({ paths: [dir], concurrency: 'off' });
    assert.deepEqual(elsewhere.results.flatMap((r) => r.messages.map((m) => m.ruleId)).sort(), ['no-session-tenant-setting', 'no-session-tenant-setting', 'no-session-tenant-setting']);
  });

  test('a file another .sql file includes with a Jinja tag, that does not parse alone, is a fragment: one warning naming the includer', async () => {
    const dir = join(root, 'jinja-includes');
    const { results } = await scan({ paths: [dir], concurrency: 'off' });
    const messages = (name: string) => results.find((r) => r.filePath.endsWith(name))!.messages;
    assert.deepEqual(messages('refresh_catalog.sql'), []);
    assert.deepEqual(messages('catalog_views.sql'), [], 'a fragment that parses alone is read as it is');
    const [skipped, ...others] = messages('catalog_checks.sql');
    assert.deepEqual(others, []);
    assert.deepEqual([skipped.ruleId, skipped.severity, skipped.fatal ?? false, skipped.messageId], [null, 1, false, 'not-postgresql']);
    assert.match(skipped.message, /a fragment of a Jinja template.*\{% include "parts\/catalog_checks\.sql" %\} of refresh_catalog\.sql/);
    // The same text with no file that includes it is a parse error, as before.
    const alone = mkdtempSync(join(tmpdir(), 'pgq-fragment-'));
    writeFileSync(join(alone, 'catalog_checks.sql'), readFileSync(join(dir, 'parts', 'catalog_checks.sql')));
    writeFileSync(join(alone, 'other.sql'), '/*{% include "parts/other.sql" %}*/\nselect 1;\n');
    // Included, but not PL/pgSQL statements: a function whose body is broken, SQL with a typo. The user's errors.
    mkdirSync(join(alone, 'parts'));
    writeFileSync(join(alone, 'builder.sql'), 'create function build() returns void language plpgsql as $$\nbegin\n  /*{% include "parts/stop.sql" %}*/\n  /*{% include "parts/typo.sql" %}*/\nend;\n$$;\n');
    writeFileSync(join(alone, 'parts', 'stop.sql'), "create function stop(p text) returns void language plpgsql as $b$\nbegin\n  update services set state = 'stopped'\n  from from services where name = p;\nend;\n$b$;\n");
    writeFileSync(join(alone, 'parts', 'typo.sql'), 'update services set state = where name = 1;\n');
    const { results: aloneResults } = await scan({ paths: [alone], concurrency: 'off' });
    const fatal = aloneResults.flatMap((r) => r.messages.filter((m) => m.fatal).map((m) => `${relative(alone, r.filePath)}:${m.line}`)).sort();
    assert.deepEqual(fatal, ['catalog_checks.sql:8', 'parts/stop.sql:1', 'parts/typo.sql:1']);
  });

  test('the config key "sql" is validated', () => {
    assert.deepEqual(validateConfig({ sql: { dialectDetection: 'quiet' } }, 'x.json').sql, { dialectDetection: 'quiet' });
    assert.throws(() => validateConfig({ sql: { dialectDetection: 'loud' } }, 'x.json'), /"loud" is not allowed. Valid values: "warn", "quiet", "off"/);
    assert.throws(() => validateConfig({ sql: { dialect: 'mysql' } }, 'x.json'), /unknown option 'dialect'/);
  });
});
