// Every queue fixture: bad files are flagged exactly on their `expect:`
// lines (by any rule), good files — among them the designs modelled on
// pg-boss, graphile-worker, River, Oban, Que and procrastinate — by none.
// Fixture projects are scanned as a whole: their findings need several files.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { frontEndFor } from '../../src/languages/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { actualOf, expectationsOf } from '../helpers/expectations.ts';

const fixtures = join(import.meta.dirname, '../../fixtures');
const root = join(fixtures, 'queue');
const show = (messages: { line: number; column: number; ruleId: string | null; message: string }[]) =>
  messages.map((m) => `${m.line}:${m.column} ${m.ruleId} ${m.message}`).join('\n');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

for (const dir of readdirSync(root)) {
  for (const file of filesUnder(join(root, dir))) {
    const name = relative(root, file);
    test(`fixtures/queue/${name}`, async () => {
      const expected = expectationsOf(readFileSync(file, 'utf8'));
      const base = file.slice(file.lastIndexOf('/') + 1);
      if (dir === 'good' || base.startsWith('good')) assert.deepEqual(expected, [], 'good fixtures expect nothing');
      else if (base.startsWith('bad')) assert.ok(expected.some((e) => e.ruleId === dir), `${name} must expect at least one ${dir} finding`);
      const { results } = await scan({ paths: [file] });
      assert.equal(results.length, 1);
      assert.deepEqual(actualOf(results[0]), expected, show(results[0].messages));
    });
  }
}

const projects = join(fixtures, 'projects');
for (const project of readdirSync(projects)) {
  const dir = join(projects, project);
  const files = filesUnder(dir);
  test(`fixtures/projects/${project}`, async () => {
    const { results } = await scan({ paths: [dir] });
    const scanned = new Set(results.map((r) => r.filePath));
    const sources = files.filter((f) => frontEndFor(f));
    assert.ok(sources.length > 0, 'a fixture project has source files');
    for (const file of sources) assert.ok(scanned.has(file), `${file} was not scanned`);
    for (const result of results) {
      const expected = expectationsOf(readFileSync(result.filePath, 'utf8'));
      if (project.endsWith('-good')) assert.deepEqual(expected, [], 'good projects expect nothing');
      assert.deepEqual(actualOf(result), expected, `${relative(dir, result.filePath)}\n${show(result.messages)}`);
    }
  });
}
