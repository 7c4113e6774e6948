// The prefilter alone, on host code shaped like real repositories rather than the bench tree: long
// stretches without ';' (Python, comments, JSX), and the words the triggers start with (update, set,
// select, delete) used as ordinary code words. Prints MB/s of the one-automaton matcher (before literal
// anchoring) and of the prefilter's matcher, and checks that both give the same verdict on every file.
//
//   node --import tsx bench/prefilter-bench.ts [--mb 40]
import { parseArgs } from 'node:util';
import { activeRules } from '../src/engine/rule-config.ts';
import type { Language } from '../src/model/index.ts';
import { DIRECTIVE_TRIGGER, singlePattern, triggerPattern, type Trigger } from '../src/scan/prefilter.ts';
import { realisticSources } from './realistic-text.ts';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '40' } } });
const targetBytes = Number(values.mb) * 1e6;

const triggersOf = (language: Language): Trigger[] => [
  ...new Set(activeRules().flatMap(({ rule }) => (rule.languages.includes(language) ? rule.triggers.map((t) => (typeof t === 'string' ? t.toLowerCase() : t)) : []))),
  DIRECTIVE_TRIGGER,
];

for (const language of ['typescript', 'python'] as const) {
  const files = realisticSources(language, targetBytes, 1);
  const bytes = files.reduce((total, file) => total + file.length, 0);
  const triggers = triggersOf(language);
  const verdicts: boolean[][] = [];
  for (const [name, matcher] of [
    ['one automaton (before)', singlePattern(triggers)],
    ['anchored on literals (after)', triggerPattern(triggers)],
  ] as const) {
    const runs: number[] = [];
    let passed: boolean[] = [];
    for (let run = 0; run < 3; run++) {
      const start = performance.now();
      passed = files.map((file) => matcher.test(file));
      runs.push(performance.now() - start);
    }
    verdicts.push(passed);
    const best = Math.min(...runs);
    const share = passed.filter(Boolean).length / files.length;
    console.log(`${language.padEnd(10)} ${name.padEnd(30)} ${(bytes / 1e6 / (best / 1000)).toFixed(0).padStart(5)} MB/s  (${(bytes / 1e6).toFixed(1)} MB, ${files.length} files, ${(share * 100).toFixed(0)}% pass)`);
  }
  const differing = verdicts[0].filter((v, i) => v !== verdicts[1][i]).length;
  if (differing > 0) throw new Error(`${language}: ${differing} files get another verdict`);
}
