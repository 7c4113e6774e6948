// The docs cannot drift from the rules: every rule has a page whose
// description matches meta, every option has a heading, code blocks parse,
// and the proofs a page names exist.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseTypeScript } from '@typescript-eslint/typescript-estree';
import { rules } from '../../rules/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { repoRoot } from '../helpers/cli.ts';

await loadSqlParser();

for (const rule of rules) {
  describe(`docs/rules/${rule.id}.md`, () => {
    const path = join(repoRoot, 'docs/rules', `${rule.id}.md`);
    const page = existsSync(path) ? readFileSync(path, 'utf8') : '';

    test('exists, is titled with the rule id and quotes its description', () => {
      assert.ok(page, `${path} is missing`);
      assert.match(page, new RegExp(`^# pgq/${rule.id}$`, 'm'));
      assert.ok(page.includes(`> ${rule.description}\n`), 'the description line matches meta');
      assert.match(rule.description, /^(Enforce|Require|Disallow) .+[^. ]$/);
    });

    test('has the sections of the template', () => {
      for (const heading of ['## What goes wrong', '## Evidence', '## How to fix', '## Options', '## When Not To Use It']) {
        assert.ok(page.includes(`${heading}\n`), `missing "${heading}"`);
      }
    });

    test('documents every option under Options', () => {
      const options = Object.keys(rule.schema.properties ?? {});
      const optionsSection = page.slice(page.indexOf('## Options'));
      for (const option of options) assert.match(optionsSection, new RegExp(`^### ${option}$`, 'm'));
      if (options.length === 0) assert.match(optionsSection, /no options/);
    });

    test('SQL, TypeScript and JSON examples parse', () => {
      const blocks = [...page.matchAll(/```(\w+)\n([\s\S]*?)```/g)];
      assert.ok(blocks.length > 0, 'a rule page has examples');
      for (const [, lang, code] of blocks) {
        if (lang === 'sql') assert.deepEqual(analyzeSql(code).errors, [], code);
        if (lang === 'json') JSON.parse(code);
        if (lang === 'ts' || lang === 'js') parseTypeScript(code, { jsx: false });
      }
    });

    test('the proofs it names exist', () => {
      for (const [proof] of page.matchAll(/test\/proofs\/[\w\-/.]+\.test\.ts/g)) {
        assert.ok(existsSync(join(repoRoot, proof)), `${proof} does not exist`);
      }
    });
  });
}

test('the README rule table is up to date (npm run readme)', async () => {
  const { readmeWithTable } = await import('../../src/docs/rule-table.ts');
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  assert.equal(readme, readmeWithTable(readme));
});

// The README's examples are what users copy: run them.
const readme = () => readFileSync(join(repoRoot, 'README.md'), 'utf8');
const block = (lang: string, marker: string) => {
  const found = [...readme().matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]).find((code) => code.includes(marker));
  assert.ok(found, `README has a ${lang} block with ${marker}`);
  return found;
};

// The README's ESLint configs run in fresh projects of each module kind: test/eslint/config-kinds.test.ts.

test("the README's config example is a valid config", async () => {
  const { mkdtempSync, writeFileSync, copyFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { runCli } = await import('../helpers/cli.ts');
  const dir = mkdtempSync(join(tmpdir(), 'pgq-readme-config-'));
  writeFileSync(join(dir, 'pgq-audit.config.json'), block('json', '"ignores"'));
  copyFileSync(join(repoRoot, 'fixtures/sql/no-session-tenant-setting/bad.sql'), join(dir, 'worker.sql'));
  const run = runCli(['scan', dir, '--format', 'json'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  assert.ok(JSON.parse(run.stdout)[0].messages.length > 0);
});
