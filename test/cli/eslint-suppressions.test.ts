// ESLint's disable comments are honoured by `pgq-audit scan` the way ESLint
// honours them, so a team running both writes one comment: every case below
// is linted by ESLint (the pgq plugin, reportUnusedDisableDirectives on) and
// scanned by pgq-audit, and the findings left must be the same; the problems
// ESLint reports about the comments (unused, unknown rule, spanning lines)
// are reported on the same lines as pgq/unused-suppression or
// pgq/invalid-suppression.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Linter } from 'eslint';
import plugin from '../../src/eslint/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { runCli } from '../helpers/cli.ts';
import { parseJson, project } from './project.ts';

const RULE = 'pgq/no-session-tenant-setting';
const LEAK = '  await client.query("select set_config(\'app.tenant\', $1, false)", [tenant]);';

/** A node-postgres job with two session writes; `lines` go where `$` marks them. */
function job(...body: string[]): string {
  return ["import pg from 'pg';", 'const pool = new pg.Pool();', 'export async function job(tenant: string) {', '  const client = await pool.connect();', ...body, '  client.release();', '}', ''].join('\n');
}

interface Outcome {
  /** `line rule` of the findings left. */
  findings: string[];
  /** Lines of the problems about the comments themselves. */
  directiveProblems: number[];
}

const linter = new Linter({ configType: 'flat' });
const config = [...plugin.configs.recommended, { linterOptions: { reportUnusedDisableDirectives: 'warn' as const } }];

function eslintOutcome(text: string): Outcome {
  const messages = linter.verify(text, config as never, 'job.ts');
  const isFinding = (m: Linter.LintMessage) => m.ruleId?.startsWith('pgq/') && !/^Definition for rule/.test(m.message);
  return {
    findings: messages.filter(isFinding).map((m) => `${m.line} ${m.ruleId}`),
    directiveProblems: messages.filter((m) => !isFinding(m)).map((m) => m.line),
  };
}

async function pgqOutcome(text: string): Promise<Outcome & { messages: { line: number; ruleId: string | null; message: string }[] }> {
  const dir = project({});
  writeFileSync(join(dir, 'job.ts'), text);
  const { results } = await scan({ paths: [dir], cwd: dir, concurrency: 'off' });
  const messages = results.flatMap((r) => r.messages);
  const meta = (id: string | null) => id === 'unused-suppression' || id === 'invalid-suppression';
  return {
    messages,
    findings: messages.filter((m) => m.ruleId && !meta(m.ruleId)).map((m) => `${m.line} pgq/${m.ruleId}`),
    directiveProblems: messages.filter((m) => meta(m.ruleId)).map((m) => m.line),
  };
}

