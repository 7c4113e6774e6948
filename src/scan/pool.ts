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

/** Worker threads for `--concurrency auto`: the available cores, at most 4 (each worker holds its own parsers). */
export function autoThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
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
  /** How long a fresh worker took to start: added to the budget of a task that may land on one. */
  private startup = 0;
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private destroyed = false;

  constructor(private readonly options: PoolOptions) {
    const started = performance.now();
    this.pool = new Tinypool({
      filename: workerFilename(),
      minThreads: options.threads,
      maxThreads: options.threads,
      // Inherited flags (a V8 heap size, --test) are not all valid in workers; the workers need none.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.memoryLimit },
      idleTimeout: 1000,
    });
    const warmups = Array.from({ length: options.threads }, () => this.pool.run({ kind: 'warmup' } satisfies WorkerTask));
    this.ready = Promise.all(warmups).then(() => {
      this.startup = performance.now() - started;
    });
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Analyses one file in a worker; resolves (never rejects) with what happened. */
  async analyze(file: string, text: string, config: AnalysisConfig): Promise<PoolOutcome> {
    await this.ready;
    await this.slot();
    try {
      return await this.runWithBudget({ kind: 'analyze', file, text, config });
    } finally {
      this.release();
    }
  }

  private async runWithBudget(task: WorkerTask): Promise<PoolOutcome> {
    const { timeBudget } = this.options;
    const controller = timeBudget > 0 ? new AbortController() : undefined;
    let timedOut = false;
    const timer = controller
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeBudget + this.startup)
      : undefined;
    try {
      const analysis = (await this.pool.run(task, { signal: controller?.signal ?? null })) as FileAnalysis;
      return { kind: 'done', analysis };
    } catch (error) {
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
    await this.pool.destroy();
  }
}
