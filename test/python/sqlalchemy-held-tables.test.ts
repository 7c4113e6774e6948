// SQLAlchemy Core on a Table the code holds rather than names: a library
// handed its user's table (`self.table = table` with `table: "Table"`) reads
// it through a local alias; a claim selects from a CTE that takes the locks.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { FileModel } from '../../src/model/index.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

const parse = (lines: string[]): FileModel => pythonFrontEnd.parse(lines.join('\n') + '\n', '/virtual/queue.py', {});

const claimOn = (annotation: string): string[] => [
  'from sqlalchemy import func, select, update',
  'from sqlalchemy import Table',
  'class Queue:',
  `    def __init__(self, engine, table${annotation}):`,
  '        self.engine = engine',
  '        self.table = table',
  '    async def take(self, conn):',
  '        t = self.table',
  '        ready = select(t.c.id).where(t.c.owner.is_(None)).limit(5).with_for_update(skip_locked=True).cte("ready")',
  '        async with conn.begin():',
  '            await conn.execute(update(t).where(t.c.id.in_(select(ready.c.id))).values(owner=func.now()))',
  '    async def done(self, conn, job_id):',
  '        await conn.execute(update(self.table).where(self.table.c.id == job_id).values(state="done"))',
];

describe('SQLAlchemy Core tables the code holds', () => {
  test('a Table handed in is one table, named after its holder, in every statement; the CTE is the locking read', () => {
    const model = parse(claimOn(': Table'));
    const writes = model.sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.rowWrites.map((w) => w.table)));
    assert.deepEqual(writes, ['table', 'table']);
    const locks = model.sites[0].analysis.statements.flatMap((st) => st.lockingReads);
    assert.deepEqual(locks.map((l) => [l.tables, l.skipLocked]), [[['table'], true]]);
  });

  test('a string annotation is read like the name', () => {
    assert.equal(parse(claimOn(': "Table"')).sites.length, 2);
  });

  test('a parameter nothing says is a Table stays unknown', () => {
    assert.equal(parse(claimOn('')).sites.length, 0);
  });
});