/** `pgqProblems`: where pgq-audit's differ from ESLint's (ESLint also reports other rules' unused directives). */
const cases: { name: string; text: string; expect: Outcome; pgqProblems?: number[] }[] = [
  {
    name: 'no comment: both writes are reported',
    text: job(LEAK, LEAK),
    expect: { findings: [`5 ${RULE}`, `6 ${RULE}`], directiveProblems: [] },
  },
  {
    name: 'eslint-disable-next-line with a reason',
    text: job(`  // eslint-disable-next-line ${RULE} -- the worker owns this connection`, LEAK, LEAK),
    expect: { findings: [`7 ${RULE}`], directiveProblems: [] },
  },
  {
    name: 'eslint-disable-line, among another plugin rule',
    text: job(`${LEAK} // eslint-disable-line no-console, ${RULE}`, LEAK),
    expect: { findings: [`6 ${RULE}`], directiveProblems: [5] },
    pgqProblems: [],
  },
  {
    name: 'a block eslint-disable-next-line over two lines aims at the line after its end',
    text: job(`  /* eslint-disable-next-line`, `     ${RULE} */`, LEAK, LEAK),
    expect: { findings: [`8 ${RULE}`], directiveProblems: [] },
  },
  {
    name: 'eslint-disable ... eslint-enable of the rule',
    text: job(`  /* eslint-disable ${RULE} */`, LEAK, `  /* eslint-enable ${RULE} */`, LEAK),
    expect: { findings: [`8 ${RULE}`], directiveProblems: [] },
  },
  {
    name: 'eslint-disable of every rule, then eslint-enable of this one',
    text: job('  /* eslint-disable */', LEAK, `  /* eslint-enable ${RULE} */`, LEAK),
    expect: { findings: [`8 ${RULE}`], directiveProblems: [] },
  },
  {
    name: 'a file-wide eslint-disable without rules hides pgq/ findings too',
    text: `/* eslint-disable */\n${job(LEAK, LEAK)}`,
    expect: { findings: [], directiveProblems: [] },
  },
  {
    name: 'an eslint-disable-next-line above a line without the finding is unused',
    text: job(LEAK, `  // eslint-disable-next-line ${RULE}`, '  await client.query("select 1");'),
    expect: { findings: [`5 ${RULE}`], directiveProblems: [6] },
  },
  {
    name: 'an eslint-disable that nothing follows is unused; an eslint-enable with nothing to enable too',
    text: job(LEAK, `  /* eslint-disable ${RULE} */`, `  /* eslint-enable ${RULE} */`, `  /* eslint-enable ${RULE} */`),
    expect: { findings: [`5 ${RULE}`], directiveProblems: [6, 8] },
  },
  {
    name: 'an unknown pgq/ rule suppresses nothing and is reported',
    text: job('  // eslint-disable-next-line pgq/no-such-rule', LEAK),
    expect: { findings: [`6 ${RULE}`], directiveProblems: [5] },
  },
  {
    name: 'a pgq/ rule ESLint does not have (it reads only Python) is reported',
    text: job('  // eslint-disable-next-line pgq/require-autocommit-in-reset', LEAK),
    expect: { findings: [`6 ${RULE}`], directiveProblems: [5] },
  },
  {
    name: 'rules without a comma between them are one unknown name, as in ESLint',
    text: job(`  // eslint-disable-next-line ${RULE} pgq/no-release-in-open-transaction`, LEAK),
    expect: { findings: [`6 ${RULE}`], directiveProblems: [5] },
  },
  {
    name: 'an eslint-disable-line over several lines is ignored and reported',
    text: job(`${LEAK} /* eslint-disable-line`, `  ${RULE} */`, LEAK),
    expect: { findings: [`5 ${RULE}`, `7 ${RULE}`], directiveProblems: [5] },
  },
  {
    name: 'a line comment `// eslint-disable` is not read by ESLint; pgq-audit says so',
    text: job(`  // eslint-disable ${RULE}`, LEAK),
    expect: { findings: [`6 ${RULE}`], directiveProblems: [] },
    pgqProblems: [5],
  },
  {
    name: 'other plugins\' rules only, and prose that mentions eslint-disable, are left to ESLint',
    text: job('  // eslint-disable-next-line no-console', LEAK, '  // we do not eslint-disable anything here', LEAK),
    expect: { findings: [`6 ${RULE}`, `8 ${RULE}`], directiveProblems: [5] },
    pgqProblems: [],
  },
];

for (const c of cases) {
  test(`ESLint and pgq-audit agree: ${c.name}`, async () => {
    const eslint = eslintOutcome(c.text);
    const pgq = await pgqOutcome(c.text);
    assert.deepEqual(eslint, c.expect, `ESLint on\n${c.text}`);
    assert.deepEqual(pgq.findings, c.expect.findings, JSON.stringify(pgq.messages, null, 1));
    assert.deepEqual(pgq.directiveProblems, c.pgqProblems ?? c.expect.directiveProblems, JSON.stringify(pgq.messages, null, 1));
  });
}

test('the messages say what is wrong with the comment', async () => {
  const text = job(
    '  // eslint-disable-next-line pgq/no-such-rule',
    `  // eslint-disable ${RULE}`,
    `${LEAK} /* eslint-disable-line`,
    `  ${RULE} */`,
    `  /* eslint-disable ${RULE} */`,
    `  /* eslint-enable ${RULE} */`,
    `  /* eslint-enable ${RULE} */`,
  );
  const { messages } = await pgqOutcome(text);
  const about = (line: number) => messages.find((m) => m.line === line && m.ruleId?.endsWith('-suppression'));
  assert.match(about(5)!.message, /Unknown rule 'pgq\/no-such-rule'.*Valid rules: pgq\/no-session-tenant-setting/);
  assert.equal(about(5)!.ruleId, 'invalid-suppression');
  assert.match(about(6)!.message, /ESLint reads eslint-disable only in a block comment.*`\/\* eslint-disable pgq\/no-session-tenant-setting \*\/`/);
  assert.match(about(7)!.message, /spans several lines is ignored by ESLint/);
  assert.match(about(9)!.message, /This eslint-disable of pgq\/no-session-tenant-setting suppresses nothing/);
  assert.equal(about(9)!.ruleId, 'unused-suppression');
  assert.match(about(11)!.message, /This eslint-enable of pgq\/no-session-tenant-setting re-enables nothing/);
});

test('through the CLI: an eslint-disable-next-line of a pgq/ rule in a file without other triggers is still checked', () => {
  const dir = project({
    'job.ts': job(`  // eslint-disable-next-line ${RULE} -- reviewed`, LEAK),
    'clean.ts': `// eslint-disable-next-line ${RULE} -- the query moved away\nexport const x = 1;\n`,
  });
  const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const byFile = Object.fromEntries(parseJson(run.stdout).map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => `${m.line} ${m.ruleId}`)]));
  assert.deepEqual(byFile, { 'clean.ts': ['1 pgq/unused-suppression'], 'job.ts': [] });
});
