// What ships must stand alone: the docs in the package (README.md and every
// Markdown file under the folders package.json ships, which `pgq-audit
// explain` prints) and the rules' messages and descriptions may not send the
// reader to DESIGN.md or to its labels F1–F11, which are not in the package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fg from 'fast-glob';
import { rules } from '../../rules/index.ts';
import { metaRules } from '../../src/suppressions/index.ts';
import { repoRoot } from '../helpers/cli.ts';

const NOT_SHIPPED = /DESIGN\.md|\bDESIGN\b|\bF(?:[1-9]|1[01])\b/;

/** The Markdown files `npm pack` puts in the package, by package.json's "files" (README.md always). */
function shippedDocs(): string[] {
  const { files } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { files: string[] };
  const patterns = files.map((entry) => (entry.endsWith('.md') ? entry : `${entry.replace(/\/$/, '')}/**/*.md`));
  return [...new Set(['README.md', ...fg.sync(patterns, { cwd: repoRoot })])].sort();
}

test('the shipped docs are found: the README, the CI guide, the guard and every rule page', () => {
  const docs = shippedDocs();
  for (const doc of ['README.md', 'docs/ci.md', 'docs/guard.md']) assert.ok(docs.includes(doc), doc);
  for (const { id } of [...rules, ...metaRules]) assert.ok(docs.includes(`docs/rules/${id}.md`), id);
});

test('no shipped doc cites DESIGN.md or an F-label', () => {
  const citations: string[] = [];
  for (const doc of shippedDocs()) {
    readFileSync(join(repoRoot, doc), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (NOT_SHIPPED.test(line)) citations.push(`${doc}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(citations, [], 'state the measured fact on the page itself');
});

test('no rule message or description cites DESIGN.md or an F-label', () => {
  const citations: string[] = [];
  for (const rule of [...rules, ...metaRules]) {
    for (const [id, text] of [['description', rule.description], ...Object.entries(rule.messages)]) {
      if (NOT_SHIPPED.test(text)) citations.push(`${rule.id} ${id}: ${text}`);
    }
  }
  assert.deepEqual(citations, []);
});

test('the check catches what it is for', () => {
  for (const text of ['Measured on PostgreSQL 17.10 (DESIGN.md F3)', 'breaks named statements (F5).', 'see F10', 'DESIGN: "a fenced finish"']) assert.match(text, NOT_SHIPPED, text);
  for (const text of ['F12 key', 'ELF1 binary', 'PostgreSQL 17.10', 'designs modelled on pg-boss']) assert.doesNotMatch(text, NOT_SHIPPED, text);
});
