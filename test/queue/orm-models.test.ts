// The one-transaction rules on the facts the ORM front ends produce: Django's
// `transaction.atomic()` + `select_for_update(skip_locked=True)` and
// SQLAlchemy's `with_for_update(skip_locked=True)` become the same sites,
// scopes and job transactions as raw SQL, so the rules judge them alike.
// Models built by hand here, in the shape the Python front end fills them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { emptyFileModel, type Driver, type FileModel, type Scope } from '../../src/model/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';

await loadSqlParser();

const only = (id: string) => activeRules(Object.fromEntries(activeRules().map(({ rule }) => [rule.id, rule.id === id ? 'error' : 'off'])), allRules);

/** A Python file whose ORM calls the front end turned into SQL sites of one transaction. */
function ormJob(driver: Driver, form: string, opts: { sideEffect?: string; countedOutside?: boolean } = {}): FileModel {
  const lines = [
    'with transaction.atomic():',
    "    job = Job.objects.select_for_update(skip_locked=True).filter(status='queued').order_by('id').first()",
    '    run(job)',
    '    notify(job)',
    '    job.delete()',
  ];
  const text = lines.join('\n') + '\n';
  const file = emptyFileModel('worker.py', 'python', text);
  const scope: Scope = { kind: 'transaction', id: 'worker.py#atomic1', form, rollsBackOnError: true };
  const lineStart = (n: number) => lines.slice(0, n).join('\n').length + (n > 0 ? 1 : 0);
  const site = (line: number, sql: string) => {
    const start = lineStart(line) + 4;
    const analysis = analyzeSql(sql);
    for (const s of analysis.statements) s.span = { start, end: start + lines[line].trim().length };
    for (const s of analysis.statements) for (const r of s.lockingReads) r.span = s.span;
    file.sites.push({ span: { start, end: start + lines[line].trim().length }, analysis, scope, connection: { kind: 'pooled-client' }, driver });
  };
  site(1, `SELECT "jobs"."id", "jobs"."payload" FROM "jobs" WHERE "jobs"."status" = 'queued' ORDER BY "jobs"."id" ASC LIMIT 1 FOR UPDATE SKIP LOCKED`);
  site(4, 'DELETE FROM "jobs" WHERE "jobs"."id" IN (%s)'.replace('%s', '$1'));
  file.jobTransactions.push({ scopeId: scope.id, span: file.sites[0].analysis.statements[0].span, failureCountedOutside: opts.countedOutside ?? false });
  if (opts.sideEffect) file.sideEffects.push({ span: { start: lineStart(3) + 4, end: lineStart(3) + 10 }, callee: opts.sideEffect, scope });
  return file;
}

for (const [driver, form] of [
  ['django', 'transaction.atomic()'],
  ['sqlalchemy', 'session.begin()'],
] as const) {
  test(`${driver}: the claim by select_for_update / with_for_update(skip_locked=True) and the work in one transaction, nothing counted`, () => {
    const findings = runRules(ormJob(driver, form), only('no-attempts-in-rollback-scope'));
    assert.deepEqual(findings.map((f) => [f.line, f.messageId]), [[2, 'notCounted']]);
    assert.match(findings[0].message, /a failure rolls the job back to the queue unchanged/);
  });
  test(`${driver}: quiet when the failure is counted in its own transaction`, () => {
    assert.deepEqual(runRules(ormJob(driver, form, { countedOutside: true }), only('no-attempts-in-rollback-scope')), []);
  });
  test(`${driver}: an HTTP call under the claim's row lock`, () => {
    const findings = runRules(ormJob(driver, form, { sideEffect: 'httpx.post', countedOutside: true }), only('no-side-effects-in-locking-transaction'));
    assert.deepEqual(findings.map((f) => [f.line, f.messageId]), [[4, 'sideEffect']]);
    assert.match(findings[0].message, /'httpx\.post' runs inside a transaction that has locked rows \(line 2\)/);
  });
}
