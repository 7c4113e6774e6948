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
/** Every statement parsed, also those that carry no fact (COPY, DROP, GRANT): that the reading makes each one parse. */
const parseEvery = (text: string, file = 'x.sql') => sqlFrontEnd.parse(text, file, { sql: { parseEvery: true } });
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
    const model = parseEvery(text);
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

  test("a variable's value is read again where it is used: the variables in it have their values at that use", () => {
    // A call written once, its arguments set before each use; :'input_dir' is the runner's (psql -v).
    const text = [
      "\\set reader 'read_samples(:''codec'', format(''%s/%s'', :''input_dir'', :''codec''), '",
      '\\set codec gorilla',
      'select count(*) from :reader true) bulk;',
      '\\set codec delta',
      "select set_config('app.codec', c, false) from :reader false) r(c);",
    ].join('\n');
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.equal(model.sites.length, 2);
    const holes = readScript(text, 'x.sql').holes.map((h) => h.text);
    assert.deepEqual(holes, ["read_samples('gorilla', format('%s/%s', ':input_dir', 'gorilla'), ", "read_samples('delta', format('%s/%s', ':input_dir', 'delta'), "]);
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

  test("a script of pg_regress's sql/ folder is psql's even without a meta-command; another folder's plain .sql file is not", () => {
    const text = "set myext.enable_cache = on;\nselect 1;";
    for (const file of ['/r/regress/sql/cache.sql', '/r/test/sql/include/q.sql', '/r/src/test/regress/sql/a.sql', '/r/tsl/test/shared/sql/b.sql']) {
      assert.deepEqual(parse(text, file).sites.map((s) => s.connection.kind), ['dedicated', 'dedicated'], file);
    }
    for (const file of ['/r/sql/queries.sql', '/r/src/db/sql/tenant.sql']) {
      assert.deepEqual(parse(text, file).sites.map((s) => s.connection.kind), ['unknown', 'unknown'], file);
    }
    // pg_regress runs psql with ON_ERROR_STOP off: a statement there fails on purpose unless the script turned it on.
    const failing = 'select * from f([1, 2]);\n\\set ON_ERROR_STOP 1\nselect from where;\n';
    assert.deepEqual(parseEvery(failing, '/r/regress/sql/expr.sql').sqlErrors.map((e) => failing.slice(0, e.span.start).split('\n').length), [3]);
    assert.equal(parseEvery(failing, '/r/sql/expr.sql').sqlErrors.length, 2);
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
      const model = parseEvery(text, 'm.sql');
      assert.deepEqual(model.sqlErrors, [], tool);
      assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['CreateStmt', 'DropStmt'], tool);
      assert.ok(model.sites.every((s) => s.connection.kind === 'dedicated'), tool);
    }
  });

  test("north (Racket): the `#lang north` line is the reader's, and `-- @up {`, `-- @down {`, `-- }` end a statement", () => {
    const text = '#lang north\n-- @up {\ncreate table t (id int)\n-- }\n-- @down {\ndrop table t\n-- }\n';
    const reading = readScript(text, 'app/migrations/20240101-t.sql');
    assert.equal(reading.migration, 'north');
    assert.equal(reading.sql.length, text.length);
    assert.deepEqual(parseEvery(text, 'app/migrations/20240101-t.sql').sites.map((s) => s.analysis.statements[0].kind), ['CreateStmt', 'DropStmt']);
    assert.deepEqual(parse('#lang north\nselect 1;').sqlErrors, []);
  });

  test('Flyway, golang-migrate, Prisma, Supabase and sqitch files are known by their path', () => {
    assert.equal(readScript('', '/p/db/V3__init.sql').migration, 'flyway');
    assert.equal(readScript('', '/p/db/000042_outbox.up.sql').migration, 'golang-migrate');
    assert.equal(readScript('', '/p/prisma/migrations/20240101_init/migration.sql').migration, 'prisma');
    assert.equal(readScript('', '/p/supabase/migrations/20240101000000_a.sql').migration, 'supabase');
    assert.equal(readScript('', '/p/sqitch/deploy/jobs.sql').migration, 'sqitch');
    assert.equal(readScript('', '/p/queries/jobs.sql').migration, undefined);
  });

  test('numbered migrations grouped in a sub-folder of migrations/ (one per target database) are migrations', () => {
    assert.equal(readScript('', '/p/migrations/tenant/0038-add-flag.sql').migration, 'migrations folder');
    assert.equal(readScript('', '/p/db/migrations/shared/20240101_init.sql').migration, 'migrations folder');
    // Not numbered: a seed or a helper kept beside the migrations.
    assert.equal(readScript('', '/p/migrations/seeds/demo-data.sql').migration, undefined);
  });

  test('a pgTAP script is a test script psql runs', () => {
    assert.equal(readScript('BEGIN;\nSELECT plan(2);\nSELECT ok(true);\nSELECT * FROM finish();\nROLLBACK;\n', '/p/checks/a.sql').regression, true);
    assert.equal(readScript('create function f() returns int language sql as $$ select 1 $$;\n', '/p/db/schema.sql').regression, undefined);
  });

  test('${name} placeholders (Flyway, goose ENVSUB) stand for names or values', () => {
    const model = parseEvery("create table ${schema}.audit (actor text default '${flyway:user}');\ngrant select on ${schema}.audit to ${role:-reader};", '/p/V1__a.sql');
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

  test('a named query that is a clause (`for update skip locked`, `where ...`) is a fragment the application splices into another: no statement, no parse error', () => {
    const text =
      '-- name: oldest_notes\nselect id, body from notes order by id limit :n\n  :_row_lock\n\n-- name: row_lock_clause\nfor update skip locked\n\n' +
      '-- name: open_filter\n  where closed_at is null\n\n-- name: close_note!\nupdate notes set closed_at = now() where id = :id';
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['SelectStmt', 'UpdateStmt']);
    // Outside a query file the same clause is an error of the file.
    assert.equal(parse('select 1;\nfor update skip locked;').sqlErrors.length, 1);
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

  test('? and ?NNN (JDBC, sqlx for MySQL/SQLite) are placeholders where a value starts; jsonb ? ?| ?& between operands are not', () => {
    const text = "update work_items set phase = ? , touched_at = ?2 where id = ? and ? >= due_at and body ? 'k' and (body -> 't') ?| array['a'] and tries < ?;";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes.map((h) => text.slice(h.start, h.end)), ['?', '?2', '?', '?', '?']);
    const model = parseEvery(text);
    assert.deepEqual(model.sqlErrors, []);
    const write = model.sites[0].analysis.statements[0].rowWrites[0];
    assert.deepEqual(write.where.filter((w) => w.value.kind === 'param').map((w) => w.column), ['id', 'due_at', 'tries']);
    assert.deepEqual(write.where.filter((w) => w.column === 'body').map((w) => w.value.kind), ['literal'], "body ? 'k' stays jsonb's operator");
  });

  test('the PostgreSQL operators the placeholders look like are left alone: ::, :=, a[1:2], %, @, jsonb ?', () => {
    const text = "select a::int, f(x := 1), arr[1:2], arr[lo:hi], 7 % 2, @ -5, '{\"a\":1}'::jsonb ? 'a', '10:30'::time";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes, []);
    assert.deepEqual(analyzeSql(reading.sql).errors, []);
  });
  test('a variable the script \\set is filled in where a slice would start too: ARRAY[:id1, :id2]; an unset one after [ stays a slice', () => {
    const text = "\\set id1 1::bigint\n\\set id2 2::bigint\nselect array[:id1, :id2] = arr[:n] from t;";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes.map((h) => [text.slice(h.start, h.end), h.text]), [[':id1', '1::bigint'], [':id2', '2::bigint']]);
    assert.deepEqual([parse(text).sqlErrors, parse(text).fatal], [[], undefined]);
  });
});

