// The prefilter alone, on host code shaped like real repositories rather than the bench tree: long
// stretches without ';' (Python, comments, JSX), and the words the triggers start with (update, set,
// select, delete) used as ordinary code words. Prints MB/s of the one-automaton matcher (before literal
// anchoring) and of the prefilter's matcher, cold and warm, and checks that both give the same verdict on every file.
// With --dir (repeatable), each folder is a set too: its TS/JS and Python files as a scan discovers
// them (.sql files are always parsed, so never prefiltered), read as the scan reads them.
//
// --repeat N (default 1) builds N fresh matchers per set: cold is the best first pass of them (the
// machine is shared: the best of several is the steadier figure), warm the best later pass.
//
//   node --import tsx bench/prefilter-bench.ts [--mb 40] [--repeat 1] [--dir path ...]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { activeRules } from '../src/engine/rule-config.ts';
import { languageOf, supportedExtensions } from '../src/languages/extensions.ts';
import { triggersFor, type Language } from '../src/model/index.ts';
import { asUtf8 } from '../src/read-file.ts';
import { discoverFiles } from '../src/scan/discover.ts';
import { DIRECTIVE_TRIGGER, singlePattern, triggerPattern, type Trigger } from '../src/scan/prefilter.ts';
import { realisticSources } from './realistic-text.ts';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '40' }, dir: { type: 'string', multiple: true, default: [] }, repeat: { type: 'string', default: '1' } } });
const repeat = Math.max(1, Number(values.repeat));
const targetBytes = Number(values.mb) * 1e6;

const triggersOf = (language: Language): Trigger[] => [
  ...new Set(activeRules().flatMap(({ rule }) => (rule.languages.includes(language) ? triggersFor(rule.triggers, language).map((t) => (typeof t === 'string' ? t.toLowerCase() : t)) : []))),
  DIRECTIVE_TRIGGER,
];

type Files = Map<'typescript' | 'python', (string | Uint8Array)[]>;

const sets: { name: string; files: Files }[] = [];
if (targetBytes > 0) {
  for (const language of ['typescript', 'python'] as const) sets.push({ name: `generated ${language}`, files: new Map([[language, realisticSources(language, targetBytes, 1)]]) });
}
for (const dir of values.dir) {
  const files: Files = new Map([
    ['typescript', []],
    ['python', []],
  ]);
  for (const file of await discoverFiles([dir], { extensions: supportedExtensions() })) {
    const language = languageOf(file);
    if (language === 'typescript' || language === 'python') files.get(language)!.push(asUtf8(readFileSync(file)));
  }
  sets.push({ name: dir.replace(/\/$/, '').split('/').pop()!, files });
}

console.log(`load average ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);
for (const { name, files } of sets) {
  const all = [...files.values()].flat();
  const bytes = all.reduce((total, file) => total + file.length, 0);
  const verdicts: boolean[][] = [];
  for (const [matcherName, matcherOf] of [
    ['one automaton', singlePattern],
    ['prefilter', triggerPattern],
  ] as const) {
    // Cold: the first pass of a fresh matcher, building its automaton as a scan does; warm: the best of
    // three more. CPU time of the process, not wall time: on a loaded machine that is the steadier of the two.
    const cold: number[] = [];
    const warm: number[] = [];
    let passed: boolean[] = [];
    let nfaSteps = 0;
    for (let fresh = 0; fresh < repeat; fresh++) {
      const matchers = new Map([...files.keys()].map((language) => [language, matcherOf(triggersOf(language))]));
      for (let run = 0; run < 4; run++) {
        const start = process.cpuUsage();
        passed = [...files].flatMap(([language, texts]) => texts.map((text) => matchers.get(language)!.test(text)));
        const used = process.cpuUsage(start);
        (run === 0 ? cold : warm).push((used.user + used.system) / 1000);
        // The automaton states built by the first pass: the cold cost that does not depend on the machine.
        if (run === 0 && fresh === 0) nfaSteps = [...matchers.values()].reduce((total, matcher) => total + matcher.work.nfaSteps, 0);
      }
    }
    verdicts.push(passed);
    const rate = (ms: number) => (bytes / 1e6 / (Math.max(ms, 0.001) / 1000)).toFixed(0).padStart(5);
    const share = passed.filter(Boolean).length / Math.max(1, all.length);
    console.log(
      `${name.padEnd(32)} ${matcherName.padEnd(14)} cold ${rate(Math.min(...cold))} MB/s, warm ${rate(Math.min(...warm))} MB/s, cold NFA steps ${String(nfaSteps).padStart(9)}  (${(bytes / 1e6).toFixed(1)} MB, ${all.length} files, ${(share * 100).toFixed(0)}% pass)`,
    );
  }
  const differing = verdicts[0].filter((v, i) => v !== verdicts[1][i]).length;
  if (differing > 0) throw new Error(`${name}: ${differing} files get another verdict`);
}
console.log(`load average ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);
