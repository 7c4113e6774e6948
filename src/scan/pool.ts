// Analysis across worker threads (tinypool), one file per task, with a time
// budget and a memory limit per file: analysis is synchronous wasm and JS, so
// a file over its budget is stopped by terminating its worker (the pool
// starts a fresh one) and reported as skipped; the scan goes on.
import { availableParallelism } from 'node:os';
import Tinypool from 'tinypool';
import type { AnalysisConfig, FileAnalysis } from './analyze-file.ts';
import type { WorkerTask } from './worker.ts';

export interface PoolOptions {
  threads: number;
  /** Per-file budget in ms; 0 for none. */
  timeBudget: number;
  /** Old-generation heap limit of each worker, in MB. */
  memoryLimit: number;
}

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
  private readonly pool: Tinypool;
  private readonly ready: Promise<void>;
  /** Rejects when a worker dies outside a task (it could not start): the scan then analyses in-process. */
  private readonly failure: Promise<never>;
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private destroyed = false;
  private broken = false;

  constructor(private readonly options: PoolOptions) {
    this.pool = new Tinypool({
      filename: workerFilename(),
      minThreads: options.threads,
      maxThreads: options.threads,
      // Inherited flags (a V8 heap size, --test) are not all valid in workers; the workers need none.
      execArgv: [],
      // A smaller young generation than V8's default: some 50 MB less per worker on a large scan, for
      // some 5% more CPU (measured on the bench tree).
      resourceLimits: { maxOldGenerationSizeMb: options.memoryLimit, maxYoungGenerationSizeMb: 16 },
      idleTimeout: 1000,
    });
    let fail: (error: unknown) => void = () => undefined;
    this.failure = new Promise<never>((_, reject) => (fail = reject));
    this.failure.catch(() => undefined);
    // Tinypool reports a worker that died without a task (at start-up: too small a heap, a broken
    // install) here; after a failed start it starts no other, and queued tasks would wait forever.
    this.pool.on('error', (error: unknown) => {
      this.broken = true;
      fail(error);
    });
    const warmups = Array.from({ length: options.threads }, () => this.pool.run({ kind: 'warmup' } satisfies WorkerTask));
    this.ready = Promise.race([Promise.all(warmups).then(() => undefined), this.failure]).catch((error: unknown) => {
      this.broken = true;
      throw error;
    });
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Analyses one file in a worker; resolves with what happened, rejects only when the workers cannot run at all. */
  async analyze(file: string, text: string, config: AnalysisConfig): Promise<PoolOutcome> {
    await this.ready;
    await this.slot();
    try {
      return await this.runWithBudget({ kind: 'analyze', file, text, config });
    } finally {
      this.release();
    }
  }

  private async runWithBudget(task: Extract<WorkerTask, { kind: 'analyze' }>): Promise<PoolOutcome> {
    const { timeBudget } = this.options;
    const controller = timeBudget > 0 ? new AbortController() : undefined;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    if (controller) {
      // The budget runs from when a worker takes the task (it writes the time), not from the queue:
      // a replacement worker still starting is not the file's time.
      task.started = new SharedArrayBuffer(8);
      const started = new BigInt64Array(task.started);
      const check = () => {
        const at = Number(Atomics.load(started, 0));
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
      const analysis = (await Promise.race([this.pool.run(task, { signal: controller?.signal ?? null }), this.failure])) as FileAnalysis;
      return { kind: 'done', analysis };
    } catch (error) {
      if (this.broken) throw error;
      if (timedOut) return { kind: 'timeout' };
      const code = (error as NodeJS.ErrnoException)?.code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'memory' };
      return { kind: 'failed', message: String((error as Error)?.stack ?? error) };
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
      await Promise.all(this.pool.threads.map((thread) => thread.terminate().catch(() => undefined)));
      return;
    }
    await this.pool.destroy();
  }
}
