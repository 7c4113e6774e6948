// A folder of .py, .sql and .ts files: each language's findings come with the
// right file, line and column, through scan() and through the built CLI in
// both the stylish and the JSON format (npm test builds first).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { frontEndFor } from '../../src/languages/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';

const folder = join(repoRoot, 'fixtures/python/mixed');

interface Where {
  file: string;
  line: number;
  column: number;
  ruleId: string;
}

const expected: Where[] = [
  { file: 'schema.sql', line: 5, column: 22, ruleId: 'require-nullif-on-setting-cast' },
  { file: 'worker.py', line: 6, column: 5, ruleId: 'require-autocommit-in-reset' },
  { file: 'worker.py', line: 14, column: 30, ruleId: 'no-session-tenant-setting' },
  { file: 'handler.ts', line: 9, column: 32, ruleId: 'no-session-tenant-setting' },
];

const sortWhere = (list: Where[]) => [...list].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
const base = (path: string) => path.slice(path.lastIndexOf('/') + 1);

test('scan() reports the findings of every language at their file, line and column', async () => {
  const { results } = await scan({ paths: [folder] });
  const found = results.flatMap((r) => r.messages.map((m) => ({ file: base(r.filePath), line: m.line, column: m.column, ruleId: m.ruleId ?? 'fatal' })));
  assert.deepEqual(sortWhere(found), sortWhere(expected));
  assert.ok(frontEndFor('handler.ts'), 'the TS front end reads handler.ts');
});

test('the CLI prints them in the JSON format', () => {
  const run = runCli(['scan', '--format', 'json', folder]);
  assert.equal(run.code, 1, run.stderr);
  const results = JSON.parse(run.stdout) as { filePath: string; messages: { ruleId: string; line: number; column: number }[] }[];
  const found = results.flatMap((r) => r.messages.map((m) => ({ file: base(r.filePath), line: m.line, column: m.column, ruleId: m.ruleId.replace(/^pgq\//, '') })));
  assert.deepEqual(sortWhere(found), sortWhere(expected));
});

test('the CLI prints them in the stylish format, under each file', () => {
  const run = runCli(['scan', folder]);
  assert.equal(run.code, 1, run.stderr);
  let file = '';
  const found: Where[] = [];
  for (const line of run.stdout.split('\n')) {
    const header = /^\S.*\.(py|sql|ts)$/.exec(line.trim() === line ? line : '');
    if (header) file = base(line);
    const finding = /^\s+(\d+):(\d+)\s+error\s+.*\s+pgq\/([\w-]+)$/.exec(line);
    if (finding) found.push({ file, line: Number(finding[1]), column: Number(finding[2]), ruleId: finding[3] });
  }
  assert.deepEqual(sortWhere(found), sortWhere(expected), run.stdout);
});
