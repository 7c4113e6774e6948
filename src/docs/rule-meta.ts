// rules/meta.ts is generated from the rules, so it cannot drift: `npm run rule-meta` rewrites it, and
// test/core/rule-meta.test.ts fails when it is out of date. It is what a scan reads of every rule
// without loading the rules' code (RuleMeta, src/model/rule.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rules } from '../../rules/index.ts';
import { ruleMetaOf, type Rule } from '../model/rule.ts';
import { packageRoot } from '../package-root.ts';

const HEADER = `// Generated from the rules by \`npm run rule-meta\` (src/docs/rule-meta.ts): do not edit.
// What the scan and the config read of each rule without loading its code (RuleMeta, src/model/rule.ts):
// a scan whose files all come from the cache loads no rule's code and no SQL analyzer.
// test/core/rule-meta.test.ts checks that every entry is its rule's own.
import type { RuleMeta } from '../src/model/rule.ts';

export const ruleMeta: readonly RuleMeta[] = [
`;

/** A value as TypeScript source: JSON, but regexes as literals. */
function literal(value: unknown): string {
  if (value instanceof RegExp) return String(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${literal(v)}`).join(', ')} }`;
  }
  if (typeof value === 'string') return `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
  return JSON.stringify(value);
}

/** The text of rules/meta.ts for these rules. */
export function renderRuleMeta(all: readonly Rule<any>[] = rules): string {
  const entries = all.map((rule) => {
    const fields = Object.entries(ruleMetaOf(rule)).filter(([, v]) => v !== undefined);
    return `  {\n${fields.map(([key, value]) => `    ${key}: ${literal(value)},\n`).join('')}  },\n`;
  });
  return `${HEADER}${entries.join('')}];\n`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  writeFileSync(join(packageRoot(), 'rules', 'meta.ts'), renderRuleMeta());
}
