// Every TS/JS example of a rule page is linted by its rule, through the ESLint
// plugin and through the CLI's scan: a block under "### ❌ Incorrect" must be
// flagged by the page's rule, every other block (under "### ✅ Correct", or in
// a section without the markers) must not be. A page's sections start at its
// "## " headings; the markers hold until the next one. A block whose lines say
// `// reported` is checked line by line: exactly those lines are flagged. A ❌
// block whose section also shows SQL (the routine a call runs) is scanned with
// that SQL beside it, as the project it describes.
//
// The pages show the job, not the file around it: an example that uses `pool`,
// `client` or `sql` without declaring them is linted with the declarations a
// worker file has (a node-postgres Pool and a checked-out client, a postgres.js
// sql), put in front of it (withSetup). Nothing else is added.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import tsParser from '@typescript-eslint/parser';
import { Linter } from 'eslint';
import { rules } from '../../rules/index.ts';
import plugin from '../../src/eslint/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { repoRoot } from '../helpers/cli.ts';

interface Example {
  code: string;
  bad: boolean;
  /** 1-based line of the block's first code line on the page. */
  line: number;
  /** The ```sql blocks of the same section and marker: files of the same project. */
  sql: string[];
}

/** The ```ts / ```js blocks of a page, each bad when it sits under "### ❌" in its section. */
export function tsExamples(page: string): Example[] {
  const examples: Example[] = [];
  let bad = false;
  let part: { sql: string[]; examples: Example[] } = { sql: [], examples: [] };
  const close = () => {
    for (const example of part.examples) if (example.bad) example.sql.push(...part.sql);
    part = { sql: [], examples: [] };
  };
  const lines = page.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('## ')) bad = false;
    else if (line.startsWith('### ❌')) bad = true;
    else if (line.startsWith('### ')) bad = false;
    if (line.startsWith('## ') || line.startsWith('### ')) close();
    const fence = /^```(ts|tsx|js|mjs|typescript|javascript|sql)\s*$/.exec(line);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `an unclosed code block at line ${i + 1}`);
    const code = lines.slice(i + 1, end).join('\n') + '\n';
    if (fence[1] === 'sql') part.sql.push(code);
    else {
      const example = { code, bad, line: i + 2, sql: [] };
      examples.push(example);
      part.examples.push(example);
    }
    i = end;
  }
  close();
  return examples;
}

test('the example reader: markers per section, both fences', () => {
  const page = ['## A', '### ❌ Incorrect', '```sql', 'create function f() ...', '```', '```ts', 'bad();', '```', '### ✅ Correct', '```js', 'good();', '```', '## B', '```ts', 'plain();', '```', ''].join('\n');
  assert.deepEqual(tsExamples(page), [
    { code: 'bad();\n', bad: true, line: 7, sql: ['create function f() ...\n'] },
    { code: 'good();\n', bad: false, line: 11, sql: [] },
    { code: 'plain();\n', bad: false, line: 15, sql: [] },
  ]);
  assert.deepEqual(reportedLines('a();\nb(); // reported: x\nc(); // not reported\n', 2), [4]);
});

/** The lines of `code` (1-based, after `offset` setup lines) marked `// reported`; none when unmarked. */
export function reportedLines(code: string, offset: number): number[] {
  return code.split('\n').flatMap((line, i) => (/\/\/\s*reported\b/.test(line) ? [i + 1 + offset] : []));
}

/** The example with declarations of the `pool`, `client` and `sql` it uses but does not declare. */
export function withSetup(code: string): string {
  const uses = (name: string) => new RegExp(`\\b${name}\\b`).test(code);
  const declares = (name: string) => new RegExp(`\\b(const|let|var|function)\\s+${name}\\b|import\\s+${name}\\b`).test(code);
  const setup: string[] = [];
  const needsClient = uses('client') && !declares('client');
  if ((uses('pool') || needsClient) && !declares('pool')) setup.push("import pg from 'pg';", 'const pool = new pg.Pool();');
  if (needsClient) setup.push('const client = await pool.connect();');
  if (uses('sql') && !declares('sql')) setup.push("import postgres from 'postgres';", 'const sql = postgres();');
  return setup.length ? `${setup.join('\n')}\n${code}` : code;
}

test('the setup: only what the example uses and does not declare', () => {
  assert.equal(withSetup('await pool.query(q);\n'), "import pg from 'pg';\nconst pool = new pg.Pool();\nawait pool.query(q);\n");
  assert.equal(withSetup('await client.query(q);\n'), "import pg from 'pg';\nconst pool = new pg.Pool();\nconst client = await pool.connect();\nawait client.query(q);\n");
  const own = "import pg from 'pg';\nconst pool = new pg.Pool();\nconst client = await pool.connect();\n";
  assert.equal(withSetup(own), own);
  assert.equal(withSetup('await sql`select 1`;\n').split('\n')[1], 'const sql = postgres();');
  assert.equal(withSetup('run();\n'), 'run();\n');
});

const linter = new Linter({ configType: 'flat' });
const dir = mkdtempSync(join(tmpdir(), 'pgq-doc-examples-'));
const tsRules = rules.filter((r) => r.languages.includes('typescript'));
let linted = 0;

