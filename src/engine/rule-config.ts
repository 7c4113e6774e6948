// Which rules run, at which severity, with which options. Decided on the rules' metadata
// (rules/meta.ts): the config, the prefilter and a scan served from the cache load no rule's code.
import { ruleMeta as allRules } from '../../rules/meta.ts';
import type { Rule, RuleMeta, Severity } from '../model/rule.ts';

export interface RuleSetting {
  severity: Severity;
  options?: Record<string, unknown>;
}

export type RuleSettings = Record<string, RuleSetting | Severity>;

/** What deciding which rules run reads of a rule: its metadata and a rule alike have it. */
export type RuleBase = Pick<RuleMeta, 'id' | 'languages' | 'triggers' | 'defaultSeverity' | 'defaultOptions'>;

/** A rule that runs: the rule itself (its code) by default, or its metadata (RuleMeta). */
export interface ActiveRule<R extends RuleBase = Rule<any>> {
  rule: R;
  severity: 1 | 2;
  options: Record<string, unknown>;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const SEVERITIES: readonly Severity[] = ['off', 'warn', 'error'];

/** Parses `--rule id:severity`; throws ConfigError naming the valid values. */
export function parseRuleFlag(flag: string): [string, Severity] {
  const colon = flag.lastIndexOf(':');
  const id = (colon < 0 ? flag : flag.slice(0, colon)).replace(/^pgq\//, '');
  const severity = colon < 0 ? '' : flag.slice(colon + 1);
  checkRuleId(id);
  if (!SEVERITIES.includes(severity as Severity)) {
    throw new ConfigError(`--rule ${flag}: severity must be one of ${SEVERITIES.join(', ')}`);
  }
  return [id, severity as Severity];
}

export function checkRuleId(id: string): void {
  if (!allRules.some((r) => r.id === id)) {
    throw new ConfigError(`Unknown rule '${id}'. Valid rules: ${allRules.map((r) => r.id).join(', ')}`);
  }
}

/**
 * Every rule at its default severity, overridden by `settings`: as metadata, or as the `rules` given
 * (rules/index.ts, to run them).
 */
export function activeRules(settings?: RuleSettings): ActiveRule<RuleMeta>[];
export function activeRules<R extends RuleBase>(settings: RuleSettings | undefined, rules: readonly R[]): ActiveRule<R>[];
export function activeRules(settings: RuleSettings = {}, rules: readonly RuleBase[] = allRules): ActiveRule<RuleBase>[] {
  for (const id of Object.keys(settings)) checkRuleId(id.replace(/^pgq\//, ''));
  const active: ActiveRule<RuleBase>[] = [];
  for (const rule of rules) {
    const setting = settings[rule.id] ?? settings[`pgq/${rule.id}`];
    const normalized: RuleSetting = typeof setting === 'string' ? { severity: setting } : setting ?? { severity: rule.defaultSeverity };
    if (normalized.severity === 'off') continue;
    active.push({
      rule,
      severity: normalized.severity === 'error' ? 2 : 1,
      options: { ...rule.defaultOptions, ...(normalized.options ?? {}) },
    });
  }
  return active;
}
