// `npx pgq-audit scan ./fixtures`, the README's first command, honours the
// fixture convention: every fixture file under fixtures/<area>/<rule>/ gets
// exactly the findings it gets scanned alone, and every folder
// fixtures/projects/<name>/ those it gets scanned as a whole
// (fixtures/pgq-audit.config.json declares them as project units). So good
// fixtures are silent in the one scan too. New fixtures are picked up: the
// units are whatever the scan reports.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { scan } from '../../src/scan/scan.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { parseJson, type JsonMessage } from '../cli/project.ts';
import { expectationsOf } from '../helpers/expectations.ts';

const fixtures = join(repoRoot, 'fixtures');
const cwd = process.cwd();

const brief = (m: Pick<JsonMessage, 'ruleId' | 'line' | 'column' | 'endLine' | 'endColumn' | 'severity' | 'message'>) =>
  `${m.line}:${m.column}-${m.endLine}:${m.endColumn} ${m.severity} ${m.ruleId?.replace(/^pgq\//, '') ?? 'null'} ${m.message}`;

/** What a fixture file is scanned with "alone": its project folder, or itself. */
function unitOf(file: string): string {
  const [area, name] = relative(fixtures, file).split(sep);
  return area === 'projects' ? join(fixtures, 'projects', name) : file;
}

const isGood = (file: string) => {
  const parts = relative(fixtures, file).split(sep);
  return parts[0] === 'projects' ? parts[1].endsWith('-good') : parts.includes('good') || parts[parts.length - 1].startsWith('good');
};

const run = runCli(['scan', fixtures, '--format', 'json'], { cwd });
assert.ok(run.code === 0 || run.code === 1, `the scan of ./fixtures failed (exit ${run.code}): ${run.stderr}`);
const whole = parseJson(run.stdout);
const units = new Map<string, string[]>();
for (const result of whole) {
  const unit = unitOf(result.filePath);
  units.set(unit, [...(units.get(unit) ?? []), result.filePath]);
}

test('the scan of ./fixtures reports on every fixture area and project', { timeout: 10_000 }, () => {
  const areas = new Set(whole.map((r) => relative(fixtures, r.filePath).split(sep)[0]));
  for (const area of ['projects', 'queue', 'sql', 'typescript', 'python']) assert.ok(areas.has(area), `no file of fixtures/${area} was scanned`);
  assert.ok(units.has(join(fixtures, 'projects', 'monorepo-services')), 'the monorepo fixture was not scanned');
});

for (const [unit, files] of [...units].sort(([a], [b]) => a.localeCompare(b))) {
  test(`${relative(fixtures, unit)}: the same findings in the scan of ./fixtures as alone`, { timeout: 60_000 }, async () => {
    const alone = await scan({ paths: [unit], cwd, concurrency: 'off' });
    const byFile = new Map(alone.results.map((r) => [r.filePath, r.messages.map(brief)]));
    for (const file of files) {
      const inWhole = whole.find((r) => r.filePath === file)!.messages.map(brief);
      assert.deepEqual(inWhole, byFile.get(file) ?? [], `${relative(fixtures, file)}: scanned with ./fixtures vs alone`);
      if (isGood(file)) assert.deepEqual(inWhole, [], `${relative(fixtures, file)} is a good fixture: it must be silent`);
    }
  });
}

// The scan's verdict on every fixture is what the fixture says it is: its `expect:` markers, rule and line.
test('every error in the scan of ./fixtures is one its file marks with expect:, and every marker is reported', { timeout: 10_000 }, () => {
  const differing: string[] = [];
  for (const result of whole) {
    const expected = expectationsOf(readFileSync(result.filePath, 'utf8')).map((e) => `${e.line} ${e.ruleId}`);
    const actual = result.messages.filter((m) => m.severity === 2).map((m) => `${m.line} ${m.ruleId?.replace(/^pgq\//, '') ?? 'fatal'}`).sort((a, b) => parseInt(a) - parseInt(b) || a.localeCompare(b));
    if (JSON.stringify(expected) !== JSON.stringify(actual)) differing.push(`${relative(fixtures, result.filePath)}: expected [${expected.join(', ')}], reported [${actual.join(', ')}]`);
  }
  assert.deepEqual(differing, []);
});
