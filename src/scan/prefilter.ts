// The prefilter: most files of a codebase hold no SQL, and a file that
// contains none of the textual triggers of the rules that read its language
// cannot produce a finding, so it is not parsed at all. The decision is per
// file, never per statement: a file with one trigger is parsed whole, so
// facts a finding needs from elsewhere in the file (a named query, a pool's
// config, a BEGIN) are there.
//
// Matching is one linear pass over the bytes per language: the triggers are
// compiled to one automaton (automaton.ts), never run as backtracking
// regexes, so no text can stall it. The answer is the one the case-insensitive
// regex triggerRegExp() gives on the bytes read as latin1. A trigger
// matches as a substring (not at word starts: in host code SQL keywords follow
// escapes, as in 'BEGIN;\nSET LOCAL ...'). A space in a trigger matches any run
// of whitespace and of the escapes \n \r \t written in string literals ('set '
// matches "SET\tapp.tenant" and "SET\\nLOCAL"); letters match in either case
// (ASCII only, as SQL keywords are).
import type { ActiveRule, RuleBase } from '../engine/rule-config.ts';
import { triggersFor, type Language, type TriggerText } from '../model/index.ts';
import { compileMatcher, TriggerSyntaxError, type TextMatcher } from './automaton.ts';
import { leadingLiterals, LiteralAnchoredMatcher, splitAlternatives } from './literal-anchor.ts';

/**
 * Languages whose files are SQL through and through (.sql): always parsed, so
 * a migration that does not parse is reported even where no rule has a
 * trigger. The prefilter is for host code, where most files hold no SQL.
 */
export const ALWAYS_PARSED: readonly Language[] = ['sql'];

/**
 * Always a trigger: a file with a suppression comment (pgq-audit-..., or an
 * eslint-disable naming pgq/<rule>) is parsed, so an invalid or unused
 * suppression is reported even where no rule fires.
 */
export const DIRECTIVE_TRIGGER: Trigger = /pgq(-audit-|\/)/;

/** A trigger as one language reads it (a rule's LanguageTrigger resolved by triggersFor). */
export type Trigger = TriggerText;

export interface Prefilter {
  /** True when the file must be parsed: some trigger of a rule reading `language` occurs in `text` (bytes are read as latin1). */
  (text: string | Uint8Array, language: Language): boolean;
  /** The triggers per language (regexes as their source text), for the cache key. */
  readonly triggers: ReadonlyMap<Language, readonly string[] | 'all'>;
}

/** A prefilter over the triggers of the active rules. `enabled: false` parses every file. */
export function buildPrefilter(active: readonly ActiveRule<RuleBase>[], options: { enabled?: boolean } = {}): Prefilter {
  const enabled = options.enabled ?? true;
  const triggers = new Map<Language, Trigger[] | 'all'>();
  /** Each language's triggers as text (regexes as their source): what tells two triggers apart, and keys the cache. */
  const texts = new Map<Language, string[]>();
  /** Which rule declared each trigger, to name it if the trigger is refused or does not compile. */
  const declaredBy = new Map<string, string>();
  /** A trigger's text, once per trigger object: several rules share one (a regex's String() is not free, and every scan builds a prefilter). */
  const textOf = new Map<Trigger, string>();
  for (const { rule } of active) {
    for (const language of rule.languages) {
      const known = triggers.get(language) ?? [];
      if (known === 'all') continue;
      // A rule that declares no trigger opts out of prefiltering for its languages.
      if (!enabled || rule.triggers.length === 0) {
        triggers.set(language, 'all');
        continue;
      }
      const knownTexts = texts.get(language) ?? [];
      for (const trigger of triggersFor(rule.triggers, language)) {
        let text = textOf.get(trigger);
        if (text === undefined) {
          text = typeof trigger === 'string' ? trigger.toLowerCase() : String(trigger);
          textOf.set(trigger, text);
        }
        if (!declaredBy.has(text)) declaredBy.set(text, rule.id);
        if (knownTexts.includes(text)) continue;
        knownTexts.push(text);
        known.push(typeof trigger === 'string' ? text : trigger);
      }
      triggers.set(language, known);
      texts.set(language, knownTexts);
    }
  }
  // Each language's matcher is compiled, and its triggers checked, on its first file: a scan of one
  // language, or one that takes every file from the cache, compiles and checks fewer or none.
  const patterns = new Map<Language, TextMatcher | 'all'>();
  for (const language of ALWAYS_PARSED) patterns.set(language, 'all');
  const patternOf = (language: Language): TextMatcher | 'all' => {
    let pattern = patterns.get(language);
    if (pattern === undefined) {
      const words = triggers.get(language);
      if (words !== 'all') for (const trigger of words ?? []) checkTrigger(declaredBy.get(String(trigger)) ?? '(unknown)', trigger);
      // No active rule reads this language: only suppression comments can matter.
      pattern = words === 'all' ? 'all' : compileTriggers([...(words ?? []), DIRECTIVE_TRIGGER], declaredBy);
      patterns.set(language, pattern);
    }
    return pattern;
  };
  const prefilter = ((text: string | Uint8Array, language: Language) => {
    const pattern = patternOf(language);
    return pattern === 'all' || pattern.test(text);
  }) as Prefilter;
  const described = new Map([...triggers].map(([language, words]) => [language, words === 'all' ? 'all' : texts.get(language)!] as const));
  Object.defineProperty(prefilter, 'triggers', { value: described });
  return prefilter;
}

