// The SQL examples of the queue rules' pages: every ❌ block is reported by
// the page's rule (per-file and project pass, as `pgq-audit scan` runs them),
// every ✅ block by none.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/cli.ts';
import { runProject } from './support/run.ts';

const pages = ['require-claim-attempt-limit', 'require-dead-sweep', 'require-fenced-finish', 'require-lease-heartbeat', 'no-tenant-policy-on-queue'];

for (const ruleId of pages) {
  test(`docs/rules/${ruleId}.md: the SQL examples`, () => {
    const text = readFileSync(join(repoRoot, 'docs/rules', `${ruleId}.md`), 'utf8');
    const start = text.indexOf('\n## SQL\n');
    assert.ok(start >= 0, 'the page has a SQL section');
    const end = text.indexOf('\n## ', start + 1);
    const section = text.slice(start, end < 0 ? text.length : end);
    const correct = section.indexOf('### ✅ Correct');
    const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => ({ code: m[1], bad: (m.index ?? 0) < correct }));
    assert.ok(blocks.some((b) => b.bad) && blocks.some((b) => !b.bad));
    for (const block of blocks) {
      const found = runProject(ruleId, { 'example.sql': block.code });
      if (block.bad) assert.ok(found.length > 0, `not reported:\n${block.code}`);
      else assert.deepEqual(found.map((f) => f.message), [], block.code);
    }
  });
}
