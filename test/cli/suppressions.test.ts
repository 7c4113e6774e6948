// pgq-audit-ignore-next-line <rule-id> -- <reason>, in the comment syntax of
// each language. One without a reason, or one that suppresses nothing, is
// itself reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import type { FileResult, Finding } from '../../src/engine/findings.ts';
import { collectLineComments } from '../../src/languages/comments.ts';
import { emptyFileModel, type Language } from '../../src/model/index.ts';
import { applySuppressions, readDirectives } from '../../src/suppressions/index.ts';
import { runCli } from '../helpers/cli.ts';
import { parseJson, project, type JsonMessage } from './project.ts';

const summary = (messages: JsonMessage[]) => messages.map((m) => `${m.ruleId}@${m.line}`);

test('SQL: a suppression with a reason hides the finding on the next line and nothing else', () => {
  const dir = project({
    'a.sql': [
      "SET app.tenant = '1';",
      '-- pgq-audit-ignore-next-line no-session-tenant-setting -- this script runs on a dedicated connection',
      "SET app.tenant = '2';",
      "SET app.tenant = '3';",
      '',
    ].join('\n'),
  });
  const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  assert.deepEqual(summary(parseJson(run.stdout)[0].messages), ['pgq/no-session-tenant-setting@1', 'pgq/no-session-tenant-setting@4']);
});

test('SQL: the pgq/ prefix, several rules, stacked directives and a trailing directive comment', () => {
  const dir = project({
    'a.sql': [
      '-- pgq-audit-ignore-next-line pgq/no-session-tenant-setting, require-nullif-on-setting-cast -- reviewed: migration runs once as the owner',
      "SET app.tenant = '1';",
      '-- pgq-audit-ignore-next-line no-session-tenant-setting -- first of a stack',
      '-- pgq-audit-ignore-next-line require-nullif-on-setting-cast -- second of a stack',
      "select current_setting('app.tenant')::int; SET app.tenant = '2';",
      "select 1; -- pgq-audit-ignore-next-line no-session-tenant-setting -- on the line above the finding, after code",
      "SET app.tenant = '3';",
      '',
    ].join('\n'),
  });
  const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  const [result] = parseJson(run.stdout);
  // The first directive names require-nullif-on-setting-cast, which reports nothing on line 2.
  assert.deepEqual(summary(result.messages), ['pgq/unused-suppression@1']);
  assert.equal(run.code, 0, 'only a warning is left');
  assert.match(result.messages[0].message, /suppresses nothing: no pgq\/require-nullif-on-setting-cast finding starts on line 2/);
});

test('SQL: without a reason, or with an unknown rule, a suppression is an error and suppresses nothing', () => {
  const dir = project({
    'a.sql': [
      '-- pgq-audit-ignore-next-line no-session-tenant-setting',
      "SET app.tenant = '1';",
      '-- pgq-audit-ignore-next-line no-session-tenant-settings -- typo in the id',
      "SET app.tenant = '2';",
      '-- pgq-audit-ignore-next-line -- no rule named',
      "SET app.tenant = '3';",
      '-- pgq-audit-ignore-line no-session-tenant-setting -- not a directive we have',
      "SET app.tenant = '4';",
      '-- a comment that mentions pgq-audit-ignore-next-line in prose is not a directive',
      '',
    ].join('\n'),
  });
  const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 1);
  const [result] = parseJson(run.stdout);
  assert.deepEqual(summary(result.messages), [
    'pgq/invalid-suppression@1',
    'pgq/no-session-tenant-setting@2',
    'pgq/invalid-suppression@3',
    'pgq/no-session-tenant-setting@4',
    'pgq/invalid-suppression@5',
    'pgq/no-session-tenant-setting@6',
    'pgq/invalid-suppression@7',
    'pgq/no-session-tenant-setting@8',
  ]);
  const invalid = result.messages.filter((m) => m.ruleId === 'pgq/invalid-suppression');
  assert.ok(invalid.every((m) => m.severity === 2));
  assert.match(invalid[0].message, /has no reason, so it suppresses nothing/);
  assert.match(invalid[1].message, /Unknown rule 'no-session-tenant-settings'.*Valid rules: no-session-tenant-setting/);
  assert.match(invalid[2].message, /names no rule/);
  assert.match(invalid[3].message, /Unknown directive 'pgq-audit-ignore-line'/);
  assert.deepEqual([invalid[0].column, invalid[0].endLine, invalid[0].endColumn], [1, 1, 56], 'the whole comment');
});

