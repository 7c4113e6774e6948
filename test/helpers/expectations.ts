// Fixture files mark the lines a rule must flag with a trailing comment:
//   DISCARD ALL; -- expect: no-discard-all-with-prepared-statements
// (`# expect:` in Python, `// expect:` in TS/JS). One id per expected finding;
// an id may carry the column it is expected at (`rule@17`, the Python
// fixtures' form), which this line-level reading ignores.
import type { FileResult } from '../../src/engine/findings.ts';

export interface Expected {
  line: number;
  ruleId: string;
}

export function expectationsOf(text: string): Expected[] {
  const expected: Expected[] = [];
  text.split('\n').forEach((line, index) => {
    const match = /(?:--|#|\/\/)\s*expect:\s*([\w\-@, ]+)/.exec(line);
    if (!match) return;
    for (const id of match[1].split(',').map((s) => s.replace(/@\d+$/, '').trim()).filter(Boolean)) expected.push({ line: index + 1, ruleId: id });
  });
  return expected.sort(compare);
}

export function actualOf(result: FileResult): Expected[] {
  return result.messages.map((m) => ({ line: m.line, ruleId: m.ruleId ?? 'fatal' })).sort(compare);
}

function compare(a: Expected, b: Expected): number {
  return a.line - b.line || a.ruleId.localeCompare(b.ruleId);
}
