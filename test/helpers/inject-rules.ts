// Rules a test adds for its own run: to the rules (their code) and to their metadata (rules/meta.ts),
// which decide which rules a scan runs; both are taken out again after the test.
import { rules } from '../../rules/index.ts';
import { ruleMeta } from '../../rules/meta.ts';
import { defineRule } from '../../src/model/index.ts';
import { ruleMetaOf, type Rule, type RuleMeta } from '../../src/model/rule.ts';

export function injectRules(t: { after: (fn: () => void) => void }, ...added: Rule<any>[]): void {
  const metas = ruleMeta as RuleMeta[];
  const addedMeta = added.map(ruleMetaOf);
  rules.push(...added);
  metas.push(...addedMeta);
  t.after(() => {
    for (const rule of added) rules.splice(rules.indexOf(rule), 1);
    for (const meta of addedMeta) metas.splice(metas.indexOf(meta), 1);
  });
}

/** A TS rule whose project pass only counts its runs (triggered by files that name a pool): what cache tests watch. */
export function projectPassCounter(id: string): { rule: Rule<Record<string, never>>; passes: number } {
  const counter = {
    passes: 0,
    rule: defineRule<Record<string, never>, { seen: true }>({
      id,
      description: 'Count project passes (test rule)',
      messages: { never: 'never reported' },
      defaultSeverity: 'error',
      recommended: false,
      languages: ['typescript'],
      schema: { type: 'object', properties: {}, additionalProperties: false },
      defaultOptions: {},
      triggers: ['pool'],
      check() {},
      collect: () => ({ seen: true }),
      checkProject() {
        counter.passes++;
      },
    }) as Rule<Record<string, never>>,
  };
  return counter;
}
