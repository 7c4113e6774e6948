// The prefilter never drops a file some trigger matches: for every alternative of every trigger of
// every rule (and the suppression comment), texts made to match it, in a file of code that matches no
// trigger, pass the prefilter's matcher, in any letter case, as text and as bytes. The texts are built
// from each alternative's own regex (its shortest match, and a long one with every gap filled), and
// checked against V8 first, so a trigger added later is covered without a new sample here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { triggersFor, type Language } from '../../src/model/index.ts';
import { DIRECTIVE_TRIGGER, triggerPattern, triggerRegExp, type Trigger } from '../../src/scan/prefilter.ts';
import { leadingLiterals, splitAlternatives } from '../../src/scan/literal-anchor.ts';

const triggersOf = (language: Language): Trigger[] => [
  ...new Set(activeRules().flatMap(({ rule }) => (rule.languages.includes(language) ? triggersFor(rule.triggers, language).map((t) => (typeof t === 'string' ? t.toLowerCase() : t)) : []))),
  DIRECTIVE_TRIGGER,
];

/** Code that holds no trigger, around each sample. */
const BEFORE = 'const total = items.length;\nfunction add(a, b) {\n  return a + b;\n}\n// ';
const AFTER = '\nexport default add;\n';

/** Candidate characters for a class or an escape, in order of preference. */
const CANDIDATES = [' ', 'x', 'a', '1', '_', '.', '(', ')', "'", '"', '`', '+', '=', '\n', '\t'];

/** One text the regex source matches: option `option` of each group (its last if it has fewer), the fewest repeats or the most. */
function sample(source: string, option: number, repeats: 'fewest' | 'most'): string {
  let at = 0;
  const alternation = (): string[] => {
    const options = [sequence()];
    while (source[at] === '|') {
      at++;
      options.push(sequence());
    }
    return options;
  };
  const sequence = (): string => {
    let out = '';
    while (at < source.length && source[at] !== '|' && source[at] !== ')') {
      const item = atom();
      let [min, max] = [1, 1];
      const c = source[at];
      if (c === '*') [min, max] = [0, 3];
      else if (c === '+') [min, max] = [1, 3];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(at))!;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[2] === '' ? min + 3 : Number(m[2]);
        at += m[0].length - 1;
      }
      if ('*+?{'.includes(c)) {
        at++;
        if (source[at] === '?') at++;
      }
      out += item.repeat(repeats === 'fewest' ? min : max);
    }
    return out;
  };
  const one = (atomSource: string): string => {
    const single = new RegExp(`^(?:${atomSource})$`, 'i');
    const found = CANDIDATES.find((c) => single.test(c)) ?? [...Array(128).keys()].map((code) => String.fromCharCode(code)).find((c) => single.test(c));
    assert.ok(found !== undefined, `no character for ${atomSource}`);
    return found;
  };
  const atom = (): string => {
    const c = source[at];
    if (c === '(') {
      at += source.startsWith('(?:', at) ? 3 : 1;
      const options = alternation();
      assert.equal(source[at], ')');
      at++;
      return options[Math.min(option, options.length - 1)];
    }
    if (c === '[') {
      let end = at + 1;
      if (source[end] === '^') end++;
      if (source[end] === ']') end++;
      while (source[end] !== ']') end += source[end] === '\\' ? 2 : 1;
      const cls = source.slice(at, end + 1);
      at = end + 1;
      return one(cls);
    }
    if (c === '\\') {
      const e = source[at + 1];
      const length = e === 'x' ? 4 : 2;
      const escape = source.slice(at, at + length);
      at += length;
      return one(escape);
    }
    at++;
    return c === '.' ? 'x' : c;
  };
  const [first] = alternation();
  assert.equal(at, source.length, `sample read all of /${source}/`);
  return first;
}

/** The number of options of each group of a regex source. */
function splitGroups(source: string): number[] {
  const counts: number[] = [];
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === '[') while (source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
    else if (source[i] === '(') {
      let depth = 0;
      let options = 1;
      for (let j = i; j < source.length; j++) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') while (source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
        else if (source[j] === '(') depth++;
        else if (source[j] === ')' && --depth === 0) break;
        else if (source[j] === '|' && depth === 1) options++;
      }
      counts.push(options);
    }
  }
  return counts;
}

/** The source of each top-level alternative of a trigger, as the prefilter reads it. */
function alternativesOf(trigger: Trigger): string[] {
  return typeof trigger === 'string' ? [triggerRegExp([trigger]).source] : splitAlternatives(trigger.source);
}

