// `pgq-audit db` end to end: the built CLI against fixtures/db/schema.sql on
// PostgreSQL 17.10, as a non-superuser lint role. Every bad object is
// reported with the rule and message it should get, every good one is read
// and silent, in every output format, and nothing is written.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { DatabaseError, lintDatabase, withReadOnlySession } from '../../src/db/index.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { runMain, startLintDatabase, type LintDatabase } from './support.ts';

let db: LintDatabase;
let lintUrl: string;
before(async () => {
  db = await startLintDatabase();
  lintUrl = db.urlAs('pgq_db_lint');
});
after(async () => {
  await db?.stop();
});

interface JsonResult {
  filePath: string;
  messages: { ruleId: string | null; messageId?: string; severity: number; line: number; column: number; message: string }[];
  errorCount: number;
}

/** The command in this process (most tests), or the built CLI (`built`: a few end-to-end runs, and the PG* variables). */
const json = async (args: string[], options: { built?: boolean; env?: NodeJS.ProcessEnv } = {}) => {
  const run = options.built || options.env ? runCli(['db', ...args, '--format', 'json'], { env: options.env }) : await runMain(['db', ...args, '--format', 'json']);
  assert.ok(run.code === 0 || run.code === 1, `exit ${run.code}: ${run.stderr}`);
  return { code: run.code, results: JSON.parse(run.stdout) as JsonResult[], stderr: run.stderr };
};

const findings = (results: JsonResult[]) => results.flatMap((r) => r.messages.map((m) => `${r.filePath.replace(/^db:/, '')} ${m.ruleId} ${m.messageId}`)).sort();

/** What the database of fixtures/db/schema.sql gets, with --role pgq_db_app. */
const expected = () =>
  [
    `database ${db.database} pgq/no-tenant-setting-default databaseDefault`,
    'function audit_tools.enter_tenant(integer) pgq/no-session-tenant-setting routine',
    'function public.current_tenant() pgq/require-nullif-on-setting-cast castWithoutNullif',
    'function public.enter_tenant(integer) pgq/no-session-tenant-setting routine',
    'function public.enter_tenant_sql(integer) pgq/no-session-tenant-setting routine',
    // One finding per cast: no missing_ok and no nullif on the same cast is one message naming both.
    'policy strict_tenant on public.notes pgq/require-nullif-on-setting-cast policyCastWithoutNullif',
    'policy tenant_isolation on public.invoices pgq/require-nullif-on-setting-cast castWithoutNullif',
    'policy tenant_isolation on public.work_items pgq/no-tenant-policy-on-queue tenantPolicyOnQueueAcross',
    'procedure public.reset_session() pgq/no-discard-all-with-prepared-statements inRoutine',
    'role pgq_db_app pgq/no-tenant-setting-default roleDefault',
    'table public.drafts pgq/require-forced-row-security notEnabled',
    'table public.ledger pgq/require-forced-row-security ownerNotForced',
    'table public.orders pgq/require-forced-row-security ownerNotForced',
    'table public.webhooks pgq/require-forced-row-security notEnabled',
  ].sort();

const GOOD = [
  'function public.enter_tenant_local(integer)',
  'function public.enter_tenant_for_migrations(integer)',
  'function public.current_tenant_safe()',
  'function public.claim_work_item()',
  'policy tenant_isolation on public.documents',
  'policy tenant_isolation on public.accounts',
  'policy own_rows on public.audit_log',
  'table public.accounts',
  'table public.audit_log',
  'table public.invoices',
  'role pgq_db_tenant_42',
  'role pgq_db_reader',
];

