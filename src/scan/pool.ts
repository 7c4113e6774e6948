// Analysis across worker threads (tinypool), a batch of files per task, with a
// time budget and a memory limit per file: analysis is synchronous wasm and JS, so
// a file over its budget is stopped by terminating its worker (the pool
// starts a fresh one) and reported as skipped; the scan goes on.
import { availableParallelism } from 'node:os';
import type Tinypool from 'tinypool';
import type { AnalysisConfig, FileAnalysis } from './analysis.ts';
import type { WorkerTask } from './worker.ts';
import { importModule } from '../import-module.ts';

export interface PoolOptions {
  threads: number;
  /** Per-file budget in ms; 0 for none. */
  timeBudget: number;
  /** Old-generation heap limit of each worker, in MB. */
  memoryLimit: number;
  /** The workers' stack, in MB (Node's default for a worker is 4). */
  stackSizeMb?: number;
}

export interface PoolFile {
  file: string;
  text: string;
}

/** A batch ran to its end, or was stopped on file `at`. */
type BatchRun = { kind: 'done'; analyses: FileAnalysis[] } | { kind: 'stopped'; at: number; outcome: Exclude<PoolOutcome, { kind: 'done' }> };

export type PoolOutcome =
  | { kind: 'done'; analysis: FileAnalysis }
  | { kind: 'timeout' }
  | { kind: 'memory' }
  | { kind: 'failed'; message: string };

/**
 * Worker threads for `--concurrency auto`: one core less than there are (the main thread reads and
 * prefilters meanwhile, and analyses from the same queue once reading is over), at least 1, at most 4
 * (each worker holds its own parsers).
 */
export function autoThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * Worker threads for `--concurrency <n>`: n, but no more than the machine has cores. Each worker
 * holds its own parsers (some 60 MB): `--concurrency 1000` started 1,011 threads and took 6 GB.
 */
export function cappedThreads(requested: number): number {
  return Math.max(1, Math.min(requested, availableParallelism()));
}

/**
 * Whether `--concurrency auto` starts workers at all: only with three cores or more. On the 2-core
 * machine, in-process analysis already keeps the second core busy with V8's background compiler
 * and garbage collector (about 1.5 cores of CPU time per second of wall time), and one worker next
 * to the main thread measured 17% slower on the fixtures (320 files), 5% slower on 6,000 files and
 * 3% faster on 21,000 (bench/scan-bench.ts's trees).
 */
export function autoUsesWorkers(): boolean {
  return availableParallelism() >= 3;
}

/** The worker module: compiled JS from dist/, or the TypeScript source through tsx when running from src/ (tests). */
function workerFilename(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  const worker = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url).href;
  if (!fromSource) return worker;
  // Node 20 does not run --import hooks in worker threads: register tsx in the worker first.
  const tsx = import.meta.resolve('tsx/esm/api');
  const shim = `const { register } = await import(${JSON.stringify(tsx)}); register(); export default (await import(${JSON.stringify(worker)})).default;`;
  return `data:text/javascript,${encodeURIComponent(shim)}`;
}

export class AnalysisPool {
  private pool: Tinypool | undefined;
  private readonly ready: Promise<void>;
  /** Rejects when a worker dies outside a task (it could not start): the scan then analyses in-process. */
  private readonly failure: Promise<never>;
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private destroyed = false;
  private broken = false;

  constructor(private readonly options: PoolOptions) {
    let fail: (error: unknown) => void = () => undefined;
    this.failure = new Promise<never>((_, reject) => (fail = reject));
    this.failure.catch(() => undefined);
    this.ready = this.start(fail).catch((error: unknown) => {
      this.broken = true;
      throw error;
    });
  }

