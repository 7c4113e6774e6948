// The queue facts of one file are read in work linear in its statements:
// 20,000 statements in one transaction once took 10.5 s (each statement
// looked at every earlier and later one). The test counts how often the
// reading touches statement facts, not how long it takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueFactsOf } from '../../src/model/queue.ts';
import { emptyFileModel, type FileModel, type Scope } from '../../src/model/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

/** A file of `n` statements in one transaction, each statement's facts behind a proxy that counts every property read. */
function transactionOf(n: number, sql: string): { model: FileModel; reads: () => number } {
  const [statement] = analyzeSql(sql).statements;
  let reads = 0;
  const counted = <T extends object>(value: T): T =>
    new Proxy(value, {
      get(target, key, receiver) {
        reads++;
        const v = Reflect.get(target, key, receiver);
        return v && typeof v === 'object' ? counted(v) : v;
      },
    });
  const model = emptyFileModel('big.sql', 'sql', '');
  const scope: Scope = { kind: 'transaction', id: 'big.sql#tx1', form: 'BEGIN', rollsBackOnError: true };
  for (let i = 0; i < n; i++) {
    const span = { start: i * 100, end: i * 100 + 50 };
    const facts = counted({ ...structuredClone(statement), span });
    model.sites.push({ span, analysis: { statements: [facts], errors: [] }, scope, connection: { kind: 'unknown' }, driver: 'sql' });
  }
  return { model, reads: () => reads };
}

for (const [shape, sql] of [
  ['INSERTs', "insert into events (kind) values ('x')"],
  ['UPDATEs by id', "update jobs set status = 'done' where id = $1"],
  ['SKIP LOCKED claims', "update jobs set status = 'running' where id = (select id from jobs where status = 'queued' for update skip locked limit 1)"],
] as const) {
  test(`${shape} in one transaction: twice the statements, at most about twice the reads`, { timeout: 60_000 }, () => {
    const small = transactionOf(2_000, sql);
    queueFactsOf(small.model);
    const large = transactionOf(4_000, sql);
    queueFactsOf(large.model);
    const ratio = large.reads() / small.reads();
    assert.ok(small.reads() > 0);
    assert.ok(ratio < 2.2, `reads grew ${ratio.toFixed(2)}× for 2× the statements (${small.reads()} → ${large.reads()})`);
  });
}