/**
 * The matcher of one language's triggers. A regex trigger the matcher cannot take (a lookahead, a
 * word boundary) is found here, when the first file of the language is read, not when the prefilter
 * is built: a scan served from the cache compiles nothing. The error names the rule. (Every rule's
 * triggers are checked by test/scan/prefilter.test.ts, whatever a scan reads.)
 */
function compileTriggers(triggers: readonly Trigger[], declaredBy: ReadonlyMap<string, string>): TextMatcher {
  try {
    return triggerPattern(triggers);
  } catch (error) {
    if (!(error instanceof TriggerSyntaxError)) throw error;
    for (const trigger of triggers) {
      if (typeof trigger === 'string') continue;
      try {
        compileMatcher([{ source: trigger.source, flags: 'i' }]);
      } catch (own) {
        if (own instanceof TriggerSyntaxError) throw new Error(`pgq-audit: rule ${declaredBy.get(String(trigger)) ?? '(unknown)'}: trigger ${trigger}: ${own.message}`);
        throw own;
      }
    }
    throw error;
  }
}

/** Triggers checked already: several rules share one, and each scan builds a prefilter. */
const checked = new Set<string>();

/** Rejects triggers that would match everything or break the one combined regex, as far as that shows without compiling them. */
function checkTrigger(ruleId: string, trigger: Trigger): void {
  const key = typeof trigger === 'string' ? `'${trigger}` : String(trigger);
  if (checked.has(key)) return;
  checkNewTrigger(ruleId, trigger);
  checked.add(key);
}

function checkNewTrigger(ruleId: string, trigger: Trigger): void {
  // The scan looks for triggers in the bytes decoded as latin1: only ASCII matches the same there.
  if (/[^\x00-\x7f]/.test(typeof trigger === 'string' ? trigger : trigger.source)) throw new Error(`pgq-audit: rule ${ruleId}: trigger ${trigger} is not ASCII`);
  if (typeof trigger === 'string') {
    if (trigger.trim() === '') throw new Error(`pgq-audit: rule ${ruleId} declares an empty trigger`);
    return;
  }
  if (trigger.flags.replace('i', '') !== '') throw new Error(`pgq-audit: rule ${ruleId}: trigger ${trigger} may have no flag but i`);
  if (/\\[1-9k]/.test(trigger.source)) throw new Error(`pgq-audit: rule ${ruleId}: trigger ${trigger} uses a backreference`);
  if (trigger.test('')) throw new Error(`pgq-audit: rule ${ruleId}: trigger ${trigger} matches the empty text`);
}

/** Whitespace in source text, or a whitespace escape inside a string literal. */
const SPACE = String.raw`(?:\s|\\[nrt])`;

/**
 * The matcher for a list of triggers: literal text, whitespace runs for spaces, ASCII
 * case-insensitive. Linear in the text: the answer of triggerRegExp() without its backtracking.
 * Each alternative that begins with literal text is tried only where that text occurs
 * (literal-anchor.ts); the others, if any, run as one automaton.
 */
export function triggerPattern(triggers: readonly Trigger[]): TextMatcher {
  const anchored: { source: string; literals: string[] }[] = [];
  const rest: Trigger[] = [];
  for (const trigger of triggers) {
    const alternatives = typeof trigger === 'string' ? [triggerRegExp([trigger]).source] : splitAlternatives(trigger.source);
    for (const source of alternatives) {
      const literals = leadingLiterals(source);
      if (literals === undefined) rest.push(new RegExp(source, 'i'));
      else anchored.push({ source, literals });
    }
  }
  if (anchored.length === 0) return singlePattern(triggers);
  return new LiteralAnchoredMatcher(anchored, rest.length === 0 ? undefined : singlePattern(rest));
}

/** The triggers as one automaton: the matcher before literal anchoring, kept as the reference its verdicts are tested against. */
export function singlePattern(triggers: readonly Trigger[]): TextMatcher {
  const regex = triggerRegExp(triggers);
  return compileMatcher([{ source: regex.source, flags: regex.flags }]);
}

/** The triggers as one case-insensitive regex: the reference for what triggerPattern() matches. */
export function triggerRegExp(triggers: readonly Trigger[]): RegExp {
  const alternatives = triggers.map((trigger) => {
    if (typeof trigger !== 'string') return `(?:${trigger.source})`;
    const words = trigger.trim().split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
    const leading = /^\s/.test(trigger) ? SPACE : '';
    const trailing = /\s$/.test(trigger) ? SPACE : '';
    return leading + words.join(`${SPACE}+`) + trailing;
  });
  return new RegExp(alternatives.join('|'), 'i');
}