  /** Tinypool is loaded with the first pool: a scan that stays in-process never loads it. */
  private async start(fail: (error: unknown) => void): Promise<void> {
    const { default: TinypoolClass } = await importModule<{ default: typeof Tinypool }>('tinypool');
    const { threads, memoryLimit } = this.options;
    this.pool = new TinypoolClass({
      filename: workerFilename(),
      minThreads: threads,
      maxThreads: threads,
      // Inherited flags (a V8 heap size, --test) are not all valid in workers; the workers need none.
      execArgv: [],
      // A smaller young generation than V8's default: some 50 MB less per worker on a large scan, for
      // some 5% more CPU (measured on the bench tree).
      resourceLimits: { maxOldGenerationSizeMb: memoryLimit, maxYoungGenerationSizeMb: 16, ...(this.options.stackSizeMb ? { stackSizeMb: this.options.stackSizeMb } : {}) },
      idleTimeout: 1000,
    });
    // Tinypool reports a worker that died without a task (at start-up: too small a heap, a broken
    // install) here; after a failed start it starts no other, and queued tasks would wait forever.
    this.pool.on('error', (error: unknown) => {
      this.broken = true;
      fail(error);
    });
    const warmups = Array.from({ length: threads }, () => this.pool!.run({ kind: 'warmup' } satisfies WorkerTask));
    await Promise.race([Promise.all(warmups), this.failure]);
  }

  get threads(): number {
    return this.options.threads;
  }

  /**
   * Analyses files one after another in one worker task: one message each way for the batch, so a
   * worker is not left waiting on a main thread busy reading between two small files. Resolves with
   * one outcome per file, in order; rejects only when the workers cannot run at all. Each file
   * still has its own budget: when one is stopped (time, memory, a crash), it alone gets that
   * outcome, and the others, whose results were lost with the worker, are analysed again.
   */
  async analyzeBatch(files: readonly PoolFile[], config: AnalysisConfig): Promise<PoolOutcome[]> {
    await this.ready;
    await this.slot();
    let run: BatchRun;
    try {
      run = await this.runWithBudget({ kind: 'analyze', files, config });
    } finally {
      this.release();
    }
    if (run.kind === 'done') return run.analyses.map((analysis) => ({ kind: 'done', analysis }));
    const outcomes: PoolOutcome[] = new Array(files.length);
    outcomes[run.at] = run.outcome;
    const rest = files.filter((_, i) => i !== run.at);
    const again = rest.length > 0 ? await this.analyzeBatch(rest, config) : [];
    let k = 0;
    for (let i = 0; i < files.length; i++) if (i !== run.at) outcomes[i] = again[k++];
    return outcomes;
  }

  private async runWithBudget(task: Extract<WorkerTask, { kind: 'analyze' }>): Promise<BatchRun> {
    const { timeBudget } = this.options;
    const controller = timeBudget > 0 ? new AbortController() : undefined;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // The worker writes which file it is on and when it took it (worker.ts): a budget runs from
    // there, not from the queue (a replacement worker still starting is not the file's time), and a
    // stopped batch knows whose time ran out.
    task.progress = new SharedArrayBuffer(16);
    const progress = new BigInt64Array(task.progress);
    const current = () => {
      for (;;) {
        const index = Atomics.load(progress, 1);
        const at = Number(Atomics.load(progress, 0));
        if (Atomics.load(progress, 1) === index) return { index: Number(index), at };
      }
    };
    if (controller) {
      const check = () => {
        const { at } = current();
        const left = at === 0 ? timeBudget : at + timeBudget - Date.now();
        if (at !== 0 && left <= 0) {
          timedOut = true;
          controller.abort();
        } else {
          timer = setTimeout(check, Math.max(1, left));
        }
      };
      timer = setTimeout(check, timeBudget);
    }
    try {
      const analyses = (await Promise.race([this.pool!.run(task, { signal: controller?.signal ?? null }), this.failure])) as FileAnalysis[];
      return { kind: 'done', analyses };
    } catch (error) {
      if (this.broken) throw error;
      const at = Math.min(Math.max(0, current().index), task.files.length - 1);
      if (timedOut) return { kind: 'stopped', at, outcome: { kind: 'timeout' } };
      const code = (error as NodeJS.ErrnoException)?.code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'stopped', at, outcome: { kind: 'memory' } };
      return { kind: 'stopped', at, outcome: { kind: 'failed', message: String((error as Error)?.stack ?? error) } };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** At most one task per thread is in flight, so a task's budget starts when a worker takes it. */
  private slot(): Promise<void> {
    if (this.running < this.options.threads) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.ready.catch(() => undefined);
    if (this.broken) {
      // Tinypool's destroy() trips over a worker that died at start-up (an uncaught TypeError from
      // its exit listener): end the ones still running directly.
      await Promise.all((this.pool?.threads ?? []).map((thread) => thread.terminate().catch(() => undefined)));
      return;
    }
    await this.pool?.destroy();
  }
}
