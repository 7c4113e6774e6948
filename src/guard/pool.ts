// The pool wrapper: guardPool() replaces connect() and query() on the pg.Pool
// instance itself, so the caller keeps the same object (Kysely, Drizzle and
// anything else built on a pg.Pool are guarded by passing it in). pool.query()
// checks out through this.connect(), so one checkpoint covers both.
import type { Pool, PoolClient } from 'pg';
import {
  RAW_TYPES,
  baselineFrom,
  factsFrom,
  dirtyNames,
  makePlan,
  txOpenFrom,
  valuesOf,
  type CheckPlan,
} from './check.ts';
import { resolveOptions, type GuardOptions, type ResolvedOptions, type ViolationAction } from './options.ts';
import { harmlessOn, loadProver, mayChangeCatalog, needsOf, type ConnectionFacts } from './proof.ts';
import { LeakReport, TenantLeakError, type OpenTransaction } from './report.ts';

export interface GuardStats {
  /** Checkouts that went through the guard. */
  checkouts: number;
  /** Check queries run (includes reading a new connection's values). */
  checks: number;
  /** Dirty connections found. */
  violations: number;
  /** Check queries that failed (the connection was destroyed, the checkout rejected). */
  checkErrors: number;
  /** Checkouts handed out without a check because the jobs before provably left no setting (option elide). */
  elided: number;
}

type Callback = (err: Error | undefined, client?: PoolClient, done?: (release?: unknown) => void) => void;
type Row = readonly unknown[];

interface ClientState {
  /** Normalised values at connect, one per setting. */
  baseline: string[];
  /** Whether the next checkout runs the check (the sample is drawn at release). */
  checkNext: boolean;
  /** Captured at the release that the next check looks at; formatted only in a report. */
  release: Error | undefined;
  via: 'release' | 'pool.query' | undefined;
  jobName: string | undefined;
  /** Query texts sent on the connection since its last release (or its check). */
  texts: string[];
  /** A query was sent whose text could not be read (or too many to keep): the job proves nothing. */
  unseen: boolean;
  /** Some job since the connection was last known clean may have left a setting: checks apply (sampled). */
  unproven: boolean;
  /** The next checkout skips its check because every job since the last check proved clean. */
  elided: boolean;
  /** client.query as the driver has it: the guard's own check goes through it unrecorded. */
  query: PoolClient['query'];
  /** standard_conforming_strings as the last check read it (option elide). */
  standardStrings: boolean;
  /** The pool's catalog facts with this connection's standardStrings, for the proofs; rebuilt when either changes. */
  facts: ConnectionFacts | undefined;
}

const GUARDED = Symbol.for('pgq-audit.guard.stats');
/** Texts kept per job; a job that sends more distinct texts than this is checked. */
const MAX_TEXTS_PER_JOB = 256;
const STATE = Symbol('pgq-audit.guard.client');
const NOOP = () => {};

type StatefulClient = PoolClient & { [STATE]?: ClientState; processID?: number | null };
type GuardedPool = Pool & { [GUARDED]?: GuardStats };

/** Counters of a guarded pool, or undefined for a pool guardPool() did not wrap. */
export function guardStats(pool: Pool): Readonly<GuardStats> | undefined {
  return (pool as GuardedPool)[GUARDED];
}

function assertPool(pool: unknown): asserts pool is Pool {
  const p = pool as Record<string, unknown> | null;
  if (
    !p ||
    typeof p.connect !== 'function' ||
    typeof p.query !== 'function' ||
    typeof p.on !== 'function' ||
    !('totalCount' in p)
  ) {
    throw new TypeError('pgq-audit guard: guardPool() needs a node-postgres pg.Pool (new pg.Pool(config))');
  }
}

function driverStatus(client: PoolClient): OpenTransaction | 'I' | undefined {
  const get = (client as { getTransactionStatus?: () => unknown }).getTransactionStatus;
  if (typeof get !== 'function') return undefined; // pg < 8.21: the SQL test is used
  // pg rejects a failed query on ErrorResponse, before the ReadyForQuery
  // that carries the new status: a job that releases in its catch can hand
  // back a client whose status is still the one before the error (a failed
  // COMMIT would read 'T'). Until that message is in, ask in-band instead.
  if ((client as { readyForQuery?: boolean }).readyForQuery === false) return undefined;
  const status = get.call(client);
  if (status === 'I') return 'I';
  if (status === 'T' || status === 'E') return status;
  return undefined;
}

