// `async for session in get_session():` where get_session says it yields a
// Session (`-> AsyncGenerator[AsyncSession, None]`), defined in the file or
// in the project module it is imported from: the loop's target is a Session,
// so SQLAlchemy builders run on it are read. Without the annotation the
// target stays unknown.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

const MODEL = ['from sqlalchemy import Column, Integer, String', 'from sqlalchemy.orm import declarative_base', 'Base = declarative_base()', '', 'class Task(Base):', '    __tablename__ = "tasks"', '    id = Column(Integer, primary_key=True)', '    state = Column(String)', ''];

function project(database: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-gen-'));
  mkdirSync(join(root, '.git'));
  mkdirSync(join(root, 'app'));
  writeFileSync(join(root, 'app/__init__.py'), '');
  writeFileSync(join(root, 'app/models.py'), MODEL.join('\n'));
  writeFileSync(join(root, 'app/database.py'), database.join('\n') + '\n');
  const worker = [
    'from sqlalchemy import update',
    'from app.database import get_session',
    'from app.models import Task',
    '',
    'async def mark(task_id):',
    '    async for session in get_session():',
    '        await session.execute(update(Task).where(Task.id == task_id).values(state="done"))',
    '        await session.commit()',
    '',
  ];
  writeFileSync(join(root, 'app/worker.py'), worker.join('\n'));
  return join(root, 'app/worker.py');
}

const statements = (file: string) => pythonFrontEnd.parse(readFileSync(file, 'utf8'), file, {}).sites.map((s) => s.analysis.statements[0]?.kind);

const SESSIONS = ['from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine', 'engine = create_async_engine("postgresql+asyncpg://app@localhost/app")', 'Sessions = async_sessionmaker(engine)', ''];

test('a Session yielded by an annotated generator of a project module is the loop target', () => {
  const file = project(['from typing import AsyncGenerator', ...SESSIONS, 'async def get_session() -> AsyncGenerator[AsyncSession, None]:', '    async with Sessions() as session:', '        yield session']);
  assert.deepEqual(statements(file), ['UpdateStmt']);
});

test('without the annotation the loop target is unknown and the builder is not read', () => {
  const file = project([...SESSIONS, 'async def get_session():', '    async with Sessions() as session:', '        yield session']);
  assert.deepEqual(statements(file), []);
});
