// SQL held other than in the call that runs it: a class attribute, a query
// object the code keeps (bound in a helper method), a method that builds and
// returns the SQL, a constant of another project module, and SQL returned
// for code elsewhere to run (a site of its own, with unknown scope).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { FileModel } from '../../src/model/index.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

const parse = (lines: string[], file = '/virtual/worker.py'): FileModel => pythonFrontEnd.parse(lines.join('\n') + '\n', file, {});

/** Per site: its scope kind, the line its span starts on, and the tables its statements write. */
function sites(model: FileModel): [string, number, string[]][] {
  const line = (offset: number) => model.text.slice(0, offset).split('\n').length;
  return model.sites.map((s) => [s.scope.kind, line(s.span.start), s.analysis.statements.flatMap((st) => st.rowWrites.map((w) => w.table))]);
}

describe('SQL held in attributes and builders', () => {
  test('a class attribute, an attribute set once, a query object bound in a helper, a builder method and a property', () => {
    const model = parse([
      'from psycopg_pool import ConnectionPool',
      'pool = ConnectionPool("dbname=app")',
      'class Queries:',
      '    FINISH = "UPDATE tasks SET state = \'done\' WHERE id = %s"',
      '    def __init__(self, table):',
      '        self.table = table',
      '    def claim(self):',
      '        t = self.table',
      '        return f"UPDATE {t} SET state = \'busy\' WHERE id = (SELECT id FROM {t} WHERE state = \'ready\' FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id"',
      '    @property',
      '    def beat(self):',
      '        return "UPDATE tasks SET beat_at = now() WHERE id = %s"',
      'class Worker:',
      '    RETRY = "UPDATE tasks SET state = \'ready\' WHERE id = %s"',
      '    def __init__(self):',
      '        self._setup()',
      '    def _setup(self):',
      '        self._q = Queries("tasks")',
      '    def run(self):',
      '        with pool.connection() as conn:',
      '            conn.execute(self._q.claim())',
      '            conn.execute(self._q.FINISH, (1,))',
      '            conn.execute(self._q.beat, (1,))',
      '            conn.execute(self.RETRY, (1,))',
      '            conn.execute(Worker.RETRY, (1,))',
    ]);
    assert.deepEqual(sites(model), [
      ['transaction', 21, ['table']],
      ['transaction', 22, ['tasks']],
      ['transaction', 23, ['tasks']],
      ['transaction', 24, ['tasks']],
      ['transaction', 25, ['tasks']],
    ]);
  });

  test('SQL a def returns and no call of the file runs is a site at its return, with unknown scope; text that is no SQL is not', () => {
    const model = parse([
      'class Builder:',
      '    def claim_sql(self) -> str:',
      '        return f"UPDATE {self.names.tasks} SET state = \'busy\' WHERE id = $1"',
      '    def label(self) -> str:',
      '        return f"update {self.names.tasks}"',
      '    def count_sql(self) -> str:',
      '        return f"SELECT count(*) FROM {self.names.tasks}"',
    ]);
    assert.deepEqual(sites(model), [['unknown', 3, ['names_tasks']]]);
  });

  test('a table named by str.format() where DDL makes it, drops it or indexes it parses, with no warning', () => {
    const model = parse([
      'import asyncpg',
      'MAKE = "CREATE TABLE IF NOT EXISTS {} (id serial primary key, state text)"',
      'INDEX = "CREATE INDEX IF NOT EXISTS {} ON {} (state)"',
      'DROP = "DROP TABLE IF EXISTS {}"',
      'async def setup(conn: asyncpg.Connection, table: str, index: str):',
      '    await conn.execute(MAKE.format(table))',
      '    await conn.execute(INDEX.format(index, table))',
      '    await conn.execute(DROP.format(table))',
    ]);
    assert.equal(model.sites.length, 3);
    assert.deepEqual(
      model.sites.map((s) => s.analysis.errors.length),
      [0, 0, 0],
    );
  });

  test('a SQL constant imported from a project module is read there and placed at the name', () => {
    const root = mkdtempSync(join(tmpdir(), 'pgq-py-holders-'));
    const files: Record<string, string> = {
      'pyproject.toml': '[project]\nname = "w"\n',
      'app/__init__.py': '',
      'app/sql.py': 'TABLE = "tasks"\nCLAIM = f"UPDATE {TABLE} SET state = \'busy\' WHERE state = \'ready\'"\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    clearProjectCache();
    const model = parse(['from app.sql import CLAIM', 'def run(cur):', '    cur.execute(CLAIM)'], join(root, 'app/worker.py'));
    assert.deepEqual(sites(model).map(([, line, tables]) => [line, tables]), [[3, ['tasks']]]);
    const [statement] = model.sites[0].analysis.statements;
    assert.equal(model.text.slice(statement.span.start, statement.span.end), 'CLAIM');
  });

  test('an item of a dict of SQL, by a key written in the code ([key] or .get(key)), here or imported from a project module', () => {
    const root = mkdtempSync(join(tmpdir(), 'pgq-py-holders-'));
    const files: Record<string, string> = {
      'pyproject.toml': '[project]\nname = "w"\n',
      'app/__init__.py': '',
      'app/sql.py': 'Q = {"claim": "UPDATE tasks SET state = \'busy\' WHERE state = \'ready\'"}\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    clearProjectCache();
    const model = parse(
      [
        'from app.sql import Q',
        'from app import sql',
        'KEY = "done"',
        'LOCAL = dict(done="UPDATE jobs SET state = \'done\' WHERE id = %s")',
        'BASE = {"x": "UPDATE a SET b = 1"}',
        'MERGED = {**BASE, "y": "UPDATE c SET d = 1"}',
        'class Store:',
        '    SQL = {"take": "UPDATE inbox SET seen = true WHERE id = %s"}',
        '    def take(self, cur):',
        '        cur.execute(self.SQL["take"])',
        'def run(cur, key):',
        '    cur.execute(Q["claim"])',
        '    cur.execute(sql.Q["claim"])',
        '    cur.execute(LOCAL[KEY])',
        '    cur.execute(MERGED["y"])',
        '    cur.execute(LOCAL[key])',
        '    cur.execute(Q["missing"])',
        '    cur.execute(LOCAL.get("done"))',
        '    cur.execute(LOCAL.get("other", "UPDATE z SET y = 1"))',
      ],
      join(root, 'app/worker.py'),
    );
    // Read: a class's dict, the imported dict by name and through its module, the local dict(...) by a constant key and by
    // .get(key). Unknown: a dict
    // that unpacks another, a key from a parameter, a key the dict does not have, .get with a default: no SQL read, no site.
    assert.deepEqual(
      sites(model).map(([, line, tables]) => [line, tables]),
      [
        [10, ['inbox']],
        [12, ['tasks']],
        [13, ['tasks']],
        [14, ['jobs']],
        [18, ['jobs']],
      ],
    );
    const statement = model.sites[1].analysis.statements[0];
    assert.equal(model.text.slice(statement.span.start, statement.span.end), 'Q["claim"]');
  });
});
