// Every way `pgq-audit db` can fail to read the catalog is one line on
// stderr that names the cause and the fix, exit code 2, and no password in
// it: a server that is not there, a refused password, a missing password, a
// database that does not exist, a role that may not read the catalog, an
// unknown --role, a bad URL or option, and node-postgres not installed.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { DatabaseError, loadPg, withReadOnlySession } from '../../src/db/index.ts';
import { runCli } from '../helpers/cli.ts';
import { runMain, startLintDatabase, type LintDatabase } from './support.ts';

let db: LintDatabase;
before(async () => {
  db = await startLintDatabase();
});
after(async () => {
  await db?.stop();
});

/**
 * Runs the command (in this process; the built CLI where the environment matters) and checks the
 * shape every failure has: exit 2, one line on stderr, nothing on stdout.
 */
async function failure(args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const run = env ? runCli(['db', ...args], { env }) : await runMain(['db', ...args]);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0], /^pgq-audit: /);
  return lines[0];
}

/** The same shape from the built CLI, where an uncaught error would print its stack. */
function cliFailure(args: string[]): string {
  const run = runCli(['db', ...args]);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  return lines[0];
}

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

test('a server that is not there: connection refused, with the host, the port and where to look', { timeout: 30_000 }, async () => {
  const port = await closedPort();
  const line = await failure([`postgres://pgq_db_lint:secret-pw@127.0.0.1:${port}/app`]);
  assert.match(line, new RegExp(`cannot reach the database at 127\\.0\\.0\\.1:${port}: connection refused\\. Check the host and port \\(in the URL, or PGHOST and PGPORT\\)`));
  assert.doesNotMatch(line, /secret-pw/);
});

test('a host that does not resolve', { timeout: 30_000 }, async () => {
  const line = await failure(['postgres://pgq_db_lint:lint@no-such-host.invalid:5432/app']);
  assert.match(line, /host 'no-such-host\.invalid' does not resolve/);
});

test('a password the server refuses: named as such, without the password', { timeout: 30_000 }, async () => {
  const line = await failure([db.urlAs('pgq_db_lint', 'wrong-password')]);
  assert.match(line, /the server refused the password of role 'pgq_db_lint' \(pgq_db_lint@127\.0\.0\.1:\d+\/pgq_test_\w+\): password authentication failed\. Check the password in the URL, PGPASSWORD or ~\/\.pgpass\./);
  assert.doesNotMatch(line, /wrong-password/);
});

test('no password at all, where the server asks for one', { timeout: 30_000 }, async () => {
  const url = new URL(db.urlAs('pgq_db_lint'));
  url.password = '';
  const line = await failure([url.toString()], { PGPASSWORD: '', PGPASSFILE: '/nonexistent' });
  assert.match(line, /asks role 'pgq_db_lint' .* for a password and none was given/);
});

test('a database that does not exist', { timeout: 30_000 }, async () => {
  const url = new URL(db.urlAs('pgq_db_lint'));
  url.pathname = '/no_such_database';
  assert.match(await failure([url.toString()]), /database 'no_such_database' does not exist on 127\.0\.0\.1:\d+\. Check the database name in the URL or PGDATABASE\./);
});

test('a non-superuser role that may not read the catalog: which table, and the grant that fixes it', { timeout: 60_000 }, async () => {
  await db.run('revoke select on pg_catalog.pg_proc from public');
  try {
    const line = await failure([db.urlAs('pgq_db_lint')]);
    assert.match(line, /role 'pgq_db_lint' cannot read the catalog \(pg_catalog\.pg_proc\): permission denied for table pg_proc\. .*GRANT SELECT ON pg_catalog\.pg_proc TO pgq_db_lint\./);
  } finally {
    await db.run('grant select on pg_catalog.pg_proc to public');
  }
  // And with the grant back, the same role reads it.
  assert.equal((await runMain(['db', db.urlAs('pgq_db_lint')])).code, 1);
});

test('a role that may not connect to the database', { timeout: 60_000 }, async () => {
  await db.run(`revoke connect on database ${db.database} from public`);
  try {
    assert.match(await failure([db.urlAs('pgq_db_reader')]), new RegExp(`role 'pgq_db_reader' may not connect to database '${db.database}': .*GRANT CONNECT ON DATABASE ${db.database} TO pgq_db_reader`));
  } finally {
    await db.run(`grant connect on database ${db.database} to public`);
  }
});

test('a statement timeout that fires: the statement timeout is named, not the idle-in-transaction timeout', { timeout: 120_000 }, async () => {
  // The small fixture catalog: its queries may each finish within 1 ms, but the session is never ended for idling between them.
  for (let i = 0; i < 3; i++) {
    const small = await runMain(['db', db.urlAs('pgq_db_lint'), '--statement-timeout', '1']);
    assert.doesNotMatch(small.stderr, /idle|terminat|closed/i);
    // PostgreSQL reports a timeout that fires as a statement ends as "due to user request": either way the timeout is named.
    if (small.code === 2) assert.match(small.stderr, /(took longer than the statement timeout|Either the statement timeout) \(1 ms, --statement-timeout\)/);
    else assert.equal(small.code, 1, small.stderr);
  }
  // Bodies big enough that reading them takes well over 1 ms.
  await db.run(`create schema bulky;
    do $$ begin
      for i in 1..300 loop
        execute format('create function bulky.f_%s() returns int language sql as %L', i, 'select 1 /* ' || repeat('x', 20000) || ' */');
      end loop;
    end $$;`);
  try {
    const line = await failure([db.urlAs('pgq_db_lint'), '--statement-timeout', '1']);
    assert.match(line, /took longer than the statement timeout \(1 ms, --statement-timeout\): canceling statement due to statement timeout\. Raise --statement-timeout/);
    assert.doesNotMatch(line, /idle/);
  } finally {
    await db.run('drop schema bulky cascade');
  }
});

