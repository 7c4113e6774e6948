// F7 on psycopg_pool: a reset= callback that runs SQL without autocommit
// leaves the connection INTRANS; the pool logs that and discards it, so every
// job gets a new connection. DISCARD ALL in the same place fails outright
// (cannot run inside a transaction block). Rule: require-autocommit-in-reset.
// Runs the callbacks and pool options of fixtures/python/require-autocommit-in-reset/
// bad.py and good.py, each pool with one connection so reuse is measured.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { runProof } from './python/run-python.ts';

interface Run {
  jobs: number;
  connections: number;
  distinct_backends: number;
  warnings: string[];
}

let db: TestDatabase;
interface Opened {
  opened: boolean;
  warnings: string[];
}

let result: Record<'bad' | 'discard_bad' | 'good_autocommit' | 'good_commit', Run> & Record<'configure_bad' | 'configure_good', Opened>;
before(async () => {
  db = await startTestDatabase();
  result = (await runProof<typeof result>('reset-intrans', db.workerUrl)).result;
});
after(async () => {
  await db?.stop();
});

const count = (warnings: string[], pattern: RegExp) => warnings.filter((w) => pattern.test(w)).length;

test('reset callback without autocommit: the pool discards the connection after every job', () => {
  const { bad } = result;
  assert.equal(bad.distinct_backends, bad.jobs, 'each job ran on a new backend');
  assert.equal(bad.connections, bad.jobs + 1, 'one connection at the start and one replacement per job (21 for 20 in the source)');
  assert.equal(count(bad.warnings, /connection left in status INTRANS by reset function .*: discarded/), bad.jobs);
});

test('DISCARD ALL in a reset callback without autocommit fails every time and costs a connection per job', () => {
  const { discard_bad: bad } = result;
  assert.equal(bad.distinct_backends, bad.jobs);
  assert.equal(count(bad.warnings, /DISCARD ALL cannot run inside a transaction block/), bad.jobs);
});

test('reset callback in autocommit, or committing before it returns, keeps one connection', () => {
  for (const good of [result.good_autocommit, result.good_commit]) {
    assert.equal(good.distinct_backends, 1);
    assert.equal(good.connections, 1);
    assert.deepEqual(good.warnings, []);
  }
});

test('configure callback without autocommit: the pool refuses every new connection and never opens', () => {
  assert.equal(result.configure_bad.opened, false);
  assert.ok(result.configure_bad.warnings.some((w) => /connection left in status INTRANS by configure function/.test(w)), result.configure_bad.warnings.join('\n'));
  assert.equal(result.configure_good.opened, true);
  assert.deepEqual(result.configure_good.warnings, []);
});
