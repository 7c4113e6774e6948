// The examples of the queue rules' pages, in every section: each ❌ block is
// reported by the page's rule (per-file and project pass, as `pgq-audit scan`
// runs them), each ✅ block by none. SQL, TypeScript and Python blocks alike.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/cli.ts';
import { runProject } from './support/run.ts';

const pages = [
  'require-claim-attempt-limit',
  'require-dead-sweep',
  'require-fenced-finish',
  'require-lease-heartbeat',
  'no-tenant-policy-on-queue',
  'no-attempts-in-rollback-scope',
  'no-side-effects-in-locking-transaction',
];
const EXTENSION: Record<string, string> = { sql: 'sql', ts: 'ts', python: 'py' };

for (const ruleId of pages) {
  const text = readFileSync(join(repoRoot, 'docs/rules', `${ruleId}.md`), 'utf8');
  const sections = text.split(/\n(?=## )/).filter((s) => s.includes('### ❌ Incorrect') && s.includes('### ✅ Correct'));
  test(`docs/rules/${ruleId}.md: every example section`, () => {
    assert.ok(sections.length > 0, 'the page has examples');
    for (const section of sections) {
      const title = section.slice(0, section.indexOf('\n'));
      const correct = section.indexOf('### ✅ Correct');
      const blocks = [...section.matchAll(/```(sql|ts|python)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2], bad: (m.index ?? 0) < correct }));
      assert.ok(blocks.some((b) => b.bad) && blocks.some((b) => !b.bad), `${title}: a bad and a good example`);
      for (const block of blocks) {
        const found = runProject(ruleId, { [`example.${EXTENSION[block.lang]}`]: block.code });
        if (block.bad) assert.ok(found.length > 0, `${title}: not reported:\n${block.code}`);
        else assert.deepEqual(found.map((f) => f.message), [], `${title}:\n${block.code}`);
      }
    }
  });
}