test('a suppression of a rule that is off is not reported as unused', () => {
  const dir = project({ 'a.sql': "-- pgq-audit-ignore-next-line no-session-tenant-setting -- legacy\nSET app.tenant = '1';\n" });
  const run = runCli(['scan', '.', '--rule', 'no-session-tenant-setting:off', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 0);
  assert.deepEqual(parseJson(run.stdout)[0].messages, []);
});

// The TypeScript and Python front ends collect their comments with the same
// function (markers // and #); the suppression step is the same for every language.
for (const [language, marker, ext] of [
  ['python', '#', '.py'],
  ['typescript', '//', '.ts'],
] as const) {
  test(`${language}: '${marker} pgq-audit-ignore-next-line' comments suppress, and are checked, the same way`, () => {
    const text = [
      `run()  ${marker} pgq-audit-ignore-next-line no-session-tenant-setting -- the worker owns this connection`,
      'leak(1)',
      `${marker} pgq-audit-ignore-next-line no-session-tenant-setting`,
      'leak(2)',
      `${marker} pgq-audit-ignore-next-line no-session-tenant-setting -- nothing below`,
      'fine()',
      '',
    ].join('\n');
    const model = emptyFileModel(`/x/job${ext}`, language as Language, text);
    model.comments = collectLineComments(text, marker);
    const finding = (line: number): Finding => ({ ruleId: 'no-session-tenant-setting', severity: 2, message: 'leak', span: { start: 0, end: 0 }, line, column: 1, endLine: line, endColumn: 8 });
    const result: FileResult = { filePath: model.file, messages: [finding(2), finding(4)], errorCount: 2, warningCount: 0 };
    applySuppressions(result, readDirectives(model), activeRules());
    assert.deepEqual(result.messages.map((m) => `${m.ruleId}@${m.line}`), [
      'invalid-suppression@3',
      'no-session-tenant-setting@4',
      'unused-suppression@5',
    ]);
    assert.deepEqual([result.errorCount, result.warningCount], [2, 1]);
  });
}

// Once the front ends are registered, the same through the real CLI: whatever
// a rule reports on the sample, the directive removes the finding on its line.
const samples = {
  '.py': {
    marker: '#',
    text: [
      'from psycopg_pool import ConnectionPool',
      'pool = ConnectionPool("postgresql://")',
      'def job(tenant):',
      '    with pool.connection() as conn:',
      '        conn.execute("select set_config(\'app.tenant\', %s, false)", [tenant])',
      '        conn.execute("select set_config(\'app.tenant\', %s, false)", [tenant])',
      '',
    ],
  },
  '.ts': {
    marker: '//',
    text: [
      "import pg from 'pg';",
      'const pool = new pg.Pool();',
      'export async function job(tenant: string) {',
      '  const client = await pool.connect();',
      "  await client.query(\"select set_config('app.tenant', $1, false)\", [tenant]);",
      "  await client.query(\"select set_config('app.tenant', $1, false)\", [tenant]);",
      '  client.release();',
      '}',
      '',
    ],
  },
};
for (const [ext, sample] of Object.entries(samples)) {
  test(`CLI on a ${ext} file: the directive hides the finding below it`, () => {
    const plain = project({ [`job${ext}`]: sample.text.join('\n') });
    const before = parseJson(runCli(['scan', '.', '--format', 'json'], { cwd: plain }).stdout)[0].messages;
    const lines = before.filter((m) => m.ruleId === 'pgq/no-session-tenant-setting').map((m) => m.line);
    assert.ok(lines.includes(5) && lines.includes(6), `the ${ext} front end reports both session writes: ${summary(before)}`);
    const text = [...sample.text];
    text.splice(4, 0, `  ${sample.marker} pgq-audit-ignore-next-line no-session-tenant-setting -- test`);
    const dir = project({ [`job${ext}`]: text.join('\n') });
    const after = parseJson(runCli(['scan', '.', '--format', 'json'], { cwd: dir }).stdout)[0].messages;
    assert.deepEqual(after.filter((m) => m.ruleId === 'pgq/no-session-tenant-setting').map((m) => m.line), [7]);
    assert.deepEqual(after.filter((m) => String(m.ruleId).endsWith('-suppression')), []);
  });
}

test('a tall stack of directives all aim at the first line below it (resolved in one pass)', () => {
  const stack = Array.from({ length: 20_000 }, () => '-- pgq-audit-ignore-next-line no-session-tenant-setting -- stacked');
  const text = [...stack, "SET app.tenant = '1';", ''].join('\n');
  const model = emptyFileModel('/x/a.sql', 'sql', text);
  model.comments = collectLineComments(text, '--');
  const directives = readDirectives(model)!.directives;
  assert.equal(directives.length, 20_000);
  assert.ok(directives.every((d) => d.targetLine === 20_001));
});
