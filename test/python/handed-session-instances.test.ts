// Rows a SQLAlchemy Session handed in (a parameter, its caller commits) loads
// and writes: the write-back of rows a locking read took is the claim itself
// (one UPDATE of the rows the read locks), a write-back of a row read by id is
// written where the function ends (the caller's commit sends it), and
// `row.col += n` is the column written from itself.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parseLines } from './model-helpers.ts';

before(async () => {
  await loadSqlParser();
});

const header = [
  'from datetime import timedelta',
  'from sqlalchemy import Column, DateTime, Integer, String, func, select',
  'from sqlalchemy.orm import Session, declarative_base',
  'Base = declarative_base()',
  'class Probe(Base):',
  '    __tablename__ = "probes"',
  '    id = Column(Integer, primary_key=True)',
  '    phase = Column(String)',
  '    tries = Column(Integer)',
  '    held_until = Column(DateTime)',
];

const writesOf = (lines: string[]) =>
  parseLines([...header, ...lines]).sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.rowWrites.map((w) => ({ write: w, locks: st.lockingReads }))));

test('the write-back of rows a locking read took on a handed-in Session is one claim of the rows it locks', () => {
  const writes = writesOf([
    'def take(session: Session):',
    '    rows = session.scalars(select(Probe).where(Probe.phase == "ready").limit(5).with_for_update(skip_locked=True)).all()',
    '    for row in rows:',
    '        row.phase = "held"',
    '        row.held_until = func.now() + timedelta(seconds=30)',
    '        row.tries += 1',
    '    return rows',
  ]);
  assert.equal(writes.length, 1);
  const [{ write, locks }] = writes;
  assert.equal(write.table, 'probes');
  assert.deepEqual(write.assignments.map((a) => a.column).sort(), ['held_until', 'phase', 'tries']);
  assert.ok(locks.some((r) => r.skipLocked && r.tables.includes('probes')), 'the UPDATE holds the SKIP LOCKED read');
  const tries = write.assignments.find((a) => a.column === 'tries')!;
  assert.equal(tries.value.kind, 'increment');
});

test('a row read by id and written on a handed-in Session is written at the end of the function, by id', () => {
  const writes = writesOf(['def finish(session: Session, probe_id: int):', '    row = session.get(Probe, probe_id)', '    row.phase = "done"']);
  assert.equal(writes.length, 1);
  assert.equal(writes[0].locks.length, 0);
  assert.deepEqual(
    writes[0].write.where.map((c) => c.column),
    ['id'],
  );
});

test('a Session the function opens and never commits writes nothing at its end', () => {
  const writes = writesOf([
    'from sqlalchemy import create_engine',
    'engine = create_engine("postgresql://app@db/app")',
    'def peek(probe_id: int):',
    '    with Session(engine) as session:',
    '        row = session.get(Probe, probe_id)',
    '        row.phase = "seen"',
  ]);
  assert.equal(writes.length, 0);
});
