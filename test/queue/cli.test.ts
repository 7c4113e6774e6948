// `pgq-audit scan` over fixture projects whose claim (src/queue.ts), worker
// (worker.py) and migrations (migrations/*.sql) are separate files: each
// cross-file finding at the statement to change, naming the other file; the
// good project clean. Runs the built CLI (npm test builds first).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';

interface JsonResult {
  filePath: string;
  messages: { ruleId: string; line: number; column: number; message: string }[];
}

function scanProject(name: string): { code: number | null; findings: { file: string; at: string; rule: string; message: string }[] } {
  const run = runCli(['scan', `fixtures/projects/${name}`, '--format', 'json']);
  const results = JSON.parse(run.stdout) as JsonResult[];
  const prefix = `/fixtures/projects/${name}/`;
  const findings = results.flatMap((r) =>
    r.messages.map((m) => ({ file: r.filePath.slice(r.filePath.indexOf(prefix) + prefix.length), at: `${m.line}:${m.column}`, rule: m.ruleId, message: m.message })),
  );
  return { code: run.code, findings };
}

test('lease-mixed-bad: four cross-file findings, each naming the other file', () => {
  const { code, findings } = scanProject('lease-mixed-bad');
  assert.equal(code, 1);
  assert.deepEqual(
    findings.map((f) => `${f.file}:${f.at} ${f.rule}`),
    [
      'migrations/003_tenant_policy.sql:4:1 pgq/no-tenant-policy-on-queue',
      'src/queue.ts:12:13 pgq/require-lease-heartbeat',
      'src/queue.ts:18:16 pgq/require-dead-sweep',
      'worker.py:11:73 pgq/require-fenced-finish',
    ],
  );
  const [policy, heartbeat, sweep, finish] = findings.map((f) => f.message);
  assert.match(policy, /claimed at fixtures\/projects\/lease-mixed-bad\/src\/queue\.ts:15, row level security enabled at fixtures\/projects\/lease-mixed-bad\/migrations\/002_row_level_security\.sql:1/);
  assert.match(heartbeat, /the job is finished at fixtures\/projects\/lease-mixed-bad\/worker\.py:11/);
  assert.match(sweep, /the fail update at fixtures\/projects\/lease-mixed-bad\/worker\.py:19/);
  assert.match(finish, /the claim at fixtures\/projects\/lease-mixed-bad\/src\/queue\.ts:10 gives a 2 s lease/);
});

test('lease-mixed-good: clean', () => {
  const { code, findings } = scanProject('lease-mixed-good');
  assert.deepEqual(findings, []);
  assert.equal(code, 0);
});

test('one file of the bad project alone: the cross-file findings need the others', () => {
  const run = runCli(['scan', 'fixtures/projects/lease-mixed-bad/worker.py', '--format', 'json']);
  assert.deepEqual((JSON.parse(run.stdout) as JsonResult[]).flatMap((r) => r.messages), []);
});

test('prisma-read-claim-bad: a findFirst + compare-and-set claim whose read takes expired leases back with no limit, reported at the read', () => {
  const { code, findings } = scanProject('prisma-read-claim-bad');
  assert.equal(code, 1);
  assert.deepEqual(
    findings.map((f) => `${f.file}:${f.at} ${f.rule}`),
    ['src/claim.ts:12:45 pgq/require-claim-attempt-limit'],
  );
  assert.match(findings[0].message, /takes back jobs of 'webhookdelivery' whose lease expired but has no attempt limit/);
});

test('prisma-read-claim-good: the limit in the read, exhausted jobs buried by another module: clean', () => {
  const { code, findings } = scanProject('prisma-read-claim-good');
  assert.deepEqual(findings, []);
  assert.equal(code, 0);
});

test("limit-columns-bad: the claim's messages name the table's own counter and limit from another file's CREATE TABLE; a suppressed one stays suppressed", () => {
  const { findings } = scanProject('limit-columns-bad');
  assert.deepEqual(
    findings.map((f) => `${f.file}:${f.at} ${f.rule}`),
    ['migrations/002_take_ticket.sql:5:10 pgq/require-claim-attempt-limit', 'migrations/002_take_ticket.sql:7:61 pgq/require-claim-attempt-limit'],
  );
  assert.match(findings[0].message, /`tries = tries \+ 1`/);
  assert.match(findings[1].message, /`and tries < max_tries`/);
});
