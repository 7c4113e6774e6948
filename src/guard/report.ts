// What the guard tells you about a dirty connection: a report (handed to
// onReport / onViolation) and the error a refused checkout rejects with.
import { fileURLToPath } from 'node:url';

/** 'T': a transaction is open; 'E': it is open and failed; null: none. */
export type OpenTransaction = 'T' | 'E' | null;

export interface ReportInit {
  settings: string[];
  transaction: OpenTransaction;
  settingsRead: boolean;
  values: Record<string, string | null> | undefined;
  release: Error | undefined;
  releasedVia: 'release' | 'pool.query' | undefined;
  jobName: string | undefined;
  backendPid: number | undefined;
}

const GUARD_DIR = fileURLToPath(new URL('.', import.meta.url));
const GUARD_URL = new URL('.', import.meta.url).href;

function isGuardFrame(line: string): boolean {
  return line.includes(GUARD_DIR) || line.includes(GUARD_URL);
}

// Frames that are the guard or the driver, never the job that released.
function isInternalFrame(line: string): boolean {
  return (
    isGuardFrame(line) ||
    line.includes('node:internal') ||
    /[\\/]node_modules[\\/](pg|pg-pool)[\\/]/.test(line) ||
    !line.trimStart().startsWith('at ')
  );
}

/** A dirty connection found at checkout. Values only when includeValues was set. */
export class LeakReport {
  /** Settings whose value differs from the one the connection was opened with. */
  readonly settings: readonly string[];
  /** Whether a transaction was open at checkout (a COMMIT/ROLLBACK was missing before release). */
  readonly inTransaction: boolean;
  /** 'T' open, 'E' open and failed (the settings could not be read then), null none. */
  readonly transactionStatus: OpenTransaction;
  /** False when a failed transaction kept the guard from reading the settings. */
  readonly settingsRead: boolean;
  /** Current values of the dirty settings; present only with includeValues: true. */
  readonly values?: Readonly<Record<string, string | null>>;
  /** How the connection was last returned: client.release() or inside pool.query(). */
  readonly releasedVia: 'release' | 'pool.query' | undefined;
  /** What the jobName option returned at that release. */
  readonly jobName: string | undefined;
  /** The PostgreSQL backend pid, to match server logs (pg_stat_activity.pid). */
  readonly backendPid: number | undefined;
  #release: Error | undefined;
  #stack: string | undefined;

  constructor(init: ReportInit) {
    this.settings = Object.freeze([...init.settings]);
    this.transactionStatus = init.transaction;
    this.inTransaction = init.transaction !== null;
    this.settingsRead = init.settingsRead;
    if (init.values) this.values = Object.freeze({ ...init.values });
    this.releasedVia = init.releasedVia;
    this.jobName = init.jobName;
    this.backendPid = init.backendPid;
    this.#release = init.release;
  }

  /**
   * Stack of the release() (or pool.query() call) that returned the
   * connection dirty. Captured as an Error at release, formatted here on
   * first read.
   */
  get releaseStack(): string | undefined {
    if (this.#stack === undefined && this.#release) {
      // Drop the message line and the guard's own frames at the top.
      const lines = (this.#release.stack ?? '').split('\n').slice(1);
      let start = 0;
      while (start < lines.length - 1 && isGuardFrame(lines[start]!)) start++;
      this.#stack = lines.slice(start).join('\n');
      this.#release = undefined;
    }
    return this.#stack;
  }

  /** First frame of releaseStack outside the guard and the driver: the code that released. */
  get releasedAt(): string | undefined {
    const stack = this.releaseStack;
    if (!stack) return undefined;
    const lines = stack.split('\n');
    const frame = lines.find((line) => !isInternalFrame(line)) ?? lines[0];
    return frame?.trim().replace(/^at /, '');
  }

  /** One sentence per finding: what happened, and the fix. No values unless includeValues. */
  describe(): string {
    const parts: string[] = [];
    const custom = this.settings.filter((s) => s.includes('.'));
    const builtin = this.settings.filter((s) => !s.includes('.'));
    if (this.transactionStatus === 'E') {
      parts.push('a failed transaction was still open (the job released the connection without ROLLBACK)');
    } else if (this.transactionStatus === 'T') {
      parts.push('a transaction was still open (the job released the connection without COMMIT or ROLLBACK)');
    }
    if (custom.length) {
      const shown = custom.map((s) => this.#named(s)).join(', ');
      parts.push(
        this.inTransaction
          ? `${shown} ${custom.length > 1 ? 'were' : 'was'} set inside that transaction`
          : `${shown} ${custom.length > 1 ? 'were' : 'was'} still set for the session (set_config(..., false) or SET outside a transaction)`,
      );
    }
    if (builtin.length) {
      const shown = builtin.map((s) => this.#named(s)).join(', ');
      parts.push(`${shown} ${builtin.length > 1 ? 'differ' : 'differs'} from the value at connect`);
    }
    return parts.join('; ');
  }

  #named(name: string): string {
    if (!this.values) return name;
    const value = this.values[name];
    return `${name} = ${value === null || value === undefined ? 'NULL' : JSON.stringify(value)}`;
  }

  toJSON(): Record<string, unknown> {
    return {
      settings: this.settings,
      inTransaction: this.inTransaction,
      transactionStatus: this.transactionStatus,
      settingsRead: this.settingsRead,
      ...(this.values ? { values: this.values } : {}),
      releasedVia: this.releasedVia,
      jobName: this.jobName,
      releasedAt: this.releasedAt,
      releaseStack: this.releaseStack,
      backendPid: this.backendPid,
    };
  }
}

function fixFor(report: LeakReport): string {
  if (report.inTransaction) return 'end every transaction (COMMIT or ROLLBACK) before release()';
  if (report.settings.some((s) => !s.includes('.'))) {
    return 'use SET LOCAL / set_config(name, value, true) inside a transaction, or restore the value before release()';
  }
  return 'use set_config(name, value, true) inside BEGIN ... COMMIT so the setting ends with the job';
}

/** The error a refused checkout rejects with. The connection has been destroyed. */
export class TenantLeakError extends Error {
  readonly code = 'PGQ_TENANT_LEAK';
  readonly report: LeakReport;

  constructor(report: LeakReport) {
    const who = report.jobName ? `job ${JSON.stringify(report.jobName)}` : 'the previous job';
    const where = report.releasedAt
      ? ` at ${report.releasedAt}`
      : report.releaseStack === undefined
        ? ' (release site not recorded)'
        : '';
    super(
      `pgq-audit guard: refused a pooled connection${report.backendPid ? ` (backend pid ${report.backendPid})` : ''}: ` +
        `${report.describe()}. It was released dirty by ${who}${where}${report.releasedVia === 'pool.query' ? ' (pool.query)' : ''}. ` +
        `The next job would have run with that state; ${fixFor(report)}.`,
    );
    this.name = 'TenantLeakError';
    this.report = report;
  }

  get settings(): readonly string[] {
    return this.report.settings;
  }

  get inTransaction(): boolean {
    return this.report.inTransaction;
  }

  get releaseStack(): string | undefined {
    return this.report.releaseStack;
  }
}
