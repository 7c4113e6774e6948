// The README's rule table is generated from the rules, so it cannot drift.
// `npm run readme` rewrites it; a test fails when it is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rules } from '../../rules/index.ts';
import { packageRoot } from '../package-root.ts';

export const BEGIN = '<!-- begin rule table (generated: npm run readme) -->';
export const END = '<!-- end rule table -->';

const LANGUAGE_NAMES = { sql: 'SQL', typescript: 'TS/JS', python: 'Python' } as const;

export function ruleTable(): string {
  const rows = rules.map(
    (r) =>
      `| [\`pgq/${r.id}\`](docs/rules/${r.id}.md) | ${r.description} | ${r.defaultSeverity} | ${r.recommended ? '✅' : ''} | ${r.languages.map((l) => LANGUAGE_NAMES[l]).join(', ')} |`,
  );
  return ['| Rule | What it catches | Default | Recommended | Languages |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

export function readmeWithTable(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${BEGIN} ... ${END} markers`);
  return `${readme.slice(0, start + BEGIN.length)}\n${ruleTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const path = join(packageRoot(), 'README.md');
  writeFileSync(path, readmeWithTable(readFileSync(path, 'utf8')));
}
