// The per-file time budget for analysis on the main thread. Analysis is
// synchronous JS and wasm; node:vm's timeout is the one way Node stops
// synchronous code in its own thread (a watchdog thread terminates the
// running script, the functions it called included). A file over its
// budget costs its own analysis, never the scan. Workers are stopped by
// terminating the worker instead (pool.ts).
import vm from 'node:vm';

const context = vm.createContext({ task: undefined as (() => unknown) | undefined });
const script = new vm.Script('task()', { filename: 'pgq-audit-budget' });

/** Runs `task` for at most `budgetMs` (0: no limit). `done: false` when it was stopped. */
export function runWithin<T>(budgetMs: number, task: () => T): { done: true; value: T } | { done: false } {
  if (!(budgetMs > 0)) return { done: true, value: task() };
  context.task = task;
  try {
    return { done: true, value: script.runInContext(context, { timeout: budgetMs }) as T };
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { done: false };
    throw error;
  } finally {
    context.task = undefined;
  }
}