for (const language of ['typescript', 'python', 'sql'] as const) {
  test(`every trigger alternative (${language}) passes the prefilter alone, in a file of code that holds no trigger`, () => {
    const triggers = triggersOf(language);
    const matcher = triggerPattern(triggers);
    const all = triggerRegExp(triggers);
    assert.equal(all.test(BEFORE + AFTER), false, 'the surrounding code holds no trigger');
    assert.equal(matcher.test(BEFORE + AFTER), false);
    let checked = 0;
    for (const trigger of triggers) {
      const others = triggers.filter((t) => t !== trigger);
      const othersMatcher = triggerPattern(others);
      const othersRegex = triggerRegExp(others);
      for (const alternative of alternativesOf(trigger)) {
        const own = new RegExp(alternative, 'i');
        // Each option of each group is taken in some sample: the k-th of every group in the k-th.
        const widest = Math.max(1, ...splitGroups(alternative));
        for (const [option, repeats] of Array.from({ length: widest }, (_, k) => [[k, 'fewest'], [k, 'most']] as const).flat()) {
          const text = sample(alternative, option, repeats);
          assert.ok(own.test(text), `the sample ${JSON.stringify(text)} matches /${alternative}/`);
          for (const variant of [text, text.toUpperCase(), text.toLowerCase()]) {
            if (!own.test(variant)) continue;
            const file = BEFORE + variant + AFTER;
            assert.equal(matcher.test(file), true, `${String(trigger)}: ${JSON.stringify(variant)} passes`);
            assert.equal(matcher.test(Buffer.from(file, 'latin1')), true, `${String(trigger)}: bytes of ${JSON.stringify(variant)} pass`);
            // Without the trigger: the verdict of the other triggers' regex, so a file that only this one matches is dropped.
            assert.equal(othersMatcher.test(file), othersRegex.test(file), `without ${String(trigger)}: ${JSON.stringify(variant)}`);
            checked++;
          }
        }
      }
    }
    assert.ok(checked > 40, `${checked} samples`);
  });
}

test('literal anchors: the literals every match of an alternative begins with, or none when a match may begin otherwise', () => {
  assert.deepEqual(leadingLiterals(String.raw`update(?:\s|\\[nrt])+[^;]{1,160}?set`), ['update']);
  assert.deepEqual(leadingLiterals(String.raw`(?:select|call|perform)(?:\s|\\[nrt])+`), ['select', 'call', 'perform']);
  assert.deepEqual(leadingLiterals(String.raw`\.update\(\s*\{`), ['.update(']);
  assert.deepEqual(leadingLiterals('pgq(-audit-|\\/)'), ['pgq-audit-', 'pgq/']);
  assert.deepEqual(leadingLiterals('SET_config'), ['set_config'], 'lower case: the scanner folds letters');
  // A quantifier makes its unit optional or repeated: the literal stops before it.
  assert.deepEqual(leadingLiterals('updates?x'), ['update']);
  assert.deepEqual(leadingLiterals('ab{2}c'), ['a']);
  assert.deepEqual(leadingLiterals('(?:ab|cd)?set'), undefined);
  // No literal to anchor on: a class, an escape class, a wildcard, a lookahead, an empty option.
  for (const source of ['[a-z]+set', String.raw`\sset`, '.set', '(?=x)set', '(?:|a)set', String.raw`(?:\s|\\[nrt])set`]) assert.equal(leadingLiterals(source), undefined, source);
});

test('an anchored attempt that reaches its gap bound, and text cut after the literal, give the regex verdict', () => {
  const triggers = [/update(?:\s|\\[nrt])+[^;]{1,160}?(?:\s|\\[nrt])+set\s/i, 'set local'];
  const matcher = triggerPattern(triggers);
  const regex = triggerRegExp(triggers);
  for (const gap of [1, 159, 160, 161, 400]) {
    for (const text of [`update ${'x'.repeat(gap)} set `, `UPDATE ${'x'.repeat(gap)} SET `, `update update ${'x'.repeat(gap)} set `, `upd${'update '.repeat(gap)}set `, `update ${'x'.repeat(gap)}; set `]) {
      for (const cut of [text, text.slice(0, -1), text.slice(3)]) {
        assert.equal(matcher.test(cut), regex.test(cut), JSON.stringify(cut.slice(0, 60)));
        assert.equal(matcher.test(Buffer.from(cut, 'latin1')), regex.test(cut));
      }
    }
  }
});