describe('what real repositories run', () => {
  const routineStatements = (model: ReturnType<typeof parse>) =>
    model.sites.map((s) => s.analysis.statements[0]).filter((st) => st.routine).map((st) => `${st.routine!.name}: ${st.kind}`);

  test(':name in a function body is a placeholder the runner fills in as text, a cast to one (x:::name.t) too; a[:n] is a slice', () => {
    const text = [
      'create function :SCHEMA.touch() returns trigger as $$',
      'begin',
      '  update :SCHEMA.jobs set attempts = attempts + 1 where id = new.id and tags[:2] = tags[1:2];',
      "  perform set_config('app.tenant', new.tenant::text, false), row(1)::::SCHEMA.spec;",
      '  return new;',
      'end;',
      '$$ language plpgsql;',
      'do $$ begin perform :SCHEMA.touch(); end $$;',
    ].join('\n').replace('::::', ':::');
    const model = parse(text);
    assert.deepEqual([model.sqlErrors, model.fatal], [[], undefined]);
    assert.deepEqual(routineStatements(model), [':SCHEMA.touch: UpdateStmt', ':SCHEMA.touch: SelectStmt', 'DO block: SelectStmt']);
    const update = model.sites.find((s) => s.analysis.statements[0].kind === 'UpdateStmt')!;
    assert.equal(text.slice(update.span.start, update.span.end).split('\n')[0], 'update :SCHEMA.jobs set attempts = attempts + 1 where id = new.id and tags[:2] = tags[1:2]');
    const write = model.sites.flatMap((s) => s.analysis.statements[0].settingWrites)[0];
    assert.deepEqual([write?.name, write?.level], ['app.tenant', 'session']);
  });

  test('a PL/pgSQL variable of an enum or domain type goes in a multiple-item INTO list; a composite read by field keeps its kind', () => {
    const body = (declare: string, statements: string) =>
      `create function f(p_id bigint) returns void language plpgsql as $$\ndeclare\n${declare}\nbegin\n${statements}\nend;\n$$;`;
    const enumInto = parse(body('  v_status job_status;\n  v_queues app.queue_name[];\n  v_abort boolean;', '  select status, queues, abort_requested into v_status, v_queues, v_abort from jobs where id = p_id;\n  update jobs set status = v_status where id = p_id;'));
    assert.deepEqual(enumInto.sqlErrors, []);
    assert.deepEqual(routineStatements(enumInto), ['f: SelectStmt', 'f: UpdateStmt']);
    const update = enumInto.sites.find((s) => s.analysis.statements[0].kind === 'UpdateStmt')!;
    assert.equal(enumInto.text.slice(update.span.start, update.span.end), 'update jobs set status = v_status where id = p_id', 'offsets are the text the user wrote');
    // A composite whose fields the body reads is a record to PostgreSQL too: in a multiple-item INTO it is the user's error.
    const composite = parse(body('  v_job job_row;\n  v_abort boolean;', '  select j, true into v_job, v_abort from jobs j;\n  update jobs set attempts = 0 where id = v_job.id;'));
    assert.match(composite.sqlErrors[0]?.message ?? '', /record variable cannot be part of multiple-item INTO list/);
  });

  test('a PL/pgSQL function returning an array of the schema\'s composite compiles; record[] itself does not, nor a bad body', () => {
    const fn = (header: string, body: string) => `create function f(p_id bigint${header} language plpgsql as $$\nbegin\n${body}\nend;\n$$;`;
    const ok = [
      fn(') returns app.step[]', '  return array(select row(name, done)::app.step from steps where job_id = p_id);'),
      fn(', out lines billing.line[], out total bigint)', '  select array_agg(l), sum(l.cents) into lines, total from lines l where invoice_id = p_id;'),
      fn(') returns table (pending "Step"[])', '  return query select array_agg(s) from steps s where s.job_id = p_id;'),
      fn(') returns setof step [ ]', '  update steps set done = true where job_id = p_id;\n  return;'),
    ];
    for (const text of ok) {
      const model = parse(text);
      assert.deepEqual(model.sqlErrors, [], text);
      assert.ok(routineStatements(model).length > 0, text);
    }
    assert.match(parse(fn(') returns record[]', '  update steps set done = true where job_id = p_id;\n  return null;')).sqlErrors[0]?.message ?? '', /cannot return type record\[\]/);
    assert.match(parse(fn(') returns step[]', '  update steps set done = true where job_id = p_id\n  return null;')).sqlErrors[0]?.message ?? '', /PL\/pgSQL body of f: syntax error/);
  });

  test('a field of a %ROWTYPE variable as an assignment target compiles; the value is still read, a bad body still fails', () => {
    const fn = (body: string) =>
      `create function f(p_id uuid) returns void language plpgsql as $$\ndeclare\n  v_inv invites%rowtype;\nbegin\n  select * into v_inv from invites where id = p_id;\n${body}\nend;\n$$;`;
    // The read, the value as PERFORM (after the IF's condition), the update.
    for (const [body, statements] of [
      ["  v_inv.status := 'expired';\n  update invites set status = v_inv.status where id = v_inv.id;", ['f: SelectStmt', 'f: SelectStmt', 'f: UpdateStmt']],
      [
        "  if v_inv.expires_at < now() then v_inv.status = 'expired'; end if;\n  update invites set status = v_inv.status where id = v_inv.id;",
        ['f: SelectStmt', 'f: SelectStmt', 'f: SelectStmt', 'f: UpdateStmt'],
      ],
    ] as const) {
      const model = parse(fn(body));
      assert.deepEqual(model.sqlErrors, [], body);
      assert.deepEqual(routineStatements(model), statements, body);
    }
    // A field of a scalar, or another statement that does not parse, stays an error.
    assert.match(parse(fn("  v_inv.status := 'expired';\n  update invites set where id = p_id;")).sqlErrors[0]?.message ?? '', /PL\/pgSQL body of f/);
    const scalar = fn("  v_n.status := 'expired';").replace('v_inv invites%rowtype;', 'v_inv invites%rowtype;\n  v_n int;');
    assert.match(parse(scalar).sqlErrors[0]?.message ?? '', /PL\/pgSQL body of f/);
  });

  test('procrastinate query files: a `-- query_name --` line starts a query that needs no semicolon', () => {
    const text = '-- defer_job --\n-- Enqueue a job\nINSERT INTO jobs (queue) VALUES (%(queue)s) RETURNING id\n\n-- fetch_job --\nSELECT id FROM jobs WHERE queue = %(queue)s FOR UPDATE SKIP LOCKED LIMIT 1\n\n-- finish --\nUPDATE jobs SET status = %(status)s WHERE id = %(id)s';
    const model = parse(text);
    assert.equal(readScript(text, 'queries.sql').queries, 'procrastinate');
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(kinds(text), ['InsertStmt', 'SelectStmt', 'UpdateStmt']);
    assert.ok(model.sites.every((s) => s.scope.kind === 'unknown'), 'the application decides where a named query runs');
    assert.equal(readScript('-- Tables --\ncreate table a (id int);\n', 'x.sql').queries, undefined, 'one dashed comment is a comment');
  });

  test('{{NAME}} placeholders are names or values, in function bodies too; a DO without ; ends at its body', () => {
    const text = "CREATE TABLE {{SCHEMA}}.jobs (id int);\nDO $$\nBEGIN\n  CREATE INDEX ON {{ SCHEMA }}.jobs (id);\nEND\n$$\nSET app.tenant = '{{TENANT}}';\nDELETE FROM {{SCHEMA}}.jobs WHERE id < {{ MIN_ID }};";
    const model = parse(text);
    assert.deepEqual([model.sqlErrors, model.skipped], [[], undefined]);
    assert.deepEqual(kinds(text), ['CreateStmt', 'DoStmt', 'IndexStmt', 'VariableSetStmt', 'DeleteStmt']);
    const jinja = parse("select * from {{ ref('jobs') }} where {% if x %} a {% endif %}");
    assert.match(jinja.skipped?.message ?? '', /Jinja/);
  });

  test('a dotted {{ settings.name }} placeholder is read as a bare one is: a name, a value, or an optional clause (a tablespace)', () => {
    const text = [
      'CREATE TABLE place_words (word_id bigint, place_id bigint) {{ storage.word_tables }};',
      'CREATE INDEX idx_place_words ON place_words USING btree (place_id) {{storage.word_index}};',
      'GRANT SELECT ON place_words TO "{{settings.web_role}}";',
      'DELETE FROM {{ storage.schema }}.place_words WHERE word_id < {{ limits.min_word }};',
    ].join('\n');
    assert.deepEqual([parseEvery(text).sqlErrors, parseEvery(text).skipped], [[], undefined]);
    assert.deepEqual(kinds(text), ['CreateStmt', 'IndexStmt', 'GrantStmt', 'DeleteStmt']);
    // A call or a filter is no placeholder: such a file is still a template's.
    assert.match(parse('CREATE TABLE t (id int) {{ storage.table_clause() }};').skipped?.message ?? '', /Jinja/);
  });

  test('a CREATE FUNCTION without ; ends after its body and options where the next line starts a statement (functions pasted one after another)', () => {
    const fn = (name: string, options: string) => `create or replace function ${name}() returns int\nlanguage plpgsql${options}\nas $fn$\nbegin\n  return 1;\nend\n$fn$`;
    const text = `create table marks (id int);\n\n${fn('first_mark', '')}\n\n${fn('second_mark', ' rows 1')}\n\ncreate or replace function third_mark() returns int as $$ select 3 $$\nlanguage sql stable\n\nalter table marks add column note text;\n`;
    const model = parse(text);
    assert.deepEqual(model.sqlErrors, []);
    // The SQL function's body is read as its own statement.
    assert.deepEqual(kinds(text), ['CreateStmt', 'CreateFunctionStmt', 'CreateFunctionStmt', 'CreateFunctionStmt', 'SelectStmt', 'AlterTableStmt']);
    // Options on the lines after the body stay the function's; `set search_path` is one of them, not a statement.
    const options = `${fn('fourth_mark', '')}\nsecurity definer\nset search_path = public;\nselect 1;`;
    assert.deepEqual([parse(options).sqlErrors, kinds(options)], [[], ['CreateFunctionStmt', 'SelectStmt']]);
  });

  test('a Go text/template action that prints a field ({{ .Schema }}, {{ index .Options "Namespace" }}) is a name, in double quotes and in bodies too; range and if are not read', () => {
    const ns = '{{ index .Options "Namespace" }}';
    const text = [
      `ALTER TABLE ${ns}.accounts ADD COLUMN IF NOT EXISTS verified_at timestamptz;`,
      `CREATE INDEX IF NOT EXISTS accounts_mail_idx ON "${ns}".accounts (lower(mail));`,
      'DO $$',
      'BEGIN',
      `  IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '${ns}' AND table_name = 'accounts' AND column_name = 'mail_new') THEN`,
      `    ALTER TABLE "${ns}"."accounts" RENAME COLUMN "mail" TO "mail_new";`,
      '  END IF;',
      'END $$;',
      `UPDATE {{ .Schema }}.accounts SET verified_at = now() WHERE verified_at IS NULL;`,
    ].join('\n');
    assert.deepEqual([parseEvery(text).sqlErrors, parseEvery(text).skipped], [[], undefined]);
    assert.deepEqual(kinds(text), ['AlterTableStmt', 'IndexStmt', 'DoStmt', 'SelectStmt', 'RenameStmt', 'UpdateStmt']);
    assert.match(parse(`{{ range .Tables }}\nCREATE TABLE ${ns}.{{ .Name }} (id int);\n{{ end }}`).skipped?.message ?? '', /template/);
  });

  test('a Go template function of a field ({{ quoteName .Params.table }}) is a name; with a control action the file is said to be a Go template, not Jinja', () => {
    const text = 'CREATE TABLE {{ quoteName .Params.table }} (id uuid NOT NULL, PRIMARY KEY (id));\nINSERT INTO {{- quoteName $.Params.table -}} (id) VALUES (gen_random_uuid());\n';
    assert.deepEqual([parseEvery(text).sqlErrors, parseEvery(text).skipped], [[], undefined]);
    assert.deepEqual(kinds(text), ['CreateStmt', 'InsertStmt']);
    // A control word is no function: `{{ if .X }}` is not read as a name, and the file is a Go template's.
    const controlled = `{{ if .Params.audit }}\n${text}{{ end }}\n`;
    assert.match(parse(controlled).skipped?.message ?? '', /it is a Go template, not PostgreSQL/);
    assert.match(parse('CREATE TABLE {{ quoteName .Params.table }} (id uuid NOT NULL,);\n').skipped?.message ?? '', /it is a Go template, not PostgreSQL \(\{\{ quoteName \.Params/);
  });

  test('a template\'s {where} that adds an optional clause reads as nothing when nothing else parses', () => {
    const model = parse('select id from jobs\nwhere queue = $1 and run_at < now()\n  {where}\norder by id for update skip locked limit $2;');
    assert.deepEqual(model.sqlErrors, []);
    assert.deepEqual(model.sites[0].analysis.statements[0].lockingReads.map((l) => l.skipLocked), [true]);
  });

  test("a Python str.format {schema} is a name in function bodies too, as at the top level; a body's JSON '{}' stays a string", () => {
    const text = "create table {schema}.jobs (id int, meta jsonb);\ncreate function {schema}.take() returns setof {schema}.jobs language plpgsql as $$\nbegin\n  return query update {schema}.jobs set meta = '{}' where id = (select id from {schema}.jobs for update skip locked limit 1) returning *;\nend;\n$$;";
    const model = parse(text);
    assert.deepEqual([model.sqlErrors, model.skipped], [[], undefined]);
    assert.deepEqual(kinds(text), ['CreateStmt', 'CreateFunctionStmt', 'UpdateStmt']);
  });

  test('a file that does not parse says what it was read as and how to leave it out', () => {
    const model = parse('-- migrate:up\ncreate tabel jobs (id int);\n', 'db/1_jobs.sql');
    assert.match(model.parseErrorHint ?? '', /^Read as a dbmate migration; if the tool that runs this file reads it differently, add the file to "ignores"/);
    assert.equal(parse('select 1;\nselec 2;\n', 'db:function f()').parseErrorHint, undefined, 'a database object is no file to ignore');
  });
});

describe('what the tools around a file put in it', () => {
  test("pg_dump's `-- Name: x; Type: TABLE; ...` comments are no query headers: the file's top-level SET search_path stays the script's", () => {
    const dump = '--\n-- Name: carts; Type: TABLE; Schema: shop; Owner: -\n--\nset search_path = shop, pg_catalog;\ncreate table carts (id int);\n';
    assert.equal(readScript(dump, 'x.sql').queries, undefined);
    assert.deepEqual(parse(dump).sites.map((s) => s.scope.kind), ['script', 'script']);
    assert.equal(readScript('-- name: cart_by_id(cart_id)^\nselect * from carts where id = :cart_id;', 'x.sql').queries, 'aiosql/yesql');
    assert.equal(readScript('-- name: ListCarts :many\nselect * from carts;', 'x.sql').queries, 'sqlc');
    assert.equal(readScript('-- name: drop-cart!\ndelete from carts where id = :id;', 'x.sql').queries, 'aiosql/yesql');
  });

  test('C preprocessor lines are blanked, in dollar-quoted bodies too (with their continuations); PL/pgSQL #variable_conflict stays', () => {
    const text = '#include "a/b.sql"\n#define N \\\n  2\nselect 1;\ndo $$\nbegin\n#if PG_VERSION_NUM >= 150000\n  perform 1;\n#endif\nend $$;\n'
      + 'create function f() returns int language plpgsql as $f$\n#variable_conflict use_column\nbegin return 1; end $f$;\n';
    const reading = readScript(text, 'x.sql');
    assert.equal(reading.sql.length, text.length);
    assert.ok(!/#(include|define|if|endif)/.test(reading.sql), reading.sql);
    assert.match(reading.sql, /#variable_conflict use_column/);
    assert.doesNotMatch(reading.sql, /^ *2$/m, 'the continued #define line is blanked');
    const model = parseEvery(text);
    assert.deepEqual([model.sqlErrors, model.fatal], [[], undefined]);
    assert.equal(readScript('select a\n  # b from t;', 'x.sql').sql, 'select a\n  # b from t;', "xor's # at a line start is SQL");
  });

  test("psql variables a runner passes: ARRAY[:a, :b] holds them, :'name' is a string where no parameter may stand", () => {
    const text = "select f(array[:port_a, :port_b]) from t where x = arr[:n];\ncreate server s foreign data wrapper postgres_fdw options (host 'h', port :'port_a');";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes.map((h) => text.slice(h.start, h.end)), [':port_a', ':port_b', ":'port_a'"]);
    assert.deepEqual([parseEvery(text).sqlErrors, parseEvery(text).fatal], [[], undefined]);
  });

  test('a variable alone on its line at a statement start runs what it holds: read as nothing; one inside a statement is a value', () => {
    const text = "select 'select 1' as cmd \\gset\n:cmd;\n\\set load '\\\\copy t from ' :'f'\n:load -- twice\n:load\nselect * from t where id =\n  :id;\n\\set known 'select 2;'\n:known\n";
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes.map((h) => text.slice(h.start, h.end)), [':id', ':known'], 'the :\'f\' of a \\set line is psql\'s, not SQL');
    const model = parseEvery(text);
    assert.deepEqual([model.sqlErrors, model.fatal], [[], undefined]);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['SelectStmt', 'SelectStmt', 'SelectStmt']);
  });

  test('a runner variable the file never \\set is also a string (AS :MODULE_PATHNAME), a statement prefix (:PREFIX SELECT) or a whole query; query files keep :name a value', () => {
    const text = "create function f() returns void as :MODULE_PATHNAME, 'f' language c;\n:PREFIX select 1;\ncreate table c as :QUERY;\nselect * from (:Q2) as q;\n";
    const model = parseEvery(text);
    assert.deepEqual([model.sqlErrors, model.fatal], [[], undefined]);
    assert.deepEqual(model.sites.map((s) => s.analysis.statements[0].kind), ['CreateFunctionStmt', 'SelectStmt']);
    // An aiosql query file's :name is the application's parameter: no other reading, its syntax error is reported.
    const queries = '-- name: broken\nselect * from t where id = :id id;\n';
    assert.equal(parseEvery(queries).sqlErrors.length + (parseEvery(queries).fatal ? 1 : 0) > 0, true);
  });

  test('\\set expands the variables in its arguments: one the runner passes makes the value unknown', () => {
    const reading = readScript('\\set known app\n\\set role :known _admin\n\\set other :RUNNER _admin\n', 'x.sql');
    assert.equal(reading.variables.get('role'), 'app_admin');
    assert.equal(reading.variables.has('other'), false);
  });

  test('only where ON_ERROR_STOP is off are failing statements meant to fail; `-- TEST1 --` titles of a psql script are no query names', () => {
    const text = "\\c db\n-- TEST1 --\nselect 1;\n-- TEST2 --\n\\set ON_ERROR_STOP 0\nselect from where;\n\\set ON_ERROR_STOP 1\nselect from where;\n";
    assert.equal(readScript(text, 'x.sql').queries, undefined);
    const model = parseEvery(text);
    assert.equal(model.sqlErrors.length, 1);
    assert.equal(text.slice(0, model.sqlErrors[0].span.start).split('\n').length, 8);
  });

  test('\\if ... \\else ... \\endif inside a statement: its first branch is read; at the top level both are', () => {
    const text = "select a,\n\\if :x\n  b\n\\else\n  c, d\n\\endif\nfrom t;\n\\if :y\nselect 1;\n\\else\nselect 2;\n\\endif\n";
    const reading = readScript(text, 'x.sql');
    assert.match(reading.sql, /select a,\s+b\s+from t;/);
    const model = parseEvery(text);
    assert.deepEqual(model.sqlErrors, []);
    assert.equal(model.sites.length, 3);
  });

  test('an extension script (ext--1.0.sql, its \\echo guard, @extschema@) is run with check_function_bodies off: a body that does not compile is not an error there', () => {
    const text = 'create function f() returns event_trigger language plpgsql as $$\nbegin\n  return g();\nend\n$$;\n';
    assert.equal(parseEvery(text, '/r/sql/plain.sql').sqlErrors.length, 1);
    for (const [file, head] of [['/r/ext--1.0--1.1.sql', ''], ['/r/sql/a.sql', '\\echo Use "CREATE EXTENSION ext" to load this file. \\quit\n'], ['/r/sql/b.sql', 'create table @extschema@.t (a int);\n']]) {
      assert.deepEqual(parseEvery(head + text, file).sqlErrors, [], file);
    }
  });

  test('a piece of an extension script (a sql/ folder beside the extension\'s control file) is run as that script: a body that does not compile is not an error', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    // An event trigger's RETURN with a value: PostgreSQL 17 rejects it at CREATE unless check_function_bodies is off.
    const text = 'CREATE FUNCTION audit.on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$\nBEGIN\n  RETURN audit.forward_ddl();\nEND$$;\n';
    const root = mkdtempSync(join(tmpdir(), 'pgq-ext-'));
    mkdirSync(join(root, 'sql'));
    writeFileSync(join(root, 'audit.control.in'), "default_version = '@VERSION@'\n");
    const plain = mkdtempSync(join(tmpdir(), 'pgq-noext-'));
    mkdirSync(join(plain, 'sql'));
    const errors = (dir: string) => parse(text, join(dir, 'sql', 'compat.sql')).sqlErrors.map((e) => e.message);
    assert.deepEqual(errors(root), []);
    // A cached reading holds while the control file that made it a piece of the extension is there.
    assert.deepEqual(parse(text, join(root, 'sql', 'compat.sql')).dependencies, [join(root, 'audit.control.in')]);
    // The same file where no control file says an extension build takes it: psql runs it as it is, and it fails.
    assert.match(errors(plain).join(), /RETURN cannot have a parameter in function returning void/);
    // A regression script of the extension (test/sql/) is psql's, not a piece of the extension.
    mkdirSync(join(root, 'test', 'sql'), { recursive: true });
    const { extensionControlOf } = await import('../../src/languages/sql/extension-source.ts');
    assert.equal(extensionControlOf(join(root, 'test', 'sql', 'compat.sql')), undefined);
    assert.notEqual(extensionControlOf(join(root, 'sql', 'updates', 'compat.sql')), undefined);
  });

  test('${name} with letters around it builds one name: ${t}_owner and idx_${t} are each one placeholder', () => {
    const text = 'create policy ${t}_owner on ${t} using (true);\ncreate index idx_${t} on ${t} (a);';
    const reading = readScript(text, 'x.sql');
    assert.deepEqual(reading.holes.map((h) => text.slice(h.start, h.end)), ['${t}_owner', '${t}', 'idx_${t}', '${t}']);
    assert.deepEqual([parseEvery(text).sqlErrors, parseEvery(text).fatal], [[], undefined]);
  });
});

describe('statements in a newer PostgreSQL\'s syntax', () => {
  test('are one note naming the construct and the version, not a parse error; the file\'s other statements are read', async () => {
    const { runRules } = await import('../../src/engine/run-rules.ts');
    const { readFileSync } = await import('node:fs');
    const file = new URL('../../fixtures/sql-files/newer-postgresql.sql', import.meta.url);
    const model = parse(readFileSync(file, 'utf8'), 'newer-postgresql.sql');
    assert.equal(model.fatal, undefined);
    assert.deepEqual(model.sqlErrors, []);
    assert.match(model.notRead!.message, /^Not read: ON CONFLICT \.\.\. DO SELECT \(line 5\) is PostgreSQL 19 syntax; pgq-audit parses PostgreSQL 18/);
    assert.ok(model.sites.some((s) => s.analysis.statements[0].settingWrites.length === 1));
    const findings = runRules(model, []);
    assert.deepEqual(findings.map((f) => [f.severity, f.fatal ?? false, f.messageId, f.line]), [[1, false, 'newer-postgresql', 5]]);
    // The same statement with a real error beside it: that error is still a parse error.
    const broken = parse("INSERT INTO tags (name) VALUES ('a') ON CONFLICT (name) DO SELECT RETURNING id;\nSELEC 1;\nSELECT 2;");
    assert.equal(broken.sqlErrors.length, 1);
    assert.ok(broken.notRead);
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

  test('name the line as ESLint counts it: a lone CR and U+2028 end lines too', () => {
    const sqlite = parse('-- one\r-- two\u2028-- three\r\nPRAGMA foreign_keys = ON;\ncreate table t (id integer primary key autoincrement);');
    assert.match(sqlite.skipped?.message ?? '', /PRAGMA foreign_keys at line 4\)/);
  });
});
