// A bug of pgq-audit's own costs the findings of the rule that failed, where
// it failed, and one internal-error message — never the report. Rules that
// throw are injected into the registry for this test only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineRule, statementsOf } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { BAD_SESSION_SQL, project } from '../cli/project.ts';
import { injectRules } from '../helpers/inject-rules.ts';

const base = {
  description: 'Require nothing (test rule)',
  messages: { seen: 'Seen by {{rule}}.' },
  defaultSeverity: 'error' as const,
  recommended: false,
  languages: ['sql'] as const,
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  triggers: ['select'],
};
const boom = (where: string) => {
  throw new TypeError(`boom in ${where}`);
};

// Reports every file, then throws on a file that says "boom check".
const failingCheck = defineRule({
  ...base,
  id: 'test-failing-check',
  check({ file, report }) {
    report({ messageId: 'seen', data: { rule: 'check' }, span: { start: 0, end: 1 } });
    if (file.text.includes('boom check')) boom('check');
  },
});

// Lends nothing from a file that says "boom collect"; decides per unit, and throws on the unit of b/.
const failingProject = defineRule<Record<string, never>, { statements: number }>({
  ...base,
  id: 'test-failing-project',
  check() {},
  collect({ file }) {
    if (file.text.includes('boom collect')) boom('collect');
    return { statements: [...statementsOf(file)].length };
  },
  checkProject({ files, report }) {
    for (const { file } of files) report({ file, messageId: 'seen', data: { rule: `project over ${files.length}` }, location: { line: 1, column: 1, endLine: 1, endColumn: 2 } });
    if (files.some((f) => f.file.includes('/b/'))) boom('checkProject');
  },
});

const inject = injectRules;

const internal = (messages: { messageId?: string; message: string }[]) => messages.filter((m) => m.messageId === 'internal-error').map((m) => m.message);

test('a rule that throws on one file loses its findings on that file only; every other rule still reports there', { timeout: 30_000 }, async (t) => {
  inject(t, failingCheck);
  const dir = project({ 'ok.sql': BAD_SESSION_SQL, 'boom.sql': `-- boom check\n${BAD_SESSION_SQL}` });
  // In-process: worker threads load the registry afresh, without the injected rule (they run the same runRules).
  const { results } = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  const [bad, ok] = results;
  assert.ok(bad.filePath.endsWith('boom.sql'));
  const session = (r: typeof ok) => r.messages.filter((m) => m.ruleId === 'no-session-tenant-setting').map((m) => m.line - (r === bad ? 1 : 0));
  assert.ok(session(ok).length > 0);
  assert.deepEqual(session(bad), session(ok), 'the other rules report on the failing file as before');
  assert.deepEqual(ok.messages.filter((m) => m.ruleId === 'test-failing-check').length, 1);
  assert.equal(bad.messages.filter((m) => m.ruleId === 'test-failing-check').length, 0, 'what the failing rule reported before it threw is dropped');
  const errors = internal(bad.messages);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^Internal error: rule 'test-failing-check' failed on this file \(TypeError: boom in check, at .+\), so its findings there are missing/);
  assert.equal(bad.messages.find((m) => m.messageId === 'internal-error')!.severity, 2);
  assert.deepEqual(internal(ok.messages), []);
});

test('a cross-file rule that throws on one unit loses that unit only; a file it cannot read lends nothing', { timeout: 30_000 }, async (t) => {
  inject(t, failingProject);
  const dir = project({
    'a/package.json': '{"name": "a"}',
    'a/one.sql': 'select 1;\n',
    'a/two.sql': '-- boom collect\nselect 2;\n',
    'b/package.json': '{"name": "b"}',
    'b/three.sql': 'select 3;\n',
    'b/four.sql': 'select 4;\n',
    'c/package.json': '{"name": "c"}',
    'c/five.sql': BAD_SESSION_SQL,
  });
  const result = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  const byName = Object.fromEntries(result.results.map((r) => [r.filePath.slice(dir.length + 1), r.messages]));
  const seen = (name: string) => byName[name].filter((m) => m.ruleId === 'test-failing-project').map((m) => m.message);
  // Unit a: one.sql is decided with the facts a can lend; two.sql could not be read, and says so once.
  assert.deepEqual(seen('a/one.sql'), ['Seen by project over 1.']);
  assert.deepEqual(seen('a/two.sql'), []);
  assert.equal(internal(byName['a/two.sql']).length, 1);
  assert.match(internal(byName['a/two.sql'])[0], /rule 'test-failing-project' failed reading this file for the cross-file pass \(TypeError: boom in collect/);
  // Unit b: the rule threw there, so none of its findings in b, and one message on b's first file.
  assert.deepEqual([...seen('b/four.sql'), ...seen('b/three.sql')], []);
  assert.equal(internal(byName['b/four.sql']).length, 1);
  assert.match(internal(byName['b/four.sql'])[0], /rule 'test-failing-project' failed in the cross-file pass over the project unit \S*\/b \(TypeError: boom in checkProject/);
  assert.deepEqual(internal(byName['b/three.sql']), []);
  // Unit c and every other rule: as if nothing had failed.
  assert.deepEqual(seen('c/five.sql'), ['Seen by project over 1.']);
  assert.ok(byName['c/five.sql'].some((m) => m.ruleId === 'no-session-tenant-setting'));
  assert.equal(result.errorCount, result.results.reduce((n, r) => n + r.messages.filter((m) => m.severity === 2).length, 0));
});
