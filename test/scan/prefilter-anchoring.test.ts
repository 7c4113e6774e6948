// Anchoring the gapped triggers on their literals (prefilter.ts) is a speed change only: on generated
// host code and on every fixture file, per language, the prefilter's matcher gives the verdict of the
// one automaton of all triggers, and both give the verdict of the triggers as a V8 regex.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { test } from 'node:test';
import { realisticSources } from '../../bench/realistic-text.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { triggersFor, type Language } from '../../src/model/index.ts';
import { DIRECTIVE_TRIGGER, singlePattern, triggerPattern, triggerRegExp, type Trigger } from '../../src/scan/prefilter.ts';

const fixtures = join(import.meta.dirname, '../../fixtures');

const triggersOf = (language: Language): Trigger[] => [
  ...new Set(activeRules().flatMap(({ rule }) => (rule.languages.includes(language) ? triggersFor(rule.triggers, language).map((t) => (typeof t === 'string' ? t.toLowerCase() : t)) : []))),
  DIRECTIVE_TRIGGER,
];

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? fixtureFiles(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/** Each text, and its pieces cut after each `update` (where an anchored match may start or be cut off). */
function withCuts(texts: readonly string[]): string[] {
  return texts.flatMap((text) => {
    const cuts = [text];
    for (let at = text.toLowerCase().indexOf('update'); at >= 0 && cuts.length < 6; at = text.toLowerCase().indexOf('update', at + 1)) cuts.push(text.slice(at + 3), text.slice(0, at + 200));
    return cuts;
  });
}

for (const language of ['typescript', 'python'] as const) {
  test(`anchored prefilter (${language}): the verdicts of the one automaton and of the regex, on generated and fixture texts`, () => {
    const triggers = triggersOf(language);
    const anchored = triggerPattern(triggers);
    const single = singlePattern(triggers);
    const regex = triggerRegExp(triggers);
    const extensions = language === 'typescript' ? ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.jsx'] : ['.py'];
    const fixtureTexts = fixtureFiles(fixtures)
      .filter((file) => extensions.includes(extname(file)))
      .map((file) => readFileSync(file, 'latin1'));
    assert.ok(fixtureTexts.length > 10, 'the fixtures hold files of the language');
    const texts = withCuts([...realisticSources(language, 150_000, 7), ...fixtureTexts]);
    let passed = 0;
    for (const text of texts) {
      const expected = regex.test(text);
      assert.equal(single.test(text), expected, `one automaton differs on ${JSON.stringify(text.slice(0, 120))}`);
      assert.equal(anchored.test(text), expected, `anchored differs on ${JSON.stringify(text.slice(0, 120))}`);
      assert.equal(anchored.test(Buffer.from(text, 'latin1')), expected, 'bytes and text agree');
      if (expected) passed++;
    }
    // Both verdicts occur, so the comparison can fail either way.
    assert.ok(passed > 0 && passed < texts.length, `${passed} of ${texts.length} pass`);
  });
}
