// The Python front end's model of Flask-SQLAlchemy: SQLAlchemy(app) or
// SQLAlchemy() + init_app as the engine it makes for the app, db.session as
// its scoped Session (a transaction from its first statement, as a
// Session's), db.engine as the engine, db.text/db.select as SQLAlchemy's,
// and the extension imported from a project module.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parseLines as parse, siteWith } from './model-helpers.ts';

before(async () => {
  await loadSqlParser();
});



const header = [
  'from flask import Flask',
  'from flask_sqlalchemy import SQLAlchemy',
  'from sqlalchemy import text',
  'from sqlalchemy.pool import NullPool',
  'app = Flask(__name__)',
  'app.config["SQLALCHEMY_DATABASE_URI"] = "postgresql+psycopg://app@db/app"',
  'db = SQLAlchemy(app)',
  'auto = SQLAlchemy(app, engine_options={"isolation_level": "AUTOCOMMIT"})',
  'nulls = SQLAlchemy(engine_options=dict(poolclass=NullPool))',
  'legacy = SQLAlchemy(app, session_options={"autocommit": True})',
];

test('SQLAlchemy(app): a pool rolled back at checkin, its engine_options, the dialect of the URI the file configures', () => {
  const [db, auto, nulls, legacy] = parse(header).connections;
  assert.deepEqual([db.driver, db.kind, db.autocommit, db.reuse, db.preparedStatements], ['sqlalchemy', 'pool', false, undefined, 'yes']);
  assert.deepEqual(db.driverReset?.statements, ['ROLLBACK']);
  assert.equal(auto.autocommit, true);
  assert.deepEqual([nulls.reuse, nulls.driverReset], ['no-reuse', undefined]);
  assert.equal(legacy.autocommit, 'unknown', 'a Session in autocommit mode runs each statement alone');
});

test('SQLALCHEMY_ENGINE_OPTIONS set in the file may say anything: autocommit unknown', () => {
  const [db] = parse(['from flask_sqlalchemy import SQLAlchemy', 'class Config:', '    SQLALCHEMY_ENGINE_OPTIONS = OPTIONS', 'db = SQLAlchemy()']).connections;
  assert.equal(db.autocommit, 'unknown');
});

test('db.session: the scoped Session on the extension\'s engine, in a transaction from its first statement; db.engine checks out of it', () => {
  const model = parse([
    ...header,
    'def job(t):',
    '    db.session.execute(text("select set_config(\'app.t\', :t, true)"), {"t": t})',
    '    db.session.execute(db.text("select count(*) from invoices"))',
    '    db.session.commit()',
    '    db.session().execute(text("select 2"))',
    'def on_engine(t):',
    '    with db.engine.connect() as conn:',
    '        conn.execute(text("select 3"))',
    'def on_auto(t):',
    '    auto.session.execute(text("select 4"))',
    'def on_autocommit_connection(t):',
    '    db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"}).execute(text("select 5"))',
  ]);
  const [db] = model.connections;
  const setting = siteWith(model, 'set_config');
  const count = siteWith(model, 'count(*)');
  assert.deepEqual(setting.connection, { kind: 'pooled-client', configId: db.id });
  assert.equal(setting.scope.kind, 'transaction');
  assert.deepEqual(count.scope, setting.scope, 'the same transaction until commit()');
  const after = siteWith(model, 'select 2');
  assert.equal(after.scope.kind, 'transaction');
  assert.notDeepEqual(after.scope, setting.scope, 'db.session() is the same Session, in a new transaction after commit()');
  assert.equal(siteWith(model, 'select 3').scope.kind, 'transaction');
  assert.equal(siteWith(model, 'select 4').scope.kind, 'autocommit');
  assert.equal(siteWith(model, 'select 5').scope.kind, 'autocommit');
});