for (const rule of tsRules) {
  const page = readFileSync(join(repoRoot, 'docs/rules', `${rule.id}.md`), 'utf8');
  for (const example of tsExamples(page)) {
    const where = `docs/rules/${rule.id}.md:${example.line}`;
    linted++;
    test(`${where}: a ${example.bad ? '❌ example is flagged' : 'correct example is not flagged'} by pgq/${rule.id} (ESLint and scan)`, async () => {
      const config = [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tsParser, sourceType: 'module' as const },
          plugins: { pgq: plugin },
          rules: { [`pgq/${rule.id}`]: 'error' as const },
        },
      ];
      const code = withSetup(example.code);
      const messages = linter.verify(code, config as never, 'example.ts');
      assert.deepEqual(messages.filter((m) => m.fatal), [], `${where} does not parse`);
      const byEslint = messages.filter((m) => m.ruleId === `pgq/${rule.id}`).map((m) => `${m.line}: ${m.message}`);

      // Each example is a project of its own: its TS file and the SQL its section shows.
      const project = join(dir, `${rule.id}-${example.line}`);
      mkdirSync(project);
      const file = join(project, 'example.ts');
      writeFileSync(file, code);
      example.sql.forEach((sql, i) => writeFileSync(join(project, `schema-${i}.sql`), sql));
      const only = Object.fromEntries(rules.map((r) => [r.id, r.id === rule.id ? ('error' as const) : ('off' as const)]));
      const { results } = await scan({ paths: [project], cwd: project, rules: only, concurrency: 'off' });
      const inExample = results.filter((r) => r.filePath === file);
      const byScan = inExample.flatMap((r) => r.messages).filter((m) => m.ruleId === rule.id).map((m) => `${m.line}: ${m.message}`);

      const marked = reportedLines(example.code, code.split('\n').length - example.code.split('\n').length);
      if (marked.length > 0) {
        const lineOf = (m: string) => Number(m.slice(0, m.indexOf(':')));
        assert.deepEqual([...new Set(byScan.map(lineOf))].sort((a, b) => a - b), marked, `pgq-audit scan flags exactly the lines marked "// reported" at ${where}:\n${byScan.join('\n')}`);
        if (!rule.checkProject) assert.deepEqual([...new Set(byEslint.map(lineOf))].sort((a, b) => a - b), marked, `ESLint flags exactly the lines marked "// reported" at ${where}`);
      } else if (example.bad) {
        assert.ok(byScan.length > 0, `pgq-audit scan does not flag the ❌ example at ${where}:\n${example.code}`);
        // ESLint sees one file: a finding only the project pass makes is the CLI's alone.
        if (!rule.checkProject) assert.ok(byEslint.length > 0, `ESLint does not flag the ❌ example at ${where}:\n${example.code}`);
      } else {
        assert.deepEqual(byScan, [], `pgq-audit scan flags the correct example at ${where}`);
        assert.deepEqual(byEslint, [], `ESLint flags the correct example at ${where}`);
      }
    });
  }
}

// The suppression examples (the CI guide, the suppression diagnostics' pages): the directive
// suppresses the finding below it in both tools, and neither has anything left to say.
const suppressionDocs = ['docs/ci.md', 'docs/rules/invalid-suppression.md', 'docs/rules/unused-suppression.md'];
const SUPPRESSION = /eslint-disable|pgq-audit-ignore-next-line/;
const suppressionExamples = suppressionDocs.flatMap((doc) =>
  tsExamples(readFileSync(join(repoRoot, doc), 'utf8'))
    .filter((example) => SUPPRESSION.test(example.code)) // not the ESLint config of docs/ci.md
    .map((example) => ({ doc, ...example })),
);

for (const example of suppressionExamples) {
  const where = `${example.doc}:${example.line}`;
  test(`${where}: the suppression example leaves nothing to report, in ESLint or in the scan`, async () => {
    const code = withSetup(example.code);
    const config = [...plugin.configs.recommended, { files: ['**/*.ts'], rules: Object.fromEntries(tsRules.map((r) => [`pgq/${r.id}`, 'error'])), linterOptions: { reportUnusedDisableDirectives: 'error' } }];
    assert.deepEqual(linter.verify(code, config as never, 'example.ts').map((m) => `${m.line} ${m.ruleId}: ${m.message}`), [], where);
    const file = join(dir, `suppression-${example.line}.ts`);
    writeFileSync(file, code);
    const { results } = await scan({ paths: [file], cwd: dir, concurrency: 'off' });
    assert.deepEqual(results.flatMap((r) => r.messages).map((m) => `${m.line} ${m.ruleId}: ${m.message}`), [], where);
    // Without its comment, the example's code is flagged: the directive did the work.
    const bare = code.split('\n').filter((line) => !SUPPRESSION.test(line)).join('\n');
    writeFileSync(file, bare);
    const again = await scan({ paths: [file], cwd: dir, concurrency: 'off' });
    assert.ok(again.results.flatMap((r) => r.messages).length > 0, `${where}: without the directive nothing is reported, so it shows nothing`);
  });
}

test('the suppression docs have TS examples', () => {
  assert.ok(suppressionExamples.length >= 2, `${suppressionExamples.length} examples`);
});

test('the rule pages have TS/JS examples to lint, bad and good', () => {
  const all = tsRules.flatMap((rule) => tsExamples(readFileSync(join(repoRoot, 'docs/rules', `${rule.id}.md`), 'utf8')));
  assert.equal(all.length, linted);
  assert.ok(all.some((e) => e.bad) && all.some((e) => !e.bad), `${all.length} examples`);
});
