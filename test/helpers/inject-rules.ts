// Rules a test adds for its own run: to the rules (their code) and to their metadata (rules/meta.ts),
// which decide which rules a scan runs; both are taken out again after the test.
import { rules } from '../../rules/index.ts';
import { ruleMeta } from '../../rules/meta.ts';
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