test('SQLAlchemy() bound later with init_app, imported from a project module: db.session, db.text', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-flask-'));
  const files: Record<string, string> = {
    'app/__init__.py': '',
    'app/extensions.py': 'from flask_sqlalchemy import SQLAlchemy\ndb = SQLAlchemy()\n',
    'app/jobs.py': [
      'from .extensions import db',
      'def job(t):',
      '    db.session.execute(db.text("SET app.t = :t"), {"t": t})',
      '    db.session.commit()',
      '',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  const model = pythonFrontEnd.parse(files['app/jobs.py'], join(root, 'app/jobs.py'), {});
  const site = siteWith(model, 'SET app.t');
  assert.equal(site.scope.kind, 'transaction');
  assert.equal(site.connection.kind, 'pooled-client');
  assert.deepEqual(model.dependencies, [join(root, 'app/extensions.py')]);
});

test('a name of another object that is not the extension is not read as its Session', () => {
  const model = parse(['from sqlalchemy import text', 'class Store:', '    session = None', 'store = Store()', 'def job(t):', '    store.session.execute(text("select 1"))']);
  assert.equal(siteWith(model, 'select 1').scope.kind, 'unknown');
});

test('a plain scoped_session is read as db.session is: each statement in a transaction unless its engine is in autocommit', () => {
  const model = parse([
    'from sqlalchemy import create_engine, text',
    'from sqlalchemy.orm import scoped_session, sessionmaker',
    'engine = create_engine("postgresql://app@db/app")',
    'auto = create_engine("postgresql://app@db/app", isolation_level="AUTOCOMMIT")',
    'Session = scoped_session(sessionmaker(bind=engine))',
    'AutoSession = scoped_session(sessionmaker(bind=auto))',
    'def job(t):',
    '    Session.execute(text("select 1"))',
    '    AutoSession.execute(text("select 2"))',
    '    Session.connection(execution_options={"isolation_level": "AUTOCOMMIT"}).execute(text("select 3"))',
  ]);
  assert.equal(siteWith(model, 'select 1').scope.kind, 'transaction');
  assert.equal(siteWith(model, 'select 2').scope.kind, 'autocommit');
  assert.equal(siteWith(model, 'select 3').scope.kind, 'transaction', 'once a statement ran, the Session keeps its connection and ignores the options');
});

test('a builder called on a module name (db.select, sa.select) roots its chain: the claim is read as SQL', () => {
  const model = parse([
    'import sqlalchemy as sa',
    'from flask_sqlalchemy import SQLAlchemy',
    'db = SQLAlchemy()',
    'class Job(db.Model):',
    '    __tablename__ = "jobs"',
    '    id = db.Column(db.Integer, primary_key=True)',
    '    status = db.Column(db.String)',
    'def claim():',
    '    db.session.scalars(db.select(Job).where(Job.status == "queued").limit(1).with_for_update(skip_locked=True)).first()',
    'def claim_sa():',
    '    db.session.scalars(sa.select(Job).where(Job.status == "queued").limit(1).with_for_update(skip_locked=True)).first()',
  ]);
  const claims = model.sites.filter((s) => s.analysis.statements.some((st) => st.lockingReads.some((r) => r.skipLocked && r.tables.includes('jobs'))));
  assert.equal(claims.length, 2, model.sites.map((s) => model.text.slice(s.span.start, s.span.end)).join(' | '));
  for (const site of claims) assert.equal(site.scope.kind, 'transaction');
});

test('Model.query is db.session.query(Model): the claim on the extension\'s scoped Session, in its transaction', () => {
  const model = parse([
    'from flask_sqlalchemy import SQLAlchemy',
    'db = SQLAlchemy()',
    'class Job(db.Model):',
    '    __tablename__ = "jobs"',
    '    id = db.Column(db.Integer, primary_key=True)',
    '    status = db.Column(db.String)',
    'class Plain:',
    '    query = None',
    'def claim():',
    '    job = Job.query.filter_by(status="queued").with_for_update(skip_locked=True).first()',
    '    Plain.query.filter_by(status="queued").first()',
    '    db.session.commit()',
  ]);
  const [db] = model.connections;
  const claim = siteWith(model, 'Job.query');
  assert.deepEqual(claim.connection, { kind: 'pooled-client', configId: db.id });
  assert.equal(claim.scope.kind, 'transaction');
  const [read] = claim.analysis.statements.flatMap((s) => s.lockingReads);
  assert.deepEqual([read.tables, read.skipLocked], [['jobs'], true]);
  assert.equal(model.sites.length, 1, 'Plain is no model: its query attribute is not read');
});

test('db.session.remove() closes the Session: what it left open is rolled back, a new transaction follows', () => {
  const model = parse([
    ...header,
    'def job(t):',
    '    db.session.execute(text("SET app.t = :t"), {"t": t})',
    '    db.session.remove()',
    '    db.session.execute(text("select 1"))',
  ]);
  const set = siteWith(model, 'SET app.t');
  const next = siteWith(model, 'select 1');
  assert.equal(set.scope.kind, 'transaction');
  assert.equal(next.scope.kind, 'transaction');
  assert.notDeepEqual(next.scope, set.scope);
});
