// Table identity: the schema a statement writes is kept, a claim's read and
// write match within one statement whatever the default schema, and across
// files `billing.jobs` and `public.jobs` are two tables, with unqualified
// names in the unit's default schema.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';
import { queueFactsOf } from '../../src/model/queue.ts';
import { leaseTables } from '../../src/model/queue-tables.ts';
import { mayBeSameTable, tableKey } from '../../src/model/tables.ts';
import { scan } from '../../src/scan/scan.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { project } from '../cli/project.ts';

await loadSqlParser();

const facts = (sql: string) => queueFactsOf(sqlFrontEnd.parse(sql, 'q.sql', {}));
const claim = (table: string, read = table) =>
  `update ${table} set status = 'running', attempts = attempts + 1, locked_until = now() + interval '30 seconds'
    where id = (select id from ${read} where (status = 'queued' or locked_until < now()) and attempts < max_attempts for update skip locked limit 1) returning id;\n`;
const deadSweep = (table: string) => `update ${table} set status = 'dead' where status = 'running' and locked_until < now() and attempts >= max_attempts;\n`;

test('the analyzer keeps the schema of writes, locking reads (through FOR UPDATE OF an alias), policies and RLS', { timeout: 10_000 }, () => {
  const [write] = analyzeSql("update billing.jobs set status = 'x' where id = 1").statements;
  assert.deepEqual([write.rowWrites[0].table, write.rowWrites[0].schema], ['jobs', 'billing']);
  const [read] = analyzeSql('select id from billing.jobs j, runs where j.id = runs.job_id for update of j skip locked').statements;
  assert.deepEqual([read.lockingReads[0].tables, read.lockingReads[0].schemas], [['jobs'], ['billing']]);
  const [both] = analyzeSql('select 1 from app.a, b for update skip locked').statements;
  assert.deepEqual([both.lockingReads[0].tables, both.lockingReads[0].schemas], [['a', 'b'], ['app', null]]);
  const [unqualified] = analyzeSql('select 1 from jobs for update skip locked').statements;
  assert.equal(unqualified.lockingReads[0].schemas, undefined);
  const [policy, rls] = analyzeSql('create policy p on app.jobs using (true); alter table app.jobs enable row level security').statements;
  assert.deepEqual([policy.policies[0].schema, rls.rowSecurity[0].schema], ['app', 'app']);
});

test('within one statement the default schema is unknown: jobs may be billing.jobs, public.jobs is not', { timeout: 10_000 }, () => {
  assert.deepEqual(facts(claim('billing.jobs', 'jobs')).claims.map((c) => [c.schema, c.table]), [['billing', 'jobs']]);
  assert.deepEqual(facts(claim('billing.jobs')).claims.map((c) => [c.schema, c.table]), [['billing', 'jobs']]);
  // The write takes no row the read locked: no claim of billing.jobs.
  assert.deepEqual(facts(claim('billing.jobs', 'public.jobs')).claims, []);
  assert.equal(mayBeSameTable({ table: 'jobs' }, { table: 'jobs', schema: 'x' }), true);
  assert.equal(mayBeSameTable({ table: 'jobs', schema: 'y' }, { table: 'jobs', schema: 'x' }), false);
  assert.equal(tableKey({ table: 'jobs' }), 'public.jobs');
  assert.equal(tableKey({ table: 'jobs' }, 'billing'), 'billing.jobs');
  assert.equal(tableKey({ table: 'jobs', schema: 'public' }, 'billing'), 'public.jobs');
});

test('across files: grouped by schema.table, unqualified names in each file\'s default schema', { timeout: 10_000 }, () => {
  const files = (defaultSchema?: string) => [
    { file: 'claim.sql', facts: facts(claim('billing.jobs')), defaultSchema },
    { file: 'sweep.sql', facts: facts(deadSweep('jobs')), defaultSchema },
    { file: 'other.sql', facts: facts(deadSweep('public.jobs')), defaultSchema },
  ];
  const brief = (defaultSchema?: string) => leaseTables(files(defaultSchema)).map((t) => [t.key, t.table, t.sweeps.map((s) => s.file)]);
  assert.deepEqual(brief(), [['billing.jobs', 'billing.jobs', []]]);
  assert.deepEqual(brief('billing'), [['billing.jobs', 'billing.jobs', ['sweep.sql']]]);
});

test('one unit, two schemas: a claim of billing.jobs and a sweep of public.jobs do not lend each other facts', { timeout: 30_000 }, async () => {
  const dir = project({ 'package.json': '{"name": "svc"}', 'claim.sql': claim('billing.jobs'), 'sweep.sql': deadSweep('public.jobs') });
  const sweepRule = async () =>
    (await scan({ paths: [dir], cwd: dir, concurrency: 'off' })).results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'require-dead-sweep').map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line}`));
  assert.deepEqual(await sweepRule(), ['claim.sql:2']);
  // The same sweep of billing.jobs, qualified or through the unit's default schema, is the dead sweep.
  writeFileSync(join(dir, 'sweep.sql'), deadSweep('billing.jobs'));
  assert.deepEqual(await sweepRule(), []);
  writeFileSync(join(dir, 'sweep.sql'), deadSweep('jobs'));
  assert.deepEqual(await sweepRule(), ['claim.sql:2']);
  writeFileSync(join(dir, 'pgq-audit.config.json'), '{"defaultSchema": "billing"}');
  assert.deepEqual(await sweepRule(), []);
  // In one file, the same: the scan decides the file's unit with its default schema.
  mkdirSync(join(dir, 'one'));
  writeFileSync(join(dir, 'one/package.json'), '{"name": "one"}');
  writeFileSync(join(dir, 'one/both.sql'), claim('billing.jobs') + deadSweep('public.jobs'));
  assert.deepEqual((await sweepRule()).filter((f) => f.startsWith('one/')), ['one/both.sql:2']);
});
