// The Python examples of the rule pages: every ❌ block is reported by the
// page's rule, every ✅ block by none, and all of them parse.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { rules } from '../../rules/index.ts';
import { repoRoot } from '../helpers/cli.ts';

before(async () => {
  await loadSqlParser();
});

const docs = join(repoRoot, 'docs/rules');
const pythonRules = rules.filter((r) => r.languages.includes('python')).map((r) => r.id);

/** The `## Python` sections of a page: `## Python` and `## Python: SQLAlchemy`, `## Python: asyncpg`, ... */
function pythonSections(text: string): { title: string; section: string }[] {
  const sections: { title: string; section: string }[] = [];
  for (const match of text.matchAll(/\n## (Python[^\n]*)\n/g)) {
    const start = match.index ?? 0;
    const end = text.indexOf('\n## ', start + 1);
    sections.push({ title: match[1], section: text.slice(start, end < 0 ? text.length : end) });
  }
  return sections;
}

for (const page of readdirSync(docs).filter((f) => f.endsWith('.md'))) {
  const ruleId = page.replace(/\.md$/, '');
  const text = readFileSync(join(docs, page), 'utf8');
  for (const { title, section } of pythonSections(text)) {
    test(`docs/rules/${page}: the ${title} examples`, () => {
      assert.ok(pythonRules.includes(ruleId), `${ruleId} has a Python section but does not read Python`);
      const incorrect = section.indexOf('### ❌ Incorrect');
      const correct = section.indexOf('### ✅ Correct');
      assert.ok(incorrect >= 0 && correct > incorrect, 'a Python section has ❌ Incorrect, then ✅ Correct');
      const blocks = [...section.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => ({ code: m[1], bad: (m.index ?? 0) < correct }));
      assert.ok(blocks.some((b) => b.bad) && blocks.some((b) => !b.bad));
      const active = activeRules({ [ruleId]: 'error' }, rules).filter((a) => a.rule.id === ruleId);
      for (const block of blocks) {
        const model = pythonFrontEnd.parse(block.code, `/docs/${ruleId}.py`, {});
        assert.equal(model.fatal, undefined, block.code);
        const found = runRules(model, active).filter((f) => f.ruleId === ruleId);
        if (block.bad) assert.ok(found.length > 0, `not reported:\n${block.code}`);
        else assert.deepEqual(found.map((f) => f.message), [], block.code);
      }
    });
  }
}