describe('the fixture schema', () => {
  test('every bad object is reported with its rule, every good one is read and silent', { timeout: 60_000 }, async () => {
    const { code, results } = await json([lintUrl, '--role', 'pgq_db_app'], { built: true });
    assert.equal(code, 1);
    assert.deepEqual(findings(results), expected());
    const byPath = new Map(results.map((r) => [r.filePath, r]));
    for (const good of GOOD) assert.deepEqual(byPath.get(`db:${good}`)?.messages, [], `${good} is read and has no finding`);
    assert.ok(!byPath.has('db:function public.ext_enter_tenant(integer)'), 'a member of an extension is left out');
    assert.ok(![...byPath.keys()].some((p) => /pg_catalog|information_schema/.test(p)), 'system schemas are left out');
  });

  test('findings point into the object text: the set_config of public.enter_tenant, as pg_get_functiondef prints it', { timeout: 60_000 }, async () => {
    const { results } = await json([lintUrl]);
    const [finding] = results.find((r) => r.filePath === 'db:function public.enter_tenant(integer)')!.messages;
    assert.equal(finding.ruleId, 'pgq/no-session-tenant-setting');
    const [{ definition }] = await withReadOnlySession({ url: lintUrl, statementTimeout: 5000, connectTimeout: 5000 }, (session) =>
      session.query<{ definition: string }>("select pg_get_functiondef('public.enter_tenant(integer)'::regprocedure) as definition"),
    );
    assert.ok(definition.split('\n')[finding.line - 1].slice(finding.column - 1).startsWith("set_config('app.tenant'"), definition);
    const stylish = runCli(['db', lintUrl]);
    assert.match(stylish.stdout, /^function public\.enter_tenant\(integer\)$/m, 'stylish names the object as the heading');
    assert.match(stylish.stdout, new RegExp(`^  ${finding.line}:${finding.column} +error +function public\\.enter_tenant writes 'app\\.tenant' at session level`, 'm'));
  });

  test('without --role, no owner or BYPASSRLS findings; the rest is the same', { timeout: 60_000 }, async () => {
    const { results } = await json([lintUrl]);
    assert.deepEqual(
      findings(results),
      expected().filter((f) => !f.includes('ownerNotForced')),
    );
  });

  test('--project reads the repository: its claim makes public.deliveries a queue; its ENABLE ROW LEVEL SECURITY does not outvote the catalog', { timeout: 60_000 }, async () => {
    const { results } = await json([lintUrl, '--role', 'pgq_db_app', '--project', 'fixtures/db/project']);
    const added = findings(results).filter((f) => !expected().includes(f));
    assert.deepEqual(added, ['policy tenant_isolation on public.deliveries pgq/no-tenant-policy-on-queue tenantPolicyOnQueueAcross']);
    const deliveries = results.find((r) => r.filePath === 'db:policy tenant_isolation on public.deliveries')!;
    assert.match(deliveries.messages[0].message, /claimed at fixtures\/db\/project\/worker\/claim\.sql:4/);
    // public.webhooks: claimed too, but row level security is off in the database: the policy does nothing.
    assert.deepEqual(results.find((r) => r.filePath === 'db:policy tenant_isolation on public.webhooks')!.messages, []);
    assert.ok(!results.some((r) => !r.filePath.startsWith('db:')), "the repository's own findings are scan's to report");
  });

  test('--schema and --exclude-schema choose the schemas', { timeout: 60_000 }, async () => {
    const excluded = (await json([lintUrl, '--exclude-schema', 'audit_*'])).results;
    assert.ok(!excluded.some((r) => r.filePath.includes('audit_tools.')));
    assert.ok(excluded.some((r) => r.filePath === 'db:function public.enter_tenant(integer)'));
    const only = (await json([lintUrl, '--schema', 'audit_tools'])).results.filter((r) => r.filePath.startsWith('db:function') || r.filePath.startsWith('db:policy'));
    assert.deepEqual(only.map((r) => r.filePath), ['db:function audit_tools.enter_tenant(integer)']);
  });

  test('--role of a BYPASSRLS role, and of a superuser', { timeout: 60_000 }, async () => {
    const bypass = (await json([lintUrl, '--role', 'pgq_db_bypass'])).results;
    const role = bypass.find((r) => r.filePath === 'db:role pgq_db_bypass')!;
    assert.deepEqual(role.messages.map((m) => m.messageId), ['roleBypassesRls']);
    assert.match(role.messages[0].message, /^pgq_db_bypass is marked BYPASSRLS: .*public\.accounts, public\.deliveries, public\.documents and \d+ more/);
    assert.ok(!findings(bypass).some((f) => f.includes('ownerNotForced')), 'owning a table adds nothing to bypassing every policy');
    const admin = new URL(db.ownerUrl).username; // the superuser the test database belongs to
    const superuser = (await json([lintUrl, '--role', admin])).results.find((r) => r.filePath === `db:role ${admin}`)!;
    assert.match(superuser.messages[0].message, new RegExp(`^${admin} is a superuser: no row level security policy applies to it`));
  });

  test('the PG* environment variables instead of a URL', { timeout: 60_000 }, async () => {
    const url = new URL(lintUrl);
    const env = { PGHOST: url.hostname, PGPORT: url.port, PGUSER: 'pgq_db_lint', PGPASSWORD: 'lint', PGDATABASE: db.database };
    assert.deepEqual(findings((await json(['--role', 'pgq_db_app'], { env })).results), expected());
  });

  test('severities and exit codes as scan: --rule, --quiet, --max-warnings', { timeout: 60_000 }, async () => {
    const off = (await json([lintUrl, '--rule', 'no-session-tenant-setting:off'])).results;
    assert.ok(!findings(off).some((f) => f.includes('no-session-tenant-setting')));
    const allWarn = ['no-session-tenant-setting', 'require-nullif-on-setting-cast', 'no-tenant-policy-on-queue', 'no-discard-all-with-prepared-statements', 'no-tenant-setting-default', 'require-forced-row-security'].flatMap((id) => ['--rule', `${id}:warn`]);
    const warned = await runMain(['db', lintUrl, ...allWarn, '--format', 'json']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.equal((await runMain(['db', lintUrl, ...allWarn, '--max-warnings', '0'])).code, 1);
    const quiet = await runMain(['db', lintUrl, ...allWarn, '--quiet']);
    assert.equal(quiet.code, 0);
    assert.equal(quiet.stdout, '');
  });
});

describe('many routines', () => {
  test('over 200 routines go to worker threads and give what the in-process analysis gives', { timeout: 180_000 }, async () => {
    await db.run(`create schema many;
      do $$ begin
        for i in 1..260 loop
          execute format('create function many.f_%s(t int) returns void language plpgsql as %L', i,
            format('begin perform set_config(%L, t::text, %s); end', 'app.tenant', case when i % 100 = 7 then 'false' else 'true' end));
        end loop;
      end $$;`);
    const onThreads = await lintDatabase({ url: lintUrl, schemas: ['many'], concurrency: 2 });
    const here = await lintDatabase({ url: lintUrl, schemas: ['many'], concurrency: 'off' });
    assert.equal(onThreads.stats.threads, 2);
    assert.equal(here.stats.threads, 0);
    assert.equal(onThreads.stats.objects.functions, 260);
    const bad = onThreads.results.filter((r) => r.filePath.startsWith('db:function') && r.messages.length > 0);
    assert.deepEqual(bad.map((r) => `${r.filePath} ${r.messages.map((m) => m.ruleId).join()}`), [
      'db:function many.f_107(integer) no-session-tenant-setting',
      'db:function many.f_207(integer) no-session-tenant-setting',
      'db:function many.f_7(integer) no-session-tenant-setting',
    ]);
    assert.deepEqual(onThreads.results, here.results);
    await db.run('drop schema many cascade');
  });

  test('in-process, a routine over the time budget is skipped and the others are analysed', { timeout: 180_000 }, async () => {
    await db.run(`create schema slow;
      create function slow.huge() returns void language plpgsql as $body$ begin ${"perform count(*) from pg_class where relname = 'x'; ".repeat(60_000)} end $body$;
      create function slow.leaks(t int) returns void language plpgsql as $body$ begin perform set_config('app.tenant', t::text, false); end $body$;`);
    try {
      const { results } = await lintDatabase({ url: lintUrl, schemas: ['slow'], concurrency: 'off', timeBudget: 300 });
      const byObject = Object.fromEntries(results.filter((r) => r.filePath.startsWith('db:function')).map((r) => [r.filePath, r.messages.map((m) => m.messageId ?? m.ruleId)]));
      assert.deepEqual(byObject, { 'db:function slow.huge()': ['skipped'], 'db:function slow.leaks(integer)': ['routine'] }, JSON.stringify(byObject));
    } finally {
      await db.run('drop schema slow cascade');
    }
  });
});

describe('routine bodies that do not parse', () => {
  test('an SQL-language body gets one parsing error at the token, as a PL/pgSQL body does', { timeout: 60_000 }, async () => {
    // check_function_bodies = off (what pg_dump's output sets) lets such bodies into the catalog.
    await db.run(`set check_function_bodies = off;
      create schema broken;
      create function broken.sql_body(t int) returns int language sql as $body$ selec t $body$;
      create function broken.plpgsql_body() returns void language plpgsql as $body$ begin selec 1; end $body$;`);
    try {
      const { code, results } = await json([lintUrl, '--schema', 'broken']);
      assert.equal(code, 1);
      const byObject = Object.fromEntries(results.map((r) => [r.filePath, r.messages.map((m) => ({ ruleId: m.ruleId, severity: m.severity, line: m.line, message: m.message }))]));
      assert.deepEqual(byObject['db:function broken.sql_body(integer)'], [
        // pg_get_functiondef prints the body on line 4: `AS $function$ selec t $function$`.
        { ruleId: null, severity: 2, line: 4, message: 'Parsing error: SQL body of broken.sql_body: syntax error at or near "selec"' },
      ]);
      assert.deepEqual(
        byObject['db:function broken.plpgsql_body()'].map((m) => [m.ruleId, m.severity, m.message]),
        [[null, 2, 'Parsing error: PL/pgSQL body of broken.plpgsql_body: syntax error at or near "selec"']],
      );
    } finally {
      await db.run('drop schema broken cascade');
    }
  });
});

describe('functions the server compiled', () => {
  test('a variable of an enum type in a multiple-item INTO: no parse error, its statements are read', { timeout: 120_000 }, async () => {
    await db.run(`create schema typed;
      create type typed.job_status as enum ('todo', 'doing', 'failed');
      create table typed.jobs (id bigint primary key, status typed.job_status, abort_requested boolean);
      create function typed.retry(p_id bigint, t text) returns void language plpgsql as $body$
      declare
        v_status typed.job_status;
        v_abort boolean;
      begin
        select status, abort_requested from typed.jobs where id = p_id for update into v_status, v_abort;
        perform set_config('app.tenant', t, false);
      end $body$;`);
    try {
      const { results } = await lintDatabase({ url: lintUrl, schemas: ['typed'], concurrency: 'off' });
      const retry = results.find((r) => r.filePath === 'db:function typed.retry(bigint, text)');
      assert.ok(retry, results.map((r) => r.filePath).join(', '));
      assert.deepEqual(retry.messages.filter((m) => m.ruleId === null), [], 'no parse error on what PostgreSQL compiled');
      assert.ok(retry.messages.some((m) => m.ruleId === 'no-session-tenant-setting'), JSON.stringify(retry.messages));
    } finally {
      await db.run('drop schema typed cascade');
    }
  });

  test('a function returning an array of a composite type (and an OUT one): no parse error, its statements are read', { timeout: 120_000 }, async () => {
    await db.run(`create schema arrays;
      create type arrays.step as (name text, done boolean);
      create table arrays.steps (job_id bigint, name text, done boolean);
      create function arrays.open_steps(p_job bigint, t text) returns arrays.step[] language plpgsql as $body$
      begin
        perform set_config('app.tenant', t, false);
        return array(select row(s.name, s.done)::arrays.step from arrays.steps s where s.job_id = p_job);
      end $body$;
      create function arrays.split(p_job bigint, out pending arrays.step[], out total bigint) language plpgsql as $body$
      begin
        select array_agg(row(s.name, s.done)::arrays.step), count(*) into pending, total from arrays.steps s where s.job_id = p_job;
      end $body$;`);
    try {
      const { results } = await lintDatabase({ url: lintUrl, schemas: ['arrays'], concurrency: 'off' });
      const open = results.find((r) => r.filePath.startsWith('db:function arrays.open_steps('));
      const split = results.find((r) => r.filePath.startsWith('db:function arrays.split('));
      assert.ok(open && split, results.map((r) => r.filePath).join(', '));
      assert.deepEqual([...open.messages, ...split.messages].filter((m) => m.ruleId === null), [], 'no parse error on what PostgreSQL compiled');
      assert.ok(open.messages.some((m) => m.ruleId === 'no-session-tenant-setting'), JSON.stringify(open.messages));
    } finally {
      await db.run('drop schema arrays cascade');
    }
  });
});

describe('output formats', () => {
  test('json: ESLint\'s shape, with a db: pseudo-path per object', { timeout: 60_000 }, async () => {
    const { results } = await json([lintUrl]);
    for (const result of results) {
      assert.match(result.filePath, /^db:(function|procedure|policy|table|role|database) /);
      assert.deepEqual(Object.keys(result), ['filePath', 'messages', 'errorCount', 'warningCount', 'fatalErrorCount', 'fixableErrorCount', 'fixableWarningCount']);
    }
  });

  test('sarif: valid SARIF 2.1.0, each result with a logical location naming the object', { timeout: 60_000 }, async () => {
    const schema = JSON.parse(readFileSync(join(repoRoot, 'node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'));
    const ajv = new ajvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    ajvFormats.default(ajv);
    const validate = ajv.compile(schema);
    const run = await runMain(['db', lintUrl, '--role', 'pgq_db_app', '--format', 'sarif']);
    assert.equal(run.code, 1, run.stderr);
    const log = JSON.parse(run.stdout) as { runs: { results: any[] }[] };
    assert.ok(validate(log), JSON.stringify(validate.errors, null, 2));
    const results = log.runs[0].results;
    assert.equal(results.length, expected().length);
    const enterTenant = results.find((r: any) => r.locations[0].logicalLocations[0].fullyQualifiedName === 'public.enter_tenant(integer)');
    assert.deepEqual(enterTenant.locations[0].logicalLocations[0], {
      name: 'enter_tenant(integer)',
      fullyQualifiedName: 'public.enter_tenant(integer)',
      kind: 'function',
      properties: { databaseObjectKind: 'function', display: 'function public.enter_tenant(integer)' },
    });
    // GitHub code scanning needs a repository-relative physical location: a stand-in path, never a db: URI.
    assert.deepEqual(enterTenant.locations[0].physicalLocation.artifactLocation, { uri: 'pgq-audit-db/function/public.enter_tenant(integer)', uriBaseId: '%SRCROOT%' });
    const policy = results.find((r: any) => r.locations[0].logicalLocations[0].fullyQualifiedName === 'public.notes.strict_tenant');
    assert.equal(policy.locations[0].logicalLocations[0].kind, 'resource');
    for (const result of results) assert.match(Object.values(result.partialFingerprints)[0] as string, /^[0-9a-f]{16}:\d+$/);
  });

  test('github: annotations on the run (no file), naming the object and the line', { timeout: 60_000 }, () => {
    const run = runCli(['db', lintUrl, '--format', 'github']);
    assert.equal(run.code, 1);
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines.length, expected().length - 2, 'the owner findings need --role');
    for (const line of lines) assert.match(line, /^::error title=pgq\/[\w-]+::(function|procedure|policy|table|role|database) .+, line \d+: /);
    assert.ok(lines.some((l) => l.startsWith('::error title=pgq/no-session-tenant-setting::function public.enter_tenant(integer), line 6: ')));
  });
});

describe('suggested fixes', () => {
  test("the removal of a database default a migration set through format('%I', current_database()) pastes and removes it", { timeout: 60_000 }, async () => {
    const scanned = runCli(['scan', 'fixtures/db/schema.sql', '--format', 'json']);
    const messages = (JSON.parse(scanned.stdout) as JsonResult[]).flatMap((r) => r.messages).filter((m) => m.messageId === 'databaseDefault');
    assert.equal(messages.length, 1, scanned.stdout);
    const fix = /Remove it \((.*)\) and set/.exec(messages[0].message)?.[1];
    assert.equal(fix, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I RESET app.current_tenant', current_database()); END $$");
    const defaults = async () =>
      withReadOnlySession({ url: db.ownerUrl, statementTimeout: 5000, connectTimeout: 5000 }, (session) =>
        session.query<{ config: string[] }>('select s.setconfig as config from pg_catalog.pg_db_role_setting s join pg_catalog.pg_database d on d.oid = s.setdatabase where s.setrole = 0 and d.datname = pg_catalog.current_database()'),
      );
    assert.ok((await defaults())[0].config.includes('app.current_tenant=7'));
    await db.run(fix!);
    try {
      assert.ok(!(await defaults())[0].config.some((c) => c.startsWith('app.current_tenant=')), 'the pasted statement removed the default');
      // And pgq-audit db names the database itself in the one it suggests.
      const { results } = await json([lintUrl]);
      assert.ok(!results.some((r) => r.messages.some((m) => m.messageId === 'databaseDefault')));
    } finally {
      await db.run(`alter database ${db.database} set app.current_tenant = '7'`);
    }
    const database = (await json([lintUrl])).results.find((r) => r.filePath === `db:database ${db.database}`)!;
    assert.match(database.messages[0].message, new RegExp(`Remove it \\(ALTER DATABASE ${db.database} RESET app\\.current_tenant\\)`));
  });
});

describe('read-only', () => {
  test('one READ ONLY, REPEATABLE READ transaction with the statement timeout and search_path pg_catalog; a write is refused', { timeout: 60_000 }, async () => {
    const seen = await withReadOnlySession({ url: lintUrl, statementTimeout: 1234, connectTimeout: 5000 }, async (session) => {
      const [row] = await session.query<{ ro: string; iso: string; timeout: string; path: string; app: string }>(
        `select pg_catalog.current_setting('transaction_read_only') as ro, pg_catalog.current_setting('transaction_isolation') as iso,
                pg_catalog.current_setting('statement_timeout') as timeout,
                pg_catalog.current_setting('search_path') as path, pg_catalog.current_setting('application_name') as app`,
      );
      return row;
    });
    assert.deepEqual(seen, { ro: 'on', iso: 'repeatable read', timeout: '1234ms', path: 'pg_catalog, pg_temp', app: 'pgq-audit' });
    await db.run('grant insert on public.documents to pgq_db_lint; grant usage on sequence public.documents_id_seq to pgq_db_lint');
    await assert.rejects(
      withReadOnlySession({ url: lintUrl, statementTimeout: 5000, connectTimeout: 5000 }, (session) => session.query("insert into public.documents (tenant_id, title) values (1, 'x')")),
      (error: Error) => error instanceof DatabaseError && /refused a write in pgq-audit's read-only transaction: cannot execute INSERT in a read-only transaction/.test(error.message),
    );
  });

  test('a lint run writes nothing: the catalog and the role defaults are as they were', { timeout: 60_000 }, async () => {
    const snapshot = async () =>
      withReadOnlySession({ url: db.ownerUrl, statementTimeout: 5000, connectTimeout: 5000 }, (session) =>
        session.query(
          `select (select count(*) from pg_proc) as procs, (select count(*) from pg_policy) as policies,
                  (select array_agg(c order by c) from pg_db_role_setting, unnest(setconfig) c) as settings,
                  (select sum(n_tup_ins + n_tup_upd + n_tup_del) from pg_stat_user_tables) as writes`,
        ),
      );
    const before = await snapshot();
    assert.equal(runCli(['db', lintUrl, '--role', 'pgq_db_app', '--project', 'fixtures/db/project']).code, 1);
    const afterRun = await snapshot();
    assert.deepEqual(afterRun.map(({ writes, ...rest }) => rest), before.map(({ writes, ...rest }) => rest));
    assert.equal(afterRun[0].writes, before[0].writes, 'no row of any table was inserted, updated or deleted');
  });
});
