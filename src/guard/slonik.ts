// The guard as a Slonik interceptor. Typed structurally: Slonik 49 needs
// Node 24, so it is not installed here and this module is untested against
// it (see docs/guard.md). An interceptor cannot swap the connection it is
// given, so the only refusal is to throw from afterPoolConnection, which
// makes Slonik destroy that connection and reject the job's connect().
import { baselineFrom, dirtyNames, makePlan, txOpenFrom, valuesOf } from './check.ts';
import { resolveOptions, type GuardOptions, type ViolationAction } from './options.ts';
import { LeakReport, TenantLeakError } from './report.ts';

/** The part of Slonik's `sql` tag the interceptor uses. */
export interface SlonikSqlTag {
  unsafe: (parts: TemplateStringsArray, ...values: never[]) => unknown;
}

/** The part of a Slonik pool connection the interceptor uses. */
export interface SlonikConnection {
  one: (query: never) => Promise<unknown>;
}

/** The part of Slonik's connection context the interceptor uses. */
export interface SlonikConnectionContext {
  readonly connectionId: string;
}

export interface SlonikGuardInterceptor {
  readonly name: string;
  afterPoolConnection: (context: SlonikConnectionContext, connection: SlonikConnection) => Promise<null>;
  beforePoolConnectionRelease: (context: SlonikConnectionContext, connection: SlonikConnection) => Promise<null>;
}

export type SlonikGuardOptions = Omit<GuardOptions, 'checkTimeoutMs'> & {
  /** Slonik's `sql` tag (import { sql } from 'slonik'); the check is built with sql.unsafe. */
  sql: SlonikSqlTag;
};

interface ConnectionState {
  baseline: string[];
  checkNext: boolean;
  release: Error | undefined;
  jobName: string | undefined;
}

// Slonik says nothing to an interceptor when it destroys a connection, so
// the per-connection state is capped instead of cleaned up.
const MAX_TRACKED = 10_000;

/**
 * A Slonik interceptor that checks every pool connection as it is handed
 * out. onViolation: 'throw' or a function returning 'throw' | 'keep'
 * ('discard' is impossible here and is treated as 'throw').
 */
export function createSlonikGuardInterceptor(options: SlonikGuardOptions): SlonikGuardInterceptor {
  const { sql, ...rest } = (options ?? {}) as SlonikGuardOptions;
  if (!sql || typeof sql.unsafe !== 'function') {
    throw new TypeError(
      `pgq-audit guard: option "sql" must be Slonik's sql tag (import { sql } from 'slonik')`,
    );
  }
  if ('checkTimeoutMs' in rest) {
    throw new TypeError(
      `pgq-audit guard: option "checkTimeoutMs" does not apply to Slonik (use Slonik's statementTimeout); valid options: sql, settings, onViolation, onReport, includeValues, sampleRate, enabled, jobName`,
    );
  }
  const opts = resolveOptions(rest, {
    allowDiscard: false,
    context: 'a Slonik interceptor can refuse a connection only by throwing',
  });
  const plan = makePlan(opts.settings);
  // Column aliases without underscores survive field-name interceptors.
  const aliased = `select ${plan.columns
    .map((column, i) => `${column} as ${i < plan.names.length ? `s${i}` : 'tx'}`)
    .join(', ')}`;
  const parts = Object.assign([aliased], { raw: [aliased] }) as unknown as TemplateStringsArray;
  const states = new Map<string, ConnectionState>();
  const rate = opts.sampleRate;
  const sample = () => rate >= 1 || (rate > 0 && Math.random() < rate);

  const read = async (connection: SlonikConnection): Promise<unknown[]> => {
    const row = (await connection.one(sql.unsafe(parts) as never)) as Record<string, unknown>;
    return [...plan.names.map((_, i) => row[`s${i}`]), row.tx];
  };

  return {
    name: 'pgq-audit/guard',
    async afterPoolConnection(context, connection) {
      if (!opts.enabled) return null;
      const known = states.get(context.connectionId);
      if (known && !known.checkNext) return null;
      const row = await read(connection);
      if (!known) {
        // First sight of this connection: these are its values at connect.
        if (states.size >= MAX_TRACKED) states.delete(states.keys().next().value!);
        states.set(context.connectionId, {
          baseline: baselineFrom(plan, row, false),
          checkNext: true,
          release: undefined,
          jobName: undefined,
        });
        return null;
      }
      const dirty = dirtyNames(plan, row, known.baseline);
      const tx = txOpenFrom(plan, row);
      if (!dirty.length && !tx) return null;
      const report = new LeakReport({
        settings: dirty,
        transaction: tx ? 'T' : null,
        settingsRead: true,
        values: opts.includeValues ? valuesOf(plan, row, dirty) : undefined,
        release: known.release,
        releasedVia: 'release',
        jobName: known.jobName,
        backendPid: undefined,
      });
      let action: ViolationAction = 'throw';
      if (typeof opts.onViolation === 'function') {
        const decided = await opts.onViolation(report);
        if (decided === 'keep') action = 'keep';
        else if (decided !== undefined && decided !== 'throw' && decided !== 'discard') {
          throw new TypeError(
            `pgq-audit guard: onViolation returned ${JSON.stringify(decided)}; valid values with Slonik: 'throw', 'keep' or nothing (= 'throw')`,
          );
        }
      }
      opts.onReport?.(report, action);
      if (action === 'keep') return null;
      states.delete(context.connectionId);
      throw new TenantLeakError(report);
    },
    async beforePoolConnectionRelease(context) {
      if (!opts.enabled) return null;
      const state = states.get(context.connectionId);
      if (!state) return null;
      state.checkNext = sample();
      state.release = state.checkNext ? new Error('released here') : undefined;
      state.jobName = state.checkNext && opts.jobName ? safeName(opts.jobName) : undefined;
      return null;
    },
  };
}

function safeName(jobName: () => string | undefined): string | undefined {
  try {
    const name = jobName();
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
