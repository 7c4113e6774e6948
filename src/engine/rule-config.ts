// Which rules run, at which severity, with which options.
import { rules as allRules } from '../../rules/index.ts';
import type { Rule, Severity } from '../model/index.ts';

export interface RuleSetting {
  severity: Severity;
  options?: Record<string, unknown>;
}

export type RuleSettings = Record<string, RuleSetting | Severity>;

export interface ActiveRule {
  rule: Rule<any>;
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

/** Every rule at its default severity, overridden by `settings`. */
export function activeRules(settings: RuleSettings = {}): ActiveRule[] {
  for (const id of Object.keys(settings)) checkRuleId(id.replace(/^pgq\//, ''));
  const active: ActiveRule[] = [];
  for (const rule of allRules) {
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
