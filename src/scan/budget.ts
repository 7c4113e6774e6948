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
  // Node reports a timeout when its watchdog fired, even if the task had returned by then (a thread
  // descheduled on a busy machine): what the task returned is kept and counts.
  let finished: { value: T } | undefined;
  context.task = () => {
    finished = { value: task() };
    return finished.value;
  };
  try {
    return { done: true, value: script.runInContext(context, { timeout: Math.max(1, Math.ceil(budgetMs)) }) as T };
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return finished ? { done: true, value: finished.value } : { done: false };
    throw error;
  } finally {
    context.task = undefined;
  }
}

export type BudgetedResult<T> = { done: true; value: T } | { done: false };

/**
 * Runs `tasks` one after another, each within `budgetMs` of its own time, under as few watchdogs
 * as possible (each costs a thread start, some 0.1-4 ms on a busy machine: one per file was most of
 * a small scan). A batch hands over to a fresh watchdog before starting a task once half its
 * allowance is gone; a task caught by a watchdog it did not start under is run again with what is
 * left of its own budget, so no task gets more than its budget in all, and one that uses it up is
 * not done. `interrupted` tells whether any task was stopped mid-way. With `stopAtInterrupt`, the
 * run ends at the first task stopped mid-way, and `results` holds only the tasks before it (and it,
 * when its own budget ran out): the rest are the caller's to run again.
 */
export function runEachWithin<T>(
  budgetMs: number,
  tasks: readonly (() => T)[],
  { stopAtInterrupt = false }: { stopAtInterrupt?: boolean } = {},
): { results: BudgetedResult<T>[]; interrupted: boolean } {
  const results: BudgetedResult<T>[] = new Array(tasks.length);
  let interrupted = false;
  if (!(budgetMs > 0)) {
    for (const [i, task] of tasks.entries()) results[i] = { done: true, value: task() };
    return { results, interrupted };
  }
  let next = 0;
  /** Time task `next` already spent in batches that were stopped while it ran. */
  let spent = 0;
  while (next < tasks.length) {
    const first = next;
    const allowance = Math.ceil(budgetMs - spent);
    if (allowance < 1) {
      results[first] = { done: false };
      next = first + 1;
      spent = 0;
      continue;
    }
    const batchStart = performance.now();
    let current = first;
    let currentStart = batchStart;
    const run = runWithin(allowance, () => {
      for (let k = first; k < tasks.length; k++) {
        if (k > first && performance.now() - batchStart > allowance / 2) return;
        current = k;
        currentStart = performance.now();
        results[k] = { done: true, value: tasks[k]() };
        next = k + 1;
      }
    });
    if (run.done) {
      spent = 0;
      continue;
    }
    interrupted = true;
    if (current === first) {
      // The watchdog it started under fired: its budget is used up.
      results[current] = { done: false };
      next = current + 1;
      spent = 0;
      // The tasks after it are left for the caller to run on a state it trusts (a fresh parser).
      if (stopAtInterrupt) return { results: results.slice(0, next), interrupted };
    } else if (stopAtInterrupt) {
      // Stopped mid-way under another task's watchdog: it runs again from the start, after the caller's reset.
      return { results: results.slice(0, current), interrupted };
    } else {
      next = current;
      spent = performance.now() - currentStart;
    }
  }
  return { results, interrupted };
}