test('a session the server ends between two catalog queries: the idle-in-transaction timeout is named as the cause', { timeout: 30_000 }, async () => {
  await assert.rejects(
    withReadOnlySession({ url: db.urlAs('pgq_db_lint'), statementTimeout: 5000, connectTimeout: 5000 }, async (session) => {
      // What a stalled client would meet, made short here: pgq-audit's own is at least a minute.
      await session.query('set local idle_in_transaction_session_timeout = 50');
      await new Promise((resolve) => setTimeout(resolve, 500));
      return session.query('select 1');
    }),
    (error: Error) =>
      error instanceof DatabaseError &&
      /^the server ended the session of pgq_db_lint@127\.0\.0\.1:\d+\/\w+ between two catalog queries: terminating connection due to idle-in-transaction timeout \(idle_in_transaction_session_timeout, /.test(error.message),
  );
});

test('a URL that does not parse: one line naming the URL (password masked) and how to write it', { timeout: 30_000 }, () => {
  const line = cliFailure(['postgres://pgq_db_lint:secret-pw@[']);
  assert.match(line, /^pgq-audit: the connection URL postgres:\/\/pgq_db_lint:\*\*\*\*@\[ is not a valid URL\. Write it as postgres:\/\/user:password@host:port\/database/);
  assert.doesNotMatch(line, /secret-pw/);
  const inQuery = cliFailure(['postgres://pgq_db_lint@[?password=secret-pw&sslmode=require']);
  assert.match(inQuery, /the connection URL postgres:\/\/pgq_db_lint@\[\?password=\*\*\*\*&sslmode=require is not a valid URL/);
  assert.doesNotMatch(inQuery, /secret-pw/);
  assert.match(cliFailure(['notaurl']), /^pgq-audit: db: 'notaurl' is not a postgres:\/\/ or postgresql:\/\/ URL/);
});

test('an sslcert or sslkey file that is not there: one line naming the parameter and the file', { timeout: 30_000 }, () => {
  const url = db.urlAs('pgq_db_lint');
  const cert = cliFailure([`${url}?sslmode=require&sslcert=/nonexistent/client.crt`]);
  assert.match(cert, /^pgq-audit: cannot read the sslcert file '\/nonexistent\/client\.crt' named in the connection URL postgres:\/\/pgq_db_lint:\*\*\*\*@127\.0\.0\.1:\d+\/\w+\?sslmode=require&sslcert=\/nonexistent\/client\.crt: no such file\. Check the path of sslcert/);
  assert.doesNotMatch(cert, /:lint@/);
  assert.match(cliFailure([`${url}?sslkey=missing.key`]), /cannot read the sslkey file 'missing\.key' named in .*: no such file\. Check the path of sslkey \(relative paths are read from the current folder\)/);
});

test('an unknown --role', { timeout: 30_000 }, async () => {
  assert.match(await failure([db.urlAs('pgq_db_lint'), '--role', 'app_wroker']), /--role app_wroker: there is no such role in database pgq_test_\w+\./);
});

test('usage errors: not a URL, two URLs, a bad timeout, a bad format', { timeout: 30_000 }, async () => {
  assert.match(await failure(['localhost:5432']), /'localhost:5432' is not a postgres:\/\/ or postgresql:\/\/ URL/);
  assert.match(await failure(['postgres://a/b', 'postgres://c/d']), /db takes one connection URL, got 2 arguments/);
  assert.match(await failure(['postgres://a/b', '--statement-timeout', 'soon']), /--statement-timeout soon: expected a whole number of milliseconds/);
  assert.match(await failure(['postgres://a/b', '--format', 'xml']), /--format xml: valid formats are stylish, json, sarif, github/);
  assert.match(await failure(['postgres://a/b', '--schemas', 'public']), /Unknown option '--schemas'\. Valid options for db: .*--schema/);
});

test('node-postgres not installed: the package to install, and how', { timeout: 10_000 }, async () => {
  const missing = () => Promise.reject(Object.assign(new Error("Cannot find package 'pg'"), { code: 'ERR_MODULE_NOT_FOUND' }));
  await assert.rejects(loadPg(missing), (error: Error) => error instanceof DatabaseError && /needs the 'pg' package .* npm install --save-dev pg$/.test(error.message));
  // Any other failure to load it is not hidden behind that message.
  await assert.rejects(loadPg(() => Promise.reject(new SyntaxError('broken install'))), /broken install/);
  assert.equal(typeof (await loadPg()).Client, 'function');
});

test('help: pgq-audit --help lists db, db --help its options', { timeout: 30_000 }, async () => {
  const top = runCli(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /^ {2}db \[url\] +Lint a live database's functions, policies and role defaults \(read-only\)$/m);
  const help = runCli(['db', '--help']);
  assert.equal(help.code, 0);
  for (const option of ['--project', '--role', '--schema', '--exclude-schema', '--statement-timeout', '--connect-timeout', '--format']) assert.ok(help.stdout.includes(option), option);
  assert.match(help.stdout, /READ ONLY transaction/);
});