/**
 * Guards a node-postgres pool: every checkout (pool.connect() in both forms,
 * and pool.query()) asserts that the connection carries no changed setting
 * and no open transaction, and refuses it otherwise. Returns the same pool.
 */
export function guardPool<P extends Pool>(pool: P, options: GuardOptions): P {
  const opts = resolveOptions(options);
  assertPool(pool);
  if (!opts.enabled) return pool;
  const target = pool as GuardedPool;
  if (target[GUARDED]) {
    throw new Error('pgq-audit guard: this pool is already guarded; call guardPool() once per pool');
  }
  installGuard(target, opts);
  return pool;
}

function installGuard(pool: GuardedPool, opts: ResolvedOptions): void {
  const plan: CheckPlan = makePlan(opts.settings);
  const stats: GuardStats = { checkouts: 0, checks: 0, violations: 0, checkErrors: 0, elided: 0 };
  if (opts.elide) void loadProver();
  Object.defineProperty(pool, GUARDED, { value: stats, enumerable: false });

  const originalConnect = pool.connect as unknown as (this: Pool, cb: Callback) => void;
  const originalQuery = pool.query as unknown as (this: Pool, ...args: unknown[]) => unknown;
  const rate = opts.sampleRate;
  const sample = rate >= 1 ? () => true : rate <= 0 ? () => false : () => Math.random() < rate;
  const maxDiscards = ((pool as { options?: { max?: number } }).options?.max ?? 10) + 1;
  const timeout = opts.checkTimeoutMs > 0 ? opts.checkTimeoutMs : undefined;

  // pg-pool emits 'connect' for a new client just before handing it out; its
  // first check then records the values at connect instead of judging them.
  const fresh = new WeakSet<PoolClient>();
  pool.on('connect', (client: PoolClient) => fresh.add(client));

  // The catalog facts are the database's, the same through every connection
  // of the pool: read by whichever check finds them stale, used by all.
  // Bumped when a job on this pool sent a text that may change the catalog.
  let catalogEpoch = 0;
  let catalog: { facts: ConnectionFacts; at: number; epoch: number } | undefined;

  /**
   * The check's text. With proofs on, every check reads
   * standard_conforming_strings (a routine may have changed it), and the
   * catalog facts when they are stale.
   */
  function checkSql(withTx: boolean): { text: string; factsAt: number; catalog: boolean } {
    if (!opts.elide) return { ...plan.sql(withTx, 'none'), catalog: false };
    const stale = !catalogFresh();
    return { ...plan.sql(withTx, stale ? 'all' : 'strings'), catalog: stale };
  }

  function takeFacts(state: ClientState, row: Row, sql: { factsAt: number; catalog: boolean }): void {
    if (sql.factsAt < 0) return;
    const read = factsFrom(row, sql.factsAt, sql.catalog, catalog?.facts);
    state.standardStrings = read.standardStrings;
    state.facts = undefined;
    if (sql.catalog) catalog = { facts: read, at: Date.now(), epoch: catalogEpoch };
  }

  /** The catalog facts were read, no text that may change the catalog was sent on the pool since, and they are young. */
  function catalogFresh(): boolean {
    return catalog !== undefined && catalog.epoch === catalogEpoch && Date.now() - catalog.at < opts.factsMaxAgeMs;
  }

  /** The facts a proof on this connection relies on (call only when catalogFresh()). */
  function factsOf(state: ClientState): ConnectionFacts {
    const shared = catalog!.facts;
    let facts = state.facts;
    if (!facts || facts.standardStrings !== state.standardStrings || facts.shadowedFunctions !== shared.shadowedFunctions) {
      facts = state.facts = { ...shared, standardStrings: state.standardStrings };
    }
    return facts;
  }

  // pool.query() calls this.connect() synchronously: the call site (or the
  // decision not to check next time) is passed over in this variable.
  let querySite: Error | null | undefined;

  const query = function guardedQuery(this: Pool, ...args: unknown[]) {
    querySite = sample() ? new Error('pool.query() called here') : null;
    try {
      return originalQuery.apply(this, args);
    } finally {
      querySite = undefined;
    }
  };

  const connect = function guardedConnect(this: Pool, cb?: Callback) {
    const site = querySite;
    querySite = undefined;
    if (typeof cb === 'function') {
      checkout(site, 0, cb);
      return undefined;
    }
    const P = ((pool as { Promise?: PromiseConstructor }).Promise ?? Promise) as PromiseConstructor;
    return new P<PoolClient>((resolve, reject) => {
      checkout(site, 0, (err, client) => (err ? reject(err) : resolve(client!)));
    });
  };

  Object.defineProperty(pool, 'connect', { value: connect, writable: true, configurable: true });
  Object.defineProperty(pool, 'query', { value: query, writable: true, configurable: true });

  function checkout(site: Error | null | undefined, discards: number, cb: Callback): void {
    originalConnect.call(pool, (err, poolClient) => {
      if (err || !poolClient) return cb(err ?? new Error('pg-pool returned no client'), undefined, NOOP);
      const client = poolClient as StatefulClient;
      stats.checkouts++;
      const state = client[STATE];
      if (state === undefined) return first(client, site, discards, cb, holdErrors(client));
      if (state.texts.length > 0 || state.unseen) {
        // Queries sent while the connection sat in the pool (a job that kept using it after release).
        if (state.unseen || state.texts.some(mayChangeCatalog)) catalogEpoch++;
        state.texts = [];
        state.unseen = false;
        state.unproven = true;
        state.elided = false;
        state.checkNext = site === undefined ? sample() : site !== null;
      }
      if (!state.checkNext) {
        // No query is sent: pg-pool hands the client over synchronously, and no message can arrive before the job has it.
        if (state.elided) stats.elided++;
        return handOut(client, state, site, cb, undefined);
      }
      check(client, state, site, discards, cb, holdErrors(client));
    });
  }

  // First guarded checkout of a connection: record its values at connect.
  function first(
    client: StatefulClient,
    site: Error | null | undefined,
    discards: number,
    cb: Callback,
    hold: ErrorHold,
  ): void {
    const adopted = !fresh.has(client);
    fresh.delete(client);
    const status = driverStatus(client);
    if (status === 'E') {
      return violation(client, undefined, { settings: [], transaction: 'E', settingsRead: false }, site, discards, cb, hold);
    }
    const withTx = status === undefined;
    const sql = checkSql(withTx);
    read(client, sql.text, (err, row) => {
      if (err || !row) return failed(client, err, site, discards, cb, hold, undefined);
      const baseline = baselineFrom(plan, row, adopted);
      const state: ClientState = {
        baseline,
        checkNext: true,
        release: undefined,
        via: undefined,
        jobName: undefined,
        texts: [],
        unseen: false,
        unproven: false,
        elided: false,
        query: client.query,
        standardStrings: false,
        facts: undefined,
      };
      takeFacts(state, row, sql);
      client[STATE] = state;
      record(client, state);
      const tx: OpenTransaction = withTx ? (txOpenFrom(plan, row) ? 'T' : null) : status === 'T' ? 'T' : null;
      const dirty = adopted ? dirtyNames(plan, row, baseline) : [];
      if (tx || dirty.length) {
        return violation(client, row, { settings: dirty, transaction: tx, settingsRead: true }, site, discards, cb, hold);
      }
      handOut(client, state, site, cb, hold);
    });
  }

  function check(
    client: StatefulClient,
    state: ClientState,
    site: Error | null | undefined,
    discards: number,
    cb: Callback,
    hold: ErrorHold,
  ): void {
    const status = driverStatus(client);
    if (status === 'E') {
      // A failed transaction answers every query with 25P02: nothing to read; the release that left it is in the state.
      return violation(client, undefined, { settings: [], transaction: 'E', settingsRead: false }, site, discards, cb, hold, state);
    }
    const withTx = status === undefined;
    const sql = checkSql(withTx);
    read(client, sql.text, (err, row) => {
      if (err || !row) return failed(client, err, site, discards, cb, hold, state);
      takeFacts(state, row, sql);
      const dirty = dirtyNames(plan, row, state.baseline);
      const tx: OpenTransaction = withTx ? (txOpenFrom(plan, row) ? 'T' : null) : status === 'T' ? 'T' : null;
      if (tx || dirty.length) {
        return violation(client, row, { settings: dirty, transaction: tx, settingsRead: true }, site, discards, cb, hold, state);
      }
      state.unproven = false;
      handOut(client, state, site, cb, hold);
    });
  }

  function failed(
    client: StatefulClient,
    err: Error | undefined,
    site: Error | null | undefined,
    discards: number,
    cb: Callback,
    hold: ErrorHold,
    state: ClientState | undefined,
  ): void {
    // A failed transaction answers the check with 25P02 (a connection that died meanwhile is not that).
    if ((err as { code?: string } | undefined)?.code === '25P02' && !hold.error) {
      return violation(client, undefined, { settings: [], transaction: 'E', settingsRead: false }, site, discards, cb, hold, state);
    }
    stats.checkErrors++;
    const error = err ?? new Error('pgq-audit guard: the check query returned no row');
    destroy(client, error);
    cb(error, undefined, NOOP);
  }

  function violation(
    client: StatefulClient,
    row: Row | undefined,
    found: { settings: string[]; transaction: OpenTransaction; settingsRead: boolean },
    site: Error | null | undefined,
    discards: number,
    cb: Callback,
    hold: ErrorHold,
    state?: ClientState,
  ): void {
    stats.violations++;
    const report = new LeakReport({
      ...found,
      values: opts.includeValues && row ? valuesOf(plan, row, found.settings) : undefined,
      release: state?.release,
      releasedVia: state?.via,
      jobName: state?.jobName,
      backendPid: client.processID ?? undefined,
    });
    decide(report, (decideErr, action) => {
      if (decideErr || !action) {
        destroy(client, decideErr ?? new Error('no action'));
        return cb(decideErr, undefined, NOOP);
      }
      if (opts.onReport) {
        try {
          opts.onReport(report, action);
        } catch (reportErr) {
          destroy(client, reportErr as Error);
          return cb(reportErr as Error, undefined, NOOP);
        }
      }
      if (action === 'keep') {
        // Observe-only: the connection goes out dirty, and is checked again
        // next time. A new connection whose values could not be read (failed
        // transaction left by onConnect) has no baseline and is refused.
        const kept = client[STATE] ?? state;
        if (kept) return handOut(client, kept, site, cb, hold);
      }
      const error = new TenantLeakError(report);
      destroy(client, error);
      if (action === 'discard' && discards + 1 < maxDiscards) return checkout(site, discards + 1, cb);
      cb(error, undefined, NOOP);
    });
  }

  function decide(report: LeakReport, done: (err: Error | undefined, action?: ViolationAction) => void): void {
    const handler = opts.onViolation;
    if (handler === 'throw' || handler === 'discard') return done(undefined, handler);
    const accept = (value: unknown) => {
      if (value === undefined) return done(undefined, 'discard');
      if (value === 'throw' || value === 'discard' || value === 'keep') return done(undefined, value);
      done(
        new TypeError(
          `pgq-audit guard: onViolation returned ${JSON.stringify(value)}; valid values: 'throw', 'discard', 'keep' or nothing (= 'discard')`,
        ),
      );
    };
    let result: unknown;
    try {
      result = handler(report);
    } catch (err) {
      return done(err as Error);
    }
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(accept, (err: Error) => done(err));
    } else {
      accept(result);
    }
  }

  // release(err) makes pg-pool end the client instead of idling it.
  function destroy(client: StatefulClient, err: Error): void {
    client[STATE] = undefined;
    client.release(err);
  }

  function handOut(
    client: StatefulClient,
    state: ClientState,
    site: Error | null | undefined,
    cb: Callback,
    hold: ErrorHold | undefined,
  ): void {
    if (hold) {
      // The answer to the check and a FATAL (57P01, a restart) can share a
      // packet: pg parses the FATAL right after the answer, in the same
      // 'data' event, and emits 'error' on a client nobody else listens on
      // yet. The guard's listener stays until that event is over; a
      // connection that died in it goes back to the pool to be discarded.
      return process.nextTick(() => {
        const died = hold.error ?? ((client as { _queryable?: boolean })._queryable === false ? new Error('pgq-audit guard: the connection died before the job had it') : undefined);
        if (died) return failed(client, died, site, 0, cb, hold, state);
        client.removeListener('error', hold.listener);
        handOut(client, state, site, cb, undefined);
      });
    }
    const poolRelease = client.release;
    state.texts = [];
    state.unseen = false;
    const release = (err?: unknown) => {
      if (!err) {
        // Proven clean: no check, no stack to capture. Else draw the next checkout's sample now,
        // so the stack is captured only when a check will look at it. pool.query drew it at its call.
        if (!provenClean(client, state)) state.unproven = true;
        state.texts = [];
        state.unseen = false;
        state.elided = !state.unproven;
        const next = state.elided ? false : site === undefined ? sample() : site !== null;
        state.checkNext = next;
        if (next) {
          state.release = site ?? new Error('released here');
          state.via = site ? 'pool.query' : 'release';
          state.jobName = jobNameNow();
        } else {
          state.release = undefined;
        }
      }
      return poolRelease(err as Error | boolean | undefined);
    };
    client.release = release;
    cb(undefined, client, release);
  }

  /** The job just released sent only texts that leave no setting, and left no transaction open. */
  function provenClean(client: StatefulClient, state: ClientState): boolean {
    if (!opts.elide) return false;
    if (state.unseen) {
      catalogEpoch++;
      return false;
    }
    let clean = driverStatus(client) === 'I' && state.standardStrings && catalogFresh();
    const facts = clean ? factsOf(state) : undefined;
    for (const text of state.texts) {
      if (mayChangeCatalog(text)) catalogEpoch++;
      if (clean && !harmlessOn(needsOf(text), facts)) clean = false;
    }
    return clean;
  }

  /** Records the text of every query sent on the connection, for the proof at release. */
  function record(client: StatefulClient, state: ClientState): void {
    if (!opts.elide) return;
    const driverQuery = state.query;
    client.query = function recordedQuery(this: PoolClient, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
      if (typeof text !== 'string') state.unseen = true;
      else if (!state.texts.includes(text)) {
        if (state.texts.length >= MAX_TEXTS_PER_JOB) state.unseen = true;
        else state.texts.push(text);
      }
      return (driverQuery as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as PoolClient['query'];
  }

  function jobNameNow(): string | undefined {
    if (!opts.jobName) return undefined;
    try {
      const name = opts.jobName();
      return typeof name === 'string' ? name : undefined;
    } catch {
      return undefined; // naming must never break a release
    }
  }

  function read(client: StatefulClient, text: string, done: (err: Error | undefined, row?: Row) => void): void {
    // The checkout's ErrorHold listens on the client meanwhile: pg-pool removed its idle listener at checkout.
    stats.checks++;
    let finished = false;
    const finish = (err: Error | undefined, row?: Row) => {
      if (finished) return;
      finished = true;
      done(err, row);
    };
    try {
      const driverQuery = (client[STATE]?.query ?? client.query) as (this: PoolClient, ...args: unknown[]) => unknown;
      driverQuery.call(
        client,
        { text, rowMode: 'array', types: RAW_TYPES, query_timeout: timeout } as never,
        ((err: Error | undefined, res: { rows: Row[] } | undefined) => finish(err ?? undefined, res?.rows[0])) as never,
      );
    } catch (err) {
      finish(err as Error);
    }
  }
}

interface ErrorHold {
  /** The first 'error' the client emitted while the guard held it. */
  error: Error | undefined;
  listener: (err: Error) => void;
}

/**
 * Listens for 'error' on a client from before the guard sends it a query
 * until the job has it. Left in place on a client the guard destroys, so
 * that a later error of the dead connection (its socket closing) is no
 * uncaught exception either.
 */
function holdErrors(client: PoolClient): ErrorHold {
  const hold: ErrorHold = {
    error: undefined,
    listener: (err: Error) => {
      hold.error ??= err;
    },
  };
  client.on('error', hold.listener);
  return hold;
}
