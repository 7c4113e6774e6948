// The Python front end's model of SQLAlchemy, asyncpg and Django code, of
// psycopg.sql composition and bound values, and of names imported from the
// project's own modules: scopes, connection configs (reuse, driverReset,
// prepared statements, callbacks), params, and the SQL it writes for ORM code.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { SqlSite } from '../../src/model/index.ts';
import { clearDjangoCache } from '../../src/languages/python/drivers/django/settings.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parseLines as parse, siteWith } from './model-helpers.ts';

before(async () => {
  await loadSqlParser();
});



const writesOf = (site: SqlSite) => site.analysis.statements.flatMap((s) => s.settingWrites);

/** Writes files under a new temp folder; returns its path. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-project-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  clearDjangoCache();
  return root;
}

describe('SQLAlchemy', () => {
  const header = [
    'from sqlalchemy import create_engine, text, event',
    'from sqlalchemy.orm import sessionmaker, Session',
    'from sqlalchemy.pool import NullPool',
    'engine = create_engine("postgresql+psycopg2://app@db/app")',
    'auto = create_engine("postgresql://app@db/app", isolation_level="AUTOCOMMIT")',
    'nulls = create_engine("postgresql+asyncpg://app@db/app", poolclass=NullPool)',
    'SessionLocal = sessionmaker(bind=engine)',
  ];

  test('engines: autocommit from isolation_level, reuse from poolclass, the rollback on return, prepared statements from the URL', () => {
    const model = parse(header);
    const [engine, auto, nulls] = model.connections;
    assert.deepEqual([engine.driver, engine.kind, engine.autocommit, engine.reuse, engine.preparedStatements], ['sqlalchemy', 'pool', false, undefined, 'no']);
    assert.deepEqual(engine.driverReset?.statements, ['ROLLBACK']);
    assert.equal(auto.autocommit, true);
    assert.equal(nulls.reuse, 'no-reuse');
    assert.equal(nulls.driverReset, undefined, 'NullPool closes the connection: there is nothing to reset');
    assert.equal(nulls.preparedStatements, 'yes', 'the asyncpg dialect caches prepared statements');
  });

  test('engine.begin() commits; engine.connect() without commit() never does; a Session commits where it says so', () => {
    const model = parse([
      ...header,
      'def begin_job(t):',
      '    with engine.begin() as conn:',
      '        conn.execute(text("select set_config(\'app.tenant\', :t, false)"), {"t": t})',
      'def connect_job(t):',
      '    with engine.connect() as conn:',
      '        conn.execute(text("SET app.tenant = \'1\'"))',
      'def commit_job(t):',
      '    with engine.connect() as conn:',
      '        conn.execute(text("SET app.tenant = \'2\'"))',
      '        conn.commit()',
      'def session_job(t):',
      '    with SessionLocal() as session:',
      '        session.execute(text("SET app.tenant = \'3\'"))',
      '        session.commit()',
      'def session_uncommitted(t):',
      '    with Session(engine) as session:',
      '        session.execute(text("SET app.tenant = \'4\'"))',
      'def escaped(t):',
      '    with engine.connect() as conn:',
      '        conn.execute(text("SET app.tenant = \'5\'"))',
      '        helper_elsewhere(conn)',
    ]);
    const begin = siteWith(model, "set_config('app.tenant', :t");
    assert.equal(begin.scope.kind, 'transaction');
    assert.ok(begin.scope.kind === 'transaction' && /engine\.begin/.test(begin.scope.form) && !begin.scope.neverCommits);
    assert.deepEqual(begin.params, [{ kind: 'caller-parameter', name: 't' }]);
    assert.equal(begin.connection.kind, 'pooled-client');
    const never = siteWith(model, "'1'");
    assert.ok(never.scope.kind === 'transaction' && never.scope.neverCommits === true, 'rolled back when the connection goes back to the pool');
    for (const committed of ["'2'", "'3'"]) {
      const site = siteWith(model, committed);
      assert.ok(site.scope.kind === 'transaction' && !site.scope.neverCommits, committed);
    }
    const uncommitted = siteWith(model, "'4'");
    assert.ok(uncommitted.scope.kind === 'transaction' && uncommitted.scope.neverCommits === true);
    const escapedSite = siteWith(model, "'5'");
    assert.ok(escapedSite.scope.kind === 'transaction' && !escapedSite.scope.neverCommits, 'a function we cannot see may commit it');
  });

  test('AUTOCOMMIT engines and execution_options run each statement alone; session.begin() is a transaction', () => {
    const model = parse([
      ...header,
      'def a(t):',
      '    with auto.connect() as conn:',
      '        conn.execute(text("SET LOCAL app.tenant = \'1\'"))',
      'def b(t):',
      '    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:',
      '        conn.execute(text("SET LOCAL app.tenant = \'2\'"))',
      'def c(t):',
      '    with Session(engine) as session, session.begin():',
      '        session.execute(text("SET LOCAL app.tenant = \'3\'"))',
      'def d(t):',
      '    with SessionLocal.begin() as session:',
      '        session.execute(text("SET LOCAL app.tenant = \'4\'"))',
    ]);
    assert.equal(siteWith(model, "'1'").scope.kind, 'autocommit');
    assert.equal(siteWith(model, "'2'").scope.kind, 'autocommit');
    const c = siteWith(model, "'3'").scope;
    assert.ok(c.kind === 'transaction' && /session\.begin/.test(c.form));
    const d = siteWith(model, "'4'").scope;
    assert.ok(d.kind === 'transaction' && /SessionLocal\.begin/.test(d.form));
  });

  test('event listeners are pool callbacks: connect configures, checkout and after_begin run at every use, checkin resets', () => {
    const model = parse([
      ...header,
      '@event.listens_for(engine, "connect")',
      'def on_connect(dbapi_connection, record):',
      '    dbapi_connection.cursor().execute("SET search_path TO app")',
      '@event.listens_for(engine, "checkout")',
      'def on_checkout(dbapi_connection, record, proxy):',
      '    dbapi_connection.cursor().execute("SET ROLE app_user")',
      'def on_checkin(dbapi_connection, record):',
      '    dbapi_connection.cursor().execute("RESET ALL")',
      'event.listen(engine, "checkin", on_checkin)',
      '@event.listens_for(SessionLocal, "after_begin")',
      'def after_begin(session, transaction, connection):',
      '    connection.execute(text("SET LOCAL app.tenant = \'1\'"))',
    ]);
    const engine = model.connections[0];
    assert.deepEqual(
      engine.callbacks.map((c) => [c.role, c.name, c.resolved]),
      [
        ['configure', 'on_connect (connect)', true],
        ['checkout', 'on_checkout (checkout)', true],
        ['reset', 'on_checkin (checkin)', true],
        ['checkout', 'after_begin (after_begin)', true],
      ],
    );
    assert.equal(siteWith(model, 'search_path').callback?.role, 'configure');
    assert.equal(siteWith(model, 'SET ROLE').callback?.role, 'checkout');
    assert.equal(siteWith(model, 'RESET ALL').callback?.role, 'reset');
    const inside = siteWith(model, 'SET LOCAL');
    assert.equal(inside.callback?.role, 'checkout');
    assert.equal(inside.scope.kind, 'transaction', 'after_begin runs inside the transaction the Session began');
    assert.equal(siteWith(model, 'search_path').scope.kind, 'unknown', "the DBAPI connection's transaction state is SQLAlchemy's");
  });

  test('ORM queries and Core builders are written as SQL: locking reads, updates with their values and WHERE, deletes', () => {
    const model = parse([
      'from datetime import timedelta',
      'from sqlalchemy import Column, Integer, MetaData, Table, create_engine, func, select, update, delete',
      'from sqlalchemy.orm import Session, declarative_base',
      'Base = declarative_base()',
      'class Job(Base):',
      '    __tablename__ = "jobs"',
      '    id = Column(Integer, primary_key=True)',
      'events = Table("events", MetaData())',
      'engine = create_engine("postgresql://app@db/app")',
      'def work(worker, job_id, attempt):',
      '    with Session(engine) as session:',
      '        job = session.query(Job).filter(Job.status == "queued", Job.attempts < Job.max_attempts).with_for_update(skip_locked=True).first()',
      '        session.execute(update(Job).where(Job.id == job_id, Job.attempts == attempt).values(status="done", locked_until=None))',
      '        session.execute(update(events).where(events.c.id == job_id).values(tries=events.c.tries + 1, visible_at=func.now() + timedelta(minutes=5)))',
      '        session.execute(delete(Job).where(Job.id == job_id))',
      '        job.status = "failed"',
      '        job.attempts = Job.attempts + 1',
      '        session.commit()',
    ]);
    const statements = model.sites.flatMap((s) => s.analysis.statements);
    const lock = statements.flatMap((s) => s.lockingReads)[0];
    assert.deepEqual([lock.tables, lock.skipLocked, lock.where.map((c) => `${c.column}${c.op}${c.value.kind}`)], [['jobs'], true, ['status=literal', 'attempts<column']]);
    const writes = statements.flatMap((s) => s.rowWrites);
    assert.deepEqual(
      writes.map((w) => [w.op, w.table, w.assignments.map((a) => `${a.column}:${a.value.kind}`).join(','), w.where.map((c) => `${c.column}${c.op}${c.value.kind}`).join(',')]),
      [
        ['update', 'jobs', 'status:literal,locked_until:literal', 'id=param,attempts=param'],
        ['update', 'events', 'tries:increment,visible_at:expression', 'id=param'],
        ['delete', 'jobs', '', 'id=param'],
        ['update', 'jobs', 'status:literal,attempts:increment', 'id=param'],
      ],
    );
    const bump = writes[1].assignments[1].value;
    assert.ok(bump.kind === 'expression' && bump.intervalSeconds === 300, 'timedelta(minutes=5) is an interval of 300 s');
    assert.ok(model.sites.every((s) => s.scope.kind === 'transaction'));
    // The instance writes are flushed in one UPDATE at commit(), at the first assignment.
    const flushed = model.sites[model.sites.length - 1];
    assert.equal(model.text.slice(flushed.span.start, flushed.span.end), 'job.status');
  });
});

describe('asyncpg', () => {
  test('pools: autocommit, the reset on release, the statement cache, init/setup/reset callbacks', () => {
    const model = parse([
      'import asyncpg',
      'async def init(conn):',
      '    await conn.execute("SET search_path TO app")',
      'async def setup(conn):',
      '    await conn.execute("SET ROLE app_user")',
      'async def main():',
      '    a = await asyncpg.create_pool("postgresql://db/app", init=init, setup=setup)',
      '    b = await asyncpg.create_pool("postgresql://db/app", statement_cache_size=0, reset=init)',
    ]);
    const [a, b] = model.connections;
    assert.deepEqual([a.driver, a.autocommit, a.preparedStatements], ['asyncpg', true, 'yes']);
    assert.deepEqual(a.driverReset?.statements, ['SELECT pg_advisory_unlock_all()', 'CLOSE ALL', 'UNLISTEN *', 'RESET ALL']);
    assert.deepEqual(a.callbacks.map((c) => [c.role, c.name]), [['configure', 'init'], ['checkout', 'setup']]);
    assert.equal(b.preparedStatements, 'no');
    assert.equal(b.driverReset, undefined, "a reset= coroutine (asyncpg 0.30) replaces asyncpg's own reset");
    assert.deepEqual(b.callbacks.map((c) => c.role), ['reset']);
  });

  test('acquire(), conn.transaction() and pool.fetch: scopes and connections; $N params from the arguments', () => {
    const model = parse([
      'import asyncpg',
      'pool = None',
      'async def start():',
      '    global pool',
      '    pool = await asyncpg.create_pool("postgresql://db/app")',
      'async def job(tenant_id):',
      '    async with pool.acquire() as conn:',
      '        await conn.execute("select set_config($1, $2, false)", "app.tenant", str(tenant_id))',
      '        async with conn.transaction():',
      '            await conn.fetchrow("SET LOCAL app.tenant = \'1\'")',
      '    await pool.fetchval("select set_config(\'app.tenant\', $1, true)", tenant_id)',
    ]);
    const session = siteWith(model, 'set_config($1');
    assert.deepEqual([session.scope.kind, session.connection.kind, session.driver], ['autocommit', 'pooled-client', 'asyncpg']);
    assert.deepEqual(session.params, [{ kind: 'literal', value: 'app.tenant' }, { kind: 'caller-parameter', name: 'tenant_id' }]);
    assert.deepEqual(writesOf(session).map((w) => [w.name, w.level, w.nameFrom?.kind]), [['app.tenant', 'session', 'placeholder']]);
    assert.equal(siteWith(model, 'SET LOCAL').scope.kind, 'transaction');
    const onPool = siteWith(model, "'app.tenant', $1, true");
    assert.deepEqual([onPool.connection.kind, onPool.scope.kind], ['pool', 'autocommit']);
  });
});

describe('Django', () => {
  const settings = (age: string) =>
    `DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "app"${age ? `, "CONN_MAX_AGE": ${age}` : ''}}}\n`;
  const view = [
    'from django.db import connection, transaction',
    'def view(request):',
    '    with connection.cursor() as cursor:',
    '        cursor.execute("select set_config(\'app.tenant\', %s, false)", [str(request.tenant_id)])',
  ].join('\n');

  test("the connection's reuse follows CONN_MAX_AGE from the project's settings; a management command keeps it", () => {
    const cases: [string, string, string | undefined][] = [
      ['600', view, 'shared'],
      ['None', view, 'shared'],
      ['0', view, 'no-reuse'],
      ['', view, 'no-reuse'],
      ['env.int("AGE")', view, undefined],
      ['0', `from django.core.management.base import BaseCommand\n${view}\nclass Command(BaseCommand):\n    def handle(self, *args, **options):\n        view(None)\n`, 'shared'],
    ];
    for (const [age, code, reuse] of cases) {
      const root = project({ 'manage.py': 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site.settings")\n', 'site/settings.py': settings(age), 'app/views.py': code });
      const model = pythonFrontEnd.parse(code, join(root, 'app/views.py'), {});
      const config = model.connections.find((c) => c.driver === 'django');
      assert.ok(config, age);
      assert.deepEqual([config.reuse, config.autocommit, config.preparedStatements], [reuse, true, 'no'], `CONN_MAX_AGE ${age || '(not set)'}`);
      assert.deepEqual(model.dependencies, [join(root, 'site/settings.py')]);
      const site = siteWith(model, 'set_config');
      assert.deepEqual([site.scope.kind, site.connection.kind, site.connection.configId, site.driver], ['autocommit', 'pooled-client', 'django:default', 'django']);
    }
  });

  test('connection_created handlers are configure callbacks of the default connection', () => {
    const model = parse([
      'from django.db.backends.signals import connection_created',
      'from django.dispatch import receiver',
      '@receiver(connection_created)',
      'def on_connect(sender, connection, **kwargs):',
      '    connection.cursor().execute("SET search_path TO app")',
      'def other(sender, connection, **kwargs):',
      '    connection.cursor().execute("SET ROLE app_user")',
      'connection_created.connect(other)',
    ]);
    const config = model.connections.find((c) => c.id === 'django:default');
    assert.deepEqual(config?.callbacks.map((c) => [c.role, c.name]), [['configure', 'on_connect (connection_created)'], ['configure', 'other (connection_created)']]);
    assert.deepEqual(model.sites.map((s) => [s.callback?.role, s.connection.configId, s.scope.kind]), [['configure', 'django:default', 'autocommit'], ['configure', 'django:default', 'autocommit']]);
  });

  test('transaction.atomic as a block and as a decorator; connections["alias"]', () => {
    const model = parse([
      'from django.db import connection, connections, transaction',
      'def a(t):',
      '    with transaction.atomic():',
      '        with connection.cursor() as c:',
      '            c.execute("SET LOCAL app.tenant = %s", [t])',
      '@transaction.atomic',
      'def b(t):',
      '    with connection.cursor() as c:',
      '        c.execute("SET LOCAL app.tenant = %(t)s", {"t": t})',
      'def c(t):',
      '    with transaction.atomic(using="replica"):',
      '        connections["replica"].cursor().execute("SET LOCAL app.tenant = \'x\'")',
    ]);
    const a = siteWith(model, '%s').scope;
    const b = siteWith(model, '%(t)s');
    const c = siteWith(model, "'x'");
    assert.ok(a.kind === 'transaction' && /transaction\.atomic/.test(a.form));
    assert.ok(b.scope.kind === 'transaction' && /@transaction\.atomic/.test(b.scope.form));
    assert.deepEqual(b.params, [{ kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual([c.scope.kind, c.connection.configId], ['transaction', 'django:replica']);
  });

  test('ORM querysets and instances: select_for_update, update(), delete(), save(update_fields) with the table from Meta.db_table or app_model', () => {
    const root = project({
      'manage.py': '',
      'jobs/models.py': 'from django.db import models\nclass Job(models.Model):\n    status = models.TextField()\nclass Task(models.Model):\n    class Meta:\n        db_table = "tasks"\n',
      'jobs/worker.py': '',
    });
    const code = [
      'from django.db import transaction',
      'from django.db.models import F',
      'from django.utils import timezone',
      'from .models import Job, Task',
      'def work():',
      '    with transaction.atomic():',
      '        job = Job.objects.select_for_update(skip_locked=True).filter(status="queued", attempts__lt=F("max_attempts")).first()',
      '        job.status = "done"',
      '        job.save(update_fields=["status"])',
      '        Task.objects.filter(status="running", locked_until__lt=timezone.now()).update(status="queued", tries=F("tries") + 1)',
      '        Task.objects.filter(pk=job.id).delete()',
    ].join('\n');
    const model = pythonFrontEnd.parse(code, join(root, 'jobs/worker.py'), {});
    const statements = model.sites.flatMap((s) => s.analysis.statements);
    const lock = statements.flatMap((s) => s.lockingReads)[0];
    assert.deepEqual([lock.tables, lock.skipLocked, lock.where.map((c) => `${c.column}${c.op}${c.value.kind}`)], [['jobs_job'], true, ['status=literal', 'attempts<column']]);
    assert.deepEqual(
      statements.flatMap((s) => s.rowWrites).map((w) => [w.op, w.table, w.assignments.map((a) => `${a.column}:${a.value.kind}`).join(','), w.where.map((c) => `${c.column}${c.op}${c.value.kind}`).join(',')]),
      [
        ['update', 'jobs_job', 'status:literal', 'id=param'],
        ['update', 'tasks', 'status:literal,tries:increment', 'status=literal,locked_until<expression'],
        ['delete', 'tasks', '', 'id=param'],
      ],
    );
    assert.ok(model.sites.every((s) => s.scope.kind === 'transaction' && s.connection.configId === 'django:default'));
    assert.ok(model.dependencies?.includes(join(root, 'jobs/models.py')));
  });
});

describe('psycopg.sql composition and bound values', () => {
  test('sql.Identifier, sql.Literal, sql.Placeholder, + and join compose into the SQL; unreadable fields keep their argument', () => {
    const model = parse([
      'from psycopg import sql',
      'def job(conn, name, value, t):',
      '    conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier("search_path"), sql.Literal("tenant_1")))',
      '    conn.execute(sql.SQL("select set_config({}, {}, false)").format(sql.Literal("app.tenant"), sql.Placeholder()), [t])',
      '    conn.execute(sql.SQL("SET ") + sql.Identifier("app", "tenant") + sql.SQL(" = {}").format(sql.Literal(t)))',
      '    conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))',
      '    conn.execute(sql.SQL(" ").join([sql.SQL("SET"), sql.Identifier("app.user"), sql.SQL("= \'1\'")]))',
    ]);
    const writes = model.sites.map((s) => writesOf(s)[0]);
    assert.deepEqual(writes.map((w) => w.name), ['search_path', 'app.tenant', 'app.tenant', undefined, 'app.user']);
    assert.deepEqual(model.sites[1].params, [{ kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual(model.sites[2].params, [{ kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual(writes[3].nameFrom, { kind: 'placeholder', index: 1 });
    assert.deepEqual(model.sites[3].params, [{ kind: 'caller-parameter', name: 'name' }, { kind: 'caller-parameter', name: 'value' }]);
  });

  test('params from tuples, lists, dicts and dict(); %(name)s by key, repeated names once; %% is a percent', () => {
    const model = parse([
      'import psycopg',
      'LIMIT = 10',
      'def job(conn, t):',
      '    conn.execute("select set_config(%s, %s, false)", ("app.tenant", t))',
      '    conn.execute("select %(a)s, %(b)s, %(a)s where x like \'a%%\'", {"b": 2, "a": None})',
      '    args = dict(k="v")',
      '    conn.execute("select %(k)s", args)',
      '    conn.execute("select %s, %s", [LIMIT, str(t)])',
      '    conn.execute("select %s", values_from_elsewhere)',
    ]);
    assert.equal(writesOf(model.sites[0])[0].name, 'app.tenant', 'the name bound as a literal');
    assert.deepEqual(model.sites[0].params, [{ kind: 'literal', value: 'app.tenant' }, { kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual(model.sites[1].params, [{ kind: 'literal', value: null }, { kind: 'literal', value: 2 }]);
    assert.deepEqual(model.sites[2].params, [{ kind: 'literal', value: 'v' }]);
    assert.deepEqual(model.sites[3].params, [{ kind: 'literal', value: 10 }, { kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual(model.sites[4].params, [{ kind: 'unknown' }]);
  });

  test("SQLAlchemy text(): :name binds from the dict or bindparams(), not '::' casts", () => {
    const model = parse([
      'from sqlalchemy import text',
      'def job(session, t):',
      '    session.execute(text("select set_config(:name, :value, false), now()::text"), {"name": "app.tenant", "value": t})',
      '    session.execute(text("SET app.tenant = :v").bindparams(v="1"))',
    ]);
    assert.equal(writesOf(model.sites[0])[0].name, 'app.tenant');
    assert.deepEqual(model.sites[0].params, [{ kind: 'literal', value: 'app.tenant' }, { kind: 'caller-parameter', name: 't' }]);
    assert.deepEqual(model.sites[1].params, [{ kind: 'literal', value: '1' }]);
  });

  test('a hole where a table name stands reads as a name: a constant is its text, an expression names the table', () => {
    const model = parse([
      'from psycopg import sql',
      'TABLE = "jobs"',
      'class Queue:',
      '    def finish(self, conn, job_id):',
      '        conn.execute(f"UPDATE {TABLE} SET status = \'done\' WHERE id = %s", (job_id,))',
      '        conn.execute(f"UPDATE {self.table} SET status = \'done\' WHERE id = %s", (job_id,))',
      '        conn.execute(sql.SQL("DELETE FROM {} WHERE id = %s").format(sql.Identifier(self.table)), (job_id,))',
      '        conn.execute(f"UPDATE jobs SET status = \'{self.done}\' WHERE id = %s", (job_id,))',
    ]);
    const tables = model.sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.rowWrites.map((w) => w.table)));
    assert.deepEqual(tables, ['jobs', 'table', 'table', 'jobs']);
  });

  test('a field inside a quoted literal is filled by psycopg too: a value the code computes, cast to the type that names the literal', () => {
    const model = parse([
      'from psycopg import sql',
      'def recover(cur, app, window):',
      '    cur.execute(sql.SQL("UPDATE tasks SET state = \'ready\' WHERE state = \'busy\' AND beat_at < now() - INTERVAL \'{secs} SECOND\' AND note <> \'{{x}}\'").format(secs=sql.Literal(window)))',
    ]);
    const [statement] = model.sites[0].analysis.statements;
    const beat = statement.rowWrites[0].where.find((c) => c.column === 'beat_at');
    assert.equal(beat?.value.kind, 'expression');
    assert.equal(beat?.value.kind === 'expression' && beat.value.params, true);
    assert.deepEqual(statement.rowWrites[0].where.map((c) => c.column), ['state', 'beat_at', 'note']);
  });

  test('a table name held in a variable, in FOR UPDATE OF and before a column: the name of the expression, without its receiver', () => {
    const model = parse([
      'from psycopg import sql',
      'class Worker:',
      '    def claim(self, cur):',
      '        tasks = sql.Identifier(f"{self.app.prefix}tasks")',
      '        cur.execute(sql.SQL("WITH c AS (SELECT id FROM {t} WHERE state = \'ready\' FOR UPDATE OF {t} SKIP LOCKED) "',
      '                            "UPDATE {t} SET state = \'busy\' FROM c WHERE {t}.id = c.id RETURNING {t}.*").format(t=tasks))',
      'def recover(app, cur):',
      '    cur.execute(sql.SQL("UPDATE {t} SET state = \'ready\' WHERE state = \'busy\'").format(t=sql.Identifier(f"{app.prefix}tasks")))',
    ]);
    const statements = model.sites.flatMap((s) => s.analysis.statements);
    assert.deepEqual(statements.map((st) => st.rowWrites.map((w) => w.table)), [['f_app_prefix_tasks'], ['f_app_prefix_tasks']]);
    assert.deepEqual(statements[0].lockingReads.map((r) => r.tables), [['f_app_prefix_tasks']]);
  });
});

describe('names imported from the project', () => {
  test('a pool, an engine and a session factory made in another module: their configuration, at the import, as a dependency', () => {
    const root = project({
      'pyproject.toml': '[project]\nname = "w"\n',
      'app/__init__.py': '',
      'app/db.py':
        'import asyncpg\nfrom psycopg_pool import ConnectionPool\nfrom sqlalchemy import create_engine\nfrom sqlalchemy.orm import sessionmaker\nfrom sqlalchemy.pool import NullPool\n' +
        'pool = ConnectionPool("dbname=app", kwargs={"autocommit": True})\nengine = create_engine("postgresql://db/app", poolclass=NullPool)\nSessionLocal = sessionmaker(bind=engine)\nevents = None\n' +
        'async def start():\n    global events\n    events = await asyncpg.create_pool("postgresql://db/app")\n',
      'app/worker.py': '',
    });
    const code = [
      'from sqlalchemy import text',
      'from app.db import pool, SessionLocal',
      'from . import db',
      'def job(t):',
      '    with pool.connection() as conn:',
      '        conn.execute("SET LOCAL app.tenant = %s", [t])',
      '    with SessionLocal() as session:',
      '        session.execute(text("SET app.tenant = :t"), {"t": t})',
      'async def event(t):',
      '    async with db.events.acquire() as conn:',
      '        await conn.execute("SET app.tenant = \'1\'")',
    ].join('\n');
    const file = join(root, 'app/worker.py');
    const model = pythonFrontEnd.parse(code, file, {});
    assert.deepEqual(model.connections.map((c) => [c.driver, c.autocommit, c.reuse]), [
      ['psycopg', true, undefined],
      ['sqlalchemy', false, 'no-reuse'],
      ['asyncpg', true, undefined],
    ]);
    // db.py as the module imported; every project file too, as the reading of what pools the project makes rests on them all.
    assert.deepEqual(model.dependencies, [join(root, 'app/db.py'), join(root, 'app/__init__.py')]);
    const pooled = siteWith(model, 'SET LOCAL');
    assert.deepEqual([pooled.scope.kind, pooled.connection.kind], ['autocommit', 'pooled-client']);
    assert.equal(model.text.slice(model.connections[0].span.start, model.connections[0].span.end), 'from app.db import pool, SessionLocal', 'the config is placed at the import');
    assert.equal(siteWith(model, ':t').connection.configId, model.connections[1].id);
    assert.equal(siteWith(model, "'1'").connection.configId, model.connections[2].id);
  });

  test('a name the project does not define stays unknown', () => {
    const root = project({ 'setup.cfg': '', 'app/db.py': 'pool = make_pool()\n' });
    const model = pythonFrontEnd.parse('from app.db import pool\nfrom elsewhere import other\ndef job():\n    with pool.connection() as conn:\n        conn.execute("SET app.tenant = \'1\'")\n', join(root, 'app/worker.py'), {});
    assert.deepEqual(model.connections, []);
    assert.ok(model.sites.every((s) => s.scope.kind === 'unknown'));
  });
});

describe('pools that cannot carry one tenant to another', () => {
  test('a pool made from a tenant parameter is per-tenant; a module pool is shared', () => {
    const model = parse([
      'from psycopg_pool import ConnectionPool',
      'shared = ConnectionPool("dbname=app")',
      'def pool_for(tenant_id):',
      '    return ConnectionPool(f"dbname=app options=-csearch_path=t{tenant_id}")',
      'def pool_named(name):',
      '    return ConnectionPool(f"dbname={name}")',
    ]);
    assert.deepEqual(model.connections.map((c) => c.reuse), [undefined, 'per-tenant', undefined]);
  });
});
