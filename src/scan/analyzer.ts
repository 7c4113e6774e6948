// The analysis of the files a scan reads: in-process or on worker threads, in batches, within a
// per-file time budget; the main thread joins the workers once reading is over (scan.ts feeds it).
import type { analyseWithin } from './analyze-file.ts';
import type { AnalysisConfig } from './analysis.ts';
import { frontEndsMissing, loadFrontEnds } from '../languages/registry.ts';
import { AnalysisPool, autoThreads, cappedThreads, type PoolOutcome } from './pool.ts';

/** Scans up to this size are analysed in-process: starting workers costs more than it saves. */
export const IN_PROCESS_MAX_FILES = 32;
const IN_PROCESS_MAX_BYTES = 512 * 1024;
/** A file this large goes to a worker even in a small scan: it would hold up reading the rest. */
const IN_PROCESS_MAX_FILE = 256 * 1024;
/** In-process files are analysed in batches under one budget watchdog (budget.ts). */
const IN_PROCESS_BATCH = 256;
/** With workers running, the main thread takes this many at a time from their queue. */
const HELP_BATCH = 8;
/**
 * A worker takes files in batches of at most this many files or bytes: one message each way per
 * batch, and a worker that has a batch to go through does not wait on the main thread, busy reading
 * or analysing, to see that it finished a file and hand it the next.
 */
const WORKER_BATCH_FILES = 32;
const WORKER_BATCH_BYTES = 256 * 1024;
/**
 * A file whose analysis ran out of stack (1,000 nested CASE, 1,500 nested arrow functions) is
 * analysed again on a worker with this much stack: the main thread has under 1 MB.
 */
const DEEP_STACK_MB = 256;
/** --concurrency off analyses what it has read every this many files or bytes. */
const OFF_BATCH_FILES = 64;
const OFF_BATCH_BYTES = 4 * 1024 * 1024;

export interface AnalyzerOptions {
  concurrency: number | 'auto' | 'off';
  /**
   * In-process (auto on two cores), a file over IN_PROCESS_MAX_FILE still goes to a worker, started
   * for it: there the memory limit holds, and a bundle that needs gigabytes is one skipped file.
   */
  isolateLargeFiles?: boolean;
  timeBudget: number;
  memoryLimit: number;
  inProcessFiles: number;
}

type Pending = { file: string; text: string; resolve: (outcome: PoolOutcome) => void };

/**
 * Runs scanFileText in-process or on the pool. Files are held back until the
 * parse work ahead (bytes that passed the prefilter) is worth starting
 * workers for, or reading ends; from then on they queue for the workers,
 * and once reading is over the main thread takes files from the same queue.
 * In-process analysis has the same per-file time budget as the workers'.
 */
export class Analyzer {
  private pool: AnalysisPool | undefined;
  private held: Pending[] = [];
  private heldBytes = 0;
  private seen = 0;
  /** Files waiting for a worker (or, after reading, for the main thread). */
  private queue: Pending[] = [];
  /** --concurrency off: files read and not yet analysed. */
  private batch: Pending[] = [];
  private batchBytes = 0;
  private inFlight = 0;
  private readingDone = false;
  private helping = false;
  /** An in-process analysis was stopped mid-way: the main thread's parser state is not trusted again. */
  private tainted = false;
  /** In-process only: a fresh SQL parser loading after a stopped analysis (see runInProcess). */
  private reloading: Promise<void> | undefined;
  /** In-process only: front ends loading for files to analyse (languages/registry.ts). */
  private frontEndsLoading: Promise<void> | undefined;
  /** analyze-file.ts and the SQL parser, loaded for the first file this thread analyses. */
  private analysisLoaded: Promise<void> | undefined;
  private analyseWithin: typeof analyseWithin | undefined;
  private analysisFailure: string | undefined;
  /** Milliseconds this thread spent analysing (stats: while reading, that is analysis time, not reading). */
  inProcessMs = 0;

