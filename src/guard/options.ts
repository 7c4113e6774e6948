// Options of the checkout guard: the public types and their validation.
// Validation runs at guardPool() time so a misconfigured guard fails at
// start-up, not on the first dirty connection in staging.
import type { LeakReport } from './report.ts';

/** What to do with a dirty connection. */
export type ViolationAction = 'throw' | 'discard' | 'keep';

/**
 * Decides what happens to one dirty connection. Return 'throw' to reject the
 * checkout, 'discard' (or nothing) to destroy it and hand out a clean one,
 * 'keep' to hand it out anyway (observe-only rollouts). May be async.
 */
export type ViolationHandler = (
  report: LeakReport,
) => ViolationAction | void | Promise<ViolationAction | void>;

export interface GuardOptions {
  /** Settings that must be as they were when the connection was opened. */
  settings: readonly string[];
  /** Default 'throw'. */
  onViolation?: 'throw' | 'discard' | ViolationHandler;
  /** Called with every violation report, whatever the action. Required with 'discard'. */
  onReport?: (report: LeakReport, action: ViolationAction) => void;
  /** Put the settings' values in reports and errors. Default false: tenant ids can be personal data. */
  includeValues?: boolean;
  /** Share of checkouts that are checked, 0..1. Default 1. New connections are always read. */
  sampleRate?: number;
  /** false returns the pool untouched. Default true. */
  enabled?: boolean;
  /** Client-side timeout of the check query in ms; the connection is destroyed when it fires. Default: none. */
  checkTimeoutMs?: number;
  /** Called at each release the next check may need; names the job in reports (e.g. from AsyncLocalStorage). */
  jobName?: () => string | undefined;
  /**
   * Skip the check after a job whose query texts provably left no setting behind: it wrote
   * settings only transaction-locally, called only built-in functions, and released outside a
   * transaction (src/guard/proof.ts). Default true; false checks every (sampled) checkout.
   */
  elide?: boolean;
  /**
   * How long (ms) the catalog facts the proofs rely on are trusted before a check re-reads them.
   * DDL sent by another session (a migration) is seen within this time. Default 1000.
   */
  factsMaxAgeMs?: number;
}

export interface ResolvedOptions {
  settings: string[];
  onViolation: 'throw' | 'discard' | ViolationHandler;
  onReport: ((report: LeakReport, action: ViolationAction) => void) | undefined;
  includeValues: boolean;
  sampleRate: number;
  enabled: boolean;
  checkTimeoutMs: number;
  jobName: (() => string | undefined) | undefined;
  elide: boolean;
  factsMaxAgeMs: number;
}

const KNOWN = new Set([
  'settings',
  'onViolation',
  'onReport',
  'includeValues',
  'sampleRate',
  'enabled',
  'checkTimeoutMs',
  'jobName',
  'elide',
  'factsMaxAgeMs',
]);

// A GUC name: identifiers separated by dots. The names are put into the
// check's SQL text, so nothing else may pass.
const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$/;

function fail(option: string, expected: string, got: unknown): never {
  let shown: string;
  if (typeof got === 'function') shown = 'a function';
  else if (typeof got === 'string') shown = JSON.stringify(got);
  else {
    try {
      shown = JSON.stringify(got) ?? String(got);
    } catch {
      shown = String(got);
    }
  }
  throw new TypeError(`pgq-audit guard: option "${option}" must be ${expected} (got ${shown})`);
}

export function resolveOptions(
  input: unknown,
  extra: { allowDiscard?: boolean; context?: string } = {},
): ResolvedOptions {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    fail('options', "an object such as { settings: ['app.tenant'] }", input);
  }
  const o = input as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) {
      throw new TypeError(
        `pgq-audit guard: unknown option "${key}" (valid options: ${[...KNOWN].join(', ')})`,
      );
    }
  }

  const settings = o.settings;
  if (!Array.isArray(settings) || settings.length === 0) {
    fail('settings', "a non-empty array of setting names such as ['app.tenant', 'search_path']", settings);
  }
  for (const name of settings) {
    if (typeof name !== 'string' || !SETTING_NAME.test(name)) {
      fail(
        'settings',
        "an array of PostgreSQL setting names (identifiers joined by dots, e.g. 'app.tenant', 'search_path', 'role')",
        name,
      );
    }
  }

  const allowDiscard = extra.allowDiscard ?? true;
  // Defaults apply to a missing option only: an explicit null is a mistake to report.
  const onViolation = o.onViolation === undefined ? 'throw' : o.onViolation;
  if (
    onViolation !== 'throw' &&
    !(onViolation === 'discard' && allowDiscard) &&
    typeof onViolation !== 'function'
  ) {
    fail(
      'onViolation',
      allowDiscard
        ? "'throw', 'discard' or a function (report) => 'throw' | 'discard' | 'keep'"
        : `'throw' or a function (report) => 'throw' | 'keep'${extra.context ? ` (${extra.context})` : ''}`,
      onViolation,
    );
  }

  const onReport = o.onReport;
  if (onReport !== undefined && typeof onReport !== 'function') {
    fail('onReport', 'a function (report, action) => void', onReport);
  }
  if (onViolation === 'discard' && onReport === undefined) {
    throw new TypeError(
      `pgq-audit guard: option "onReport" is required with onViolation: 'discard' (a discarded connection must be reported somewhere; valid values: a function (report, action) => void)`,
    );
  }

  const includeValues = o.includeValues === undefined ? false : o.includeValues;
  if (typeof includeValues !== 'boolean') fail('includeValues', 'true or false', includeValues);

  const sampleRate = o.sampleRate === undefined ? 1 : o.sampleRate;
  if (typeof sampleRate !== 'number' || !(sampleRate >= 0 && sampleRate <= 1)) {
    fail('sampleRate', 'a number from 0 to 1', sampleRate);
  }

  const enabled = o.enabled === undefined ? true : o.enabled;
  if (typeof enabled !== 'boolean') fail('enabled', 'true or false', enabled);

  const checkTimeoutMs = o.checkTimeoutMs === undefined ? 0 : o.checkTimeoutMs;
  if (typeof checkTimeoutMs !== 'number' || !Number.isInteger(checkTimeoutMs) || checkTimeoutMs < 0) {
    fail('checkTimeoutMs', 'a whole number of milliseconds >= 0 (0: no timeout)', checkTimeoutMs);
  }

  const jobName = o.jobName;
  if (jobName !== undefined && typeof jobName !== 'function') {
    fail('jobName', 'a function () => string | undefined', jobName);
  }

  const elide = o.elide === undefined ? true : o.elide;
  if (typeof elide !== 'boolean') fail('elide', 'true or false', elide);

  const factsMaxAgeMs = o.factsMaxAgeMs === undefined ? 1000 : o.factsMaxAgeMs;
  if (typeof factsMaxAgeMs !== 'number' || !Number.isInteger(factsMaxAgeMs) || factsMaxAgeMs < 0) {
    fail('factsMaxAgeMs', 'a whole number of milliseconds >= 0', factsMaxAgeMs);
  }

  return {
    settings: [...new Set(settings as string[])],
    onViolation: onViolation as ResolvedOptions['onViolation'],
    onReport: onReport as ResolvedOptions['onReport'],
    includeValues,
    sampleRate,
    enabled,
    checkTimeoutMs,
    jobName: jobName as ResolvedOptions['jobName'],
    elide,
    factsMaxAgeMs,
  };
}