  constructor(
    private readonly config: AnalysisConfig,
    readonly options: AnalyzerOptions,
  ) {
    if (options.concurrency !== 'off' && options.concurrency !== 'auto' && !(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
      throw new RangeError(`concurrency must be a whole number of at least 1, 'auto' or 'off' (got ${options.concurrency})`);
    }
  }

  get threads(): number {
    return this.pool?.threads ?? 0;
  }

  analyze(file: string, text: string): Promise<PoolOutcome> {
    return this.analyzeOnce(file, text).then((outcome) => (outcome.kind === 'done' && outcome.analysis.stackOverflow ? this.analyzeDeep(file, text, outcome) : outcome));
  }

  private deepPool: AnalysisPool | undefined;

  /** Once more on a worker with a deep stack; what the first try gave if that fails too or cannot run. */
  private async analyzeDeep(file: string, text: string, first: PoolOutcome): Promise<PoolOutcome> {
    this.deepPool ??= new AnalysisPool({ threads: 1, timeBudget: this.options.timeBudget, memoryLimit: this.options.memoryLimit, stackSizeMb: DEEP_STACK_MB });
    try {
      const [outcome] = await this.deepPool.analyzeBatch([{ file, text }], this.config);
      return outcome;
    } catch {
      return first;
    }
  }

  private analyzeOnce(file: string, text: string): Promise<PoolOutcome> {
    this.seen++;
    if (this.options.isolateLargeFiles) {
      if (text.length > IN_PROCESS_MAX_FILE) {
        this.pool ??= this.newPool(1);
        return new Promise((resolve) => this.enqueue({ file, text, resolve }));
      }
    } else if (this.pool) return new Promise((resolve) => this.enqueue({ file, text, resolve }));
    if (!this.poolAllowed()) {
      // In-process only: analysed in batches as they are read, not held to the end. The front ends
      // and the parser are loaded on the first file to analyse (a scan served from the cache needs none).
      if (this.analysisFailure) return Promise.resolve({ kind: 'failed', message: this.analysisFailure });
      const promise = new Promise<PoolOutcome>((resolve) => this.batch.push({ file, text, resolve }));
      this.batchBytes += text.length;
      if (!this.analyseWithin) this.loadBatchAnalysis();
      else if (this.batch.length >= OFF_BATCH_FILES || this.batchBytes >= OFF_BATCH_BYTES) this.runBatch();
      return promise;
    }
    const promise = new Promise<PoolOutcome>((resolve) => this.held.push({ file, text, resolve }));
    this.heldBytes += text.length;
    const { inProcessFiles } = this.options;
    const big = this.seen > inProcessFiles || (inProcessFiles > 0 && (this.heldBytes > IN_PROCESS_MAX_BYTES || text.length > IN_PROCESS_MAX_FILE));
    if (this.poolAllowed() && big) this.startPool();
    return promise;
  }

  /** Loads what in-process analysis runs on, once; a failure to load is every such file's outcome. */
  private loadAnalysis(): Promise<void> {
    this.analysisLoaded ??= Promise.all([import('./analyze-file.ts'), import('../sql/index.ts').then((sql) => sql.loadSqlParser())]).then(
      ([module]) => {
        this.analyseWithin = module.analyseWithin;
      },
      (error: unknown) => {
        this.analysisFailure = `the analysis (front ends and SQL parser) did not load: ${(error as Error)?.stack ?? error}`;
      },
    );
    return this.analysisLoaded;
  }

  private loadBatchAnalysis(): void {
    if (this.analysisLoaded) return;
    void this.loadAnalysis().then(() => {
      if (this.batch.length > 0) this.runBatch();
    });
  }

  private runBatch(): void {
    const batch = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    this.inProcess(batch);
  }

  /** Reading is over: what is held is analysed in-process; with workers, the main thread joins them. */
  flush(): void {
    this.readingDone = true;
    // A batch whose analysis is still loading runs when it has loaded.
    if (this.batch.length > 0 && this.analyseWithin) this.runBatch();
    const held = this.held;
    this.held = [];
    if (this.pool) {
      // Large files isolated on a worker stay there: the main thread does not take them back.
      if (!this.options.isolateLargeFiles) void this.help();
      return;
    }
    if (held.length === 0) return;
    void this.loadAnalysis().then(() => {
      // A stopped analysis leaves the parser state untrusted: the rest goes to workers, where allowed.
      for (let i = 0; i < held.length; i += IN_PROCESS_BATCH) {
        if (this.tainted && this.poolAllowed()) {
          this.startPool(held.slice(i));
          return;
        }
        this.inProcess(held.slice(i, i + IN_PROCESS_BATCH));
      }
    });
  }

  private poolAllowed(): boolean {
    return this.options.concurrency !== 'off';
  }

  /** Analyses files on this thread, each within the time budget, and resolves them. */
  private inProcess(items: readonly Pending[]): void {
    const started = performance.now();
    try {
      this.runInProcess(items);
    } finally {
      this.inProcessMs += performance.now() - started;
    }
  }

  private runInProcess(items: readonly Pending[]): void {
    if (!this.analyseWithin) {
      for (const item of items) item.resolve({ kind: 'failed', message: this.analysisFailure ?? 'the analysis did not load' });
      return;
    }
    // Without workers, a stopped analysis is followed by a fresh parser: the files after it wait for it.
    if (this.reloading) {
      void this.reloading.then(() => this.inProcess(items));
      return;
    }
    // A language's front end loads when its first file is to be analysed here; files after it wait.
    if (this.frontEndsLoading) {
      void this.frontEndsLoading.then(() => this.inProcess(items));
      return;
    }
    const missing = frontEndsMissing(items.map((item) => item.file));
    if (missing.length > 0) {
      this.frontEndsLoading = loadFrontEnds(missing).then(
        () => {
          this.frontEndsLoading = undefined;
          this.inProcess(items);
        },
        (error: unknown) => {
          this.frontEndsLoading = undefined;
          for (const item of items) item.resolve({ kind: 'failed', message: `the front end did not load: ${(error as Error)?.stack ?? error}` });
        },
      );
      return;
    }
    const inProcessOnly = !this.poolAllowed();
    let run: ReturnType<typeof analyseWithin>;
    try {
      run = this.analyseWithin(this.options.timeBudget, items, this.config, { stopAtInterrupt: inProcessOnly });
    } catch (error) {
      // scanFileText never throws: this is the budget machinery failing. No file may stay pending.
      for (const item of items) item.resolve({ kind: 'failed', message: String((error as Error)?.stack ?? error) });
      return;
    }
    if (run.interrupted) this.tainted = true;
    for (const [i, outcome] of run.outcomes.entries()) items[i].resolve(outcome);
    if (inProcessOnly && run.interrupted) {
      const rest = items.slice(run.outcomes.length);
      this.reloading = import('../sql/index.ts')
        .then((sql) => sql.reloadSqlParser())
        .then(
          () => {
            this.reloading = undefined;
            if (rest.length > 0) this.inProcess(rest);
          },
          (error: unknown) => {
            this.reloading = undefined;
            for (const item of rest) item.resolve({ kind: 'failed', message: `the SQL parser could not be loaded again after a stopped analysis: ${(error as Error)?.message ?? error}` });
          },
        );
    }
  }

  private newPool(threads: number): AnalysisPool {
    return new AnalysisPool({ threads, timeBudget: this.options.timeBudget, memoryLimit: this.options.memoryLimit });
  }

  private startPool(extra: Pending[] = []): void {
    this.pool = this.newPool(this.options.concurrency === 'auto' || this.options.concurrency === 'off' ? autoThreads() : cappedThreads(this.options.concurrency));
    const held = [...this.held, ...extra];
    this.held = [];
    for (const item of held) this.enqueue(item);
    if (this.readingDone) void this.help();
  }

  private enqueue(item: Pending): void {
    this.queue.push(item);
    this.pump();
  }

  /** Hands queued files to free workers, a batch at a time (the pool runs one task per thread at a time). */
  private pump(): void {
    const pool = this.pool!;
    while (this.inFlight < pool.threads && this.queue.length > 0) {
      const batch = this.takeBatch();
      this.inFlight++;
      pool.analyzeBatch(batch.map(({ file, text }) => ({ file, text })), this.config).then(
        (outcomes) => {
          this.inFlight--;
          for (const [i, item] of batch.entries()) item.resolve(outcomes[i]);
          this.pump();
        },
        () => {
          // The workers could not start (a platform without threads, a broken install): analyse here.
          this.inFlight--;
          this.queue.unshift(...batch);
          this.tainted = false;
          void this.help(true);
        },
      );
    }
  }

  /** The next files for a worker: up to WORKER_BATCH_FILES of them or WORKER_BATCH_BYTES, at least one. */
  private takeBatch(): Pending[] {
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && count < WORKER_BATCH_FILES && (count === 0 || bytes + this.queue[count].text.length <= WORKER_BATCH_BYTES)) {
      bytes += this.queue[count].text.length;
      count++;
    }
    return this.queue.splice(0, count);
  }

  /** After reading (or when the workers cannot run), the main thread takes files from the queue too. */
  private async help(always = false): Promise<void> {
    if (this.helping) return;
    this.helping = true;
    try {
      await this.loadAnalysis();
      while (this.queue.length > 0 && (always || !this.tainted)) {
        // A few at a time, letting worker results in between so they take the next files.
        this.inProcess(this.queue.splice(0, HELP_BATCH));
        await (this.frontEndsLoading ?? new Promise((resolve) => setImmediate(resolve)));
      }
    } finally {
      this.helping = false;
    }
  }

  async destroy(): Promise<void> {
    await Promise.all([this.pool?.destroy(), this.deepPool?.destroy()]);
  }
}
